"""Browser events applied to the gateway's state."""

from __future__ import annotations

import pytest

from host.browser.events import handle_event
from host.browser.gateway import BrowserGateway
from host.browser.wire import SnapshotRef
from host.gatekeeper.service import Gatekeeper
from protocol.messages import BrowserEvent


@pytest.fixture
def gateway(tmp_path, monkeypatch) -> BrowserGateway:
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    gatekeeper = Gatekeeper(None, user_policy=tmp_path / "u.json", managed_policy=tmp_path / "m.json")
    gw = BrowserGateway(lambda: None, gatekeeper)
    gw.refs.record(1, "doc", 1, [SnapshotRef(ref="sdoc_1_1", role="button")], "text")
    return gw


def event(name: str, **data) -> BrowserEvent:
    return BrowserEvent(name=name, data=data)


def test_a_closed_tab_ends_its_routes_and_refs(gateway):
    gateway.routes.bind("t", 1)
    handle_event(gateway, event("tabs.removed", tabId=1, windowClosing=False))
    assert gateway.routes.default("t").kind == "closed"
    assert gateway.refs.lookup(1, "sdoc_1_1") is None


def test_a_replaced_tab_carries_routes_and_refs(gateway):
    gateway.routes.bind("t", 1)
    handle_event(gateway, event("tabs.replaced", addedTabId=5, removedTabId=1))
    assert gateway.routes.default("t").tab_id == 5
    assert gateway.refs.lookup(5, "sdoc_1_1") is not None


def test_a_new_document_forgets_the_refs(gateway):
    handle_event(gateway, event("tabs.updated", tabId=1, url="http://x.test/", status="complete"))
    assert gateway.refs.lookup(1, "sdoc_1_1") is not None
    handle_event(gateway, event("tabs.updated", tabId=1, url="http://x.test/next", status="loading"))
    assert gateway.refs.lookup(1, "sdoc_1_1") is None


def test_manual_input_pauses_only_the_threads_driving_the_tab(gateway):
    gateway.routes.touch("writer", 1, wrote=True)
    gateway.routes.touch("reader", 1, wrote=False)
    seen = []
    gateway.takeover.listen(lambda thread, info: seen.append((thread, info["kind"])))
    handle_event(gateway, event("manual_input", tabId=1, kind="keydown", url="http://x.test/"))
    assert seen == [("writer", "keydown")]
    assert [p["threadId"] for p in gateway.takeover.paused()] == ["writer"]


def test_revoked_site_access_drops_session_grants(gateway):
    gateway.gatekeeper.bind_browser_session("session-1234")
    gateway.gatekeeper.grants.grant("t", "click", "http://x.test")
    assert gateway.gatekeeper.grants.for_thread("t")
    handle_event(gateway, event("permissions.removed", origins=["http://x.test/*"], permissions=[]))
    assert not gateway.gatekeeper.grants.for_thread("t")


@pytest.mark.parametrize("name,data", [("tabs.removed", {"tabId": "one"}), ("manual_input", {"tabId": -3}),
                                       ("tabs.replaced", {"addedTabId": 2}), ("something.else", {"x": 1})])
def test_malformed_or_unknown_events_change_nothing(gateway, name, data):
    gateway.routes.bind("t", 1)
    handle_event(gateway, BrowserEvent(name=name, data=data))
    assert gateway.routes.default("t").tab_id == 1
    assert gateway.refs.lookup(1, "sdoc_1_1") is not None
    assert gateway.takeover.paused() == []
