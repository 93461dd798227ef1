"""A read's judgements and audit rows on the one authorisation path, with a real SQLite audit log:
a read on a tab its thread already drives is judged once (nothing changed between the phases),
its decision row is in the log before the read is sent and its outcome after; a row the log
cannot take refuses the read before anything reaches the page; a change of the rules between the
phases judges it again; a write keeps both judgements, their rows written before it is sent."""

from __future__ import annotations

import pytest

from host.browser.gateway import BrowserGateway
from host.browser.service import BrowserTools
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from host.store import Store
from host.store.db import StoreError
from protocol.messages import ContentCall
from tests.support.fake_extension import FakeExtension


@pytest.fixture
def fake() -> FakeExtension:
    return FakeExtension()


@pytest.fixture
def gatekeeper(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    store = Store(tmp_path / "db.sqlite3")
    keeper = Gatekeeper(store, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    yield keeper
    store.close()


@pytest.fixture
def authorizer(fake, gatekeeper) -> Authorizer:
    gateway = BrowserGateway(lambda: fake, gatekeeper)
    gateway.routes.bind("t", 1)  # the thread drives tab 1: its calls are held and resolved once
    return Authorizer(Router({"browser": BrowserTools(gateway)}), gatekeeper)


def rows(gatekeeper) -> list[tuple[str, str]]:
    """(kind, tool) of every row in the log, oldest first."""
    return [(row["kind"], row["tool"]) for row in gatekeeper.audit.iter_rows()]


def watch_sends(fake, gatekeeper) -> list[list[tuple[str, str]]]:
    """The log's rows at the moment each content call was sent."""
    seen: list[list[tuple[str, str]]] = []
    begin = fake.begin

    def sending(build, timeout=None):
        def built(request_id):
            message = build(request_id)
            if isinstance(message, ContentCall):
                seen.append(rows(gatekeeper))
            return message
        return begin(built, timeout)

    fake.begin = sending  # type: ignore[method-assign]
    return seen


def count_checks(gatekeeper, monkeypatch, between=None) -> list[str]:
    """The tools the gatekeeper judges, one entry per judgement; `between()` runs after each."""
    judged: list[str] = []
    check = gatekeeper.check

    def counted(request):
        judged.append(request.tool)
        decision = check(request)
        if between is not None:
            between()
        return decision

    monkeypatch.setattr(gatekeeper, "check", counted)
    return judged


async def test_a_read_on_a_driven_tab_is_judged_once_its_row_before_it_goes(authorizer, fake, gatekeeper, monkeypatch):
    await call_directly(authorizer, "read_page", {}, thread_id="t")  # the tab is driven from here on
    before = len(rows(gatekeeper))
    sent = watch_sends(fake, gatekeeper)
    judged = count_checks(gatekeeper, monkeypatch)
    result = await call_directly(authorizer, "read_page", {}, thread_id="t")
    assert result.ok, result
    assert judged == ["read_page"]  # nothing changed between the two phases
    assert len(sent) == 1 and sent[0][before:] == [("decision", "read_page")]
    assert rows(gatekeeper)[before:] == [("decision", "read_page"), ("outcome", "read_page")]
    assert gatekeeper.audit.verify().ok


async def test_a_rule_change_between_the_phases_judges_the_read_again(authorizer, fake, gatekeeper, monkeypatch):
    await call_directly(authorizer, "read_page", {}, thread_id="t")
    changed = []

    def change_once():
        if not changed:
            changed.append(gatekeeper.add_rule({"tool": "scroll", "origin": "*", "verdict": "ask"}))

    judged = count_checks(gatekeeper, monkeypatch, between=change_once)
    result = await call_directly(authorizer, "read_page", {}, thread_id="t")
    assert result.ok, result
    assert judged == ["read_page", "read_page"]


async def test_a_read_whose_row_cannot_be_written_is_refused_before_it_is_sent(authorizer, fake, gatekeeper):
    await call_directly(authorizer, "read_page", {}, thread_id="t")
    log = gatekeeper.audit
    append = log.append

    def full_disk(**row):
        if row.get("kind") == "decision":
            raise StoreError("database or disk is full")
        return append(**row)

    log.append = full_disk  # type: ignore[method-assign]
    sent = watch_sends(fake, gatekeeper)
    result = await call_directly(authorizer, "read_page", {}, thread_id="t")
    assert not result.ok and result.error.code == "storage_unavailable", result
    assert result.error.details["dispatched"] is False and sent == []  # nothing reached the page


async def test_a_write_keeps_both_judgements_and_its_rows_before_it_is_sent(authorizer, fake, gatekeeper, monkeypatch):
    await call_directly(authorizer, "read_page", {}, thread_id="t")
    before = len(rows(gatekeeper))
    sent = watch_sends(fake, gatekeeper)
    judged = count_checks(gatekeeper, monkeypatch)
    result = await call_directly(authorizer, "click", {"element": "Save", "ref": "sdoc_1_1"}, thread_id="t",
                                 policy="auto")
    assert result.ok, result
    assert judged == ["click", "click"]
    assert sent and sent[0][before:] == [("decision", "click"), ("decision", "click")]
