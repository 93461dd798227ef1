"""Deep refs going stale, through the real L2 tool code on a fake bridge: every `StaleReason`,
and in none of them is a DOM.* or Input.* write sent. A current ref clicks normally; a current
ref whose element was renamed or given another role since the read gets no input."""

from __future__ import annotations

from typing import Any

import pytest

from host.browser.gateway import BrowserGateway
from host.browser.l2 import tools as l2_tools
from host.browser.l2.deep_refs import DeepNode, DeepRefMap
from host.browser.l2.landing import resolve_landing
from host.browser.target import TabTarget
from host.cdp.manager import CdpManager
from host.tools.call import Target, ToolCall
from host.tools.catalog import lookup
from host.tools.failure import ToolFailure
from host.tools.params import decode
from tests.support.fake_cdp import FakeTransport
from tests.support.fake_extension import FakeExtension

TAB = 1


class Page:
    """What the fake browser answers for one page with one button."""

    def __init__(self, fake: FakeTransport):
        self.loader = "L1"
        self.connected = True
        self.on_check: Any = None
        self.ax: dict[int, tuple[str, str]] = {}  # backend id -> (role, name) now; else as minted
        fake.handlers.update({
            "Accessibility.getPartialAXTree": self._ax,
            "Page.getFrameTree": lambda p, s: {"frameTree": {"frame": {"id": "F", "loaderId": self.loader}}},
            "DOM.resolveNode": lambda p, s: {"object": {"objectId": f"o{p['backendNodeId']}"}},
            "Runtime.callFunctionOn": self._call,
            "DOM.getContentQuads": lambda p, s: {"quads": [[10, 10, 50, 10, 50, 30, 10, 30]]},
            "DOM.getNodeForLocation": lambda p, s: {"backendNodeId": 42},
            "Page.getLayoutMetrics": lambda p, s: {"cssLayoutViewport": {"clientWidth": 800, "clientHeight": 600}},
        })

    def _ax(self, params: dict[str, Any], session: str | None) -> Any:
        backend = params["backendNodeId"]
        role, name = self.ax.get(backend, ("button", f"Button {backend - 41}"))
        return {"nodes": [{"nodeId": "1", "backendDOMNodeId": backend, "role": {"type": "role", "value": role},
                           "name": {"type": "computedString", "value": name}}]}

    def _call(self, params: dict[str, Any], session: str | None) -> Any:
        if self.on_check is not None:
            self.on_check()
        return {"result": {"value": self.connected}}


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def gateway(fake) -> BrowserGateway:
    gateway = BrowserGateway(lambda: FakeExtension(), None)  # type: ignore[arg-type]
    gateway.cdp = CdpManager(fake)
    gateway.deep_refs = DeepRefMap(gateway.cdp.epoch)
    return gateway


def mint(gateway: BrowserGateway, count: int = 1) -> list[str]:
    generation = gateway.deep_refs.begin(TAB, gateway.cdp.epoch_of(TAB))
    refs = []
    for n in range(1, count + 1):
        ref = f"{generation.prefix}{n}"
        generation.nodes[ref] = DeepNode(ref=ref, backend_node_id=41 + n, session_id=None, frame_id="F", loader_id="L1",
                                         document_backend_id=1, role="button", name=f"Button {n}")
        refs.append(ref)
    gateway.deep_refs.commit(TAB, generation)
    return refs


async def click(gateway: BrowserGateway, ref: str) -> Any:
    spec = lookup("click_trusted")
    assert spec is not None
    params = decode(spec, {"element": "a button", "ref": ref})
    call = ToolCall(spec, params, "t")
    # Resolved as the service resolves it: the frame the ref lands in, then the run.
    tab = TabTarget(TAB, "http://site.test/a", "http://site.test")
    landing = await resolve_landing(call, gateway, tab)
    call = call.resolved(Target(tab_id=TAB, url=tab.url, origin=landing.origin, handle=landing))
    return await l2_tools.click_trusted(call, gateway)


async def stale_reason(gateway: BrowserGateway, ref: str) -> str:
    with pytest.raises(ToolFailure) as caught:
        await click(gateway, ref)
    assert caught.value.code == "stale_ref" and caught.value.details["dispatched"] is False
    return caught.value.details["reason"]


async def test_a_current_ref_clicks(gateway, fake):
    Page(fake)
    (ref,) = mint(gateway)
    result = await click(gateway, ref)
    assert result.ok and result.details["evidence"]["trusted"] is True
    assert fake.writes()[0] == "DOM.scrollIntoViewIfNeeded"
    assert [p["type"] for *_, m, p in fake.sent if m == "Input.dispatchMouseEvent"] == ["mouseMoved", "mousePressed",
                                                                                         "mouseReleased"]
    assert {p["x"] for *_, m, p in fake.sent if m == "Input.dispatchMouseEvent"} == {30}


async def test_the_page_changed_since_the_read(gateway, fake):
    Page(fake)
    (ref,) = mint(gateway)
    fake.event(TAB, "Page.frameStartedNavigating", {"frameId": "F"})
    assert await stale_reason(gateway, ref) == "ref_epoch_mismatch"
    assert fake.writes() == []


async def test_the_debugger_detached_since_the_read(gateway, fake):
    Page(fake)
    (ref,) = mint(gateway)
    fake.detach(TAB, "target_closed")
    assert await stale_reason(gateway, ref) == "ref_epoch_mismatch"
    assert fake.writes() == []


async def test_another_host_run_minted_it(gateway, fake):
    Page(fake)
    mint(gateway)
    assert await stale_reason(gateway, "c0other_2_1_1") == "ref_epoch_mismatch"
    assert fake.writes() == []


async def test_a_newer_read_replaced_it_or_it_never_existed(gateway, fake):
    Page(fake)
    (old,) = mint(gateway)
    (new,) = mint(gateway)
    assert await stale_reason(gateway, old) == "ref_invalidated"
    assert await stale_reason(gateway, new.rsplit("_", 1)[0] + "_77") == "ref_not_found"
    assert fake.writes() == []


async def test_its_frame_holds_another_document(gateway, fake):
    page = Page(fake)
    (ref,) = mint(gateway)
    page.loader = "L2"
    assert await stale_reason(gateway, ref) == "document_identity_changed"
    assert fake.writes() == []


async def test_its_element_left_the_page(gateway, fake):
    page = Page(fake)
    (ref,) = mint(gateway)
    page.connected = False
    assert await stale_reason(gateway, ref) == "ref_invalidated"
    assert fake.writes() == []


async def test_the_page_changed_while_the_action_was_prepared(gateway, fake):
    page = Page(fake)
    (ref,) = mint(gateway)
    # The frame navigates while the identity is being checked (between preparation and dispatch).
    page.on_check = lambda: fake.event(TAB, "Page.frameNavigated", {"frame": {"id": "F"}})
    assert await stale_reason(gateway, ref) == "lifecycle_changed_during_preparation"
    assert fake.writes() == []


async def test_the_check_at_prepare_time_names_the_same_reasons(gateway, fake):
    (old,) = mint(gateway)
    (new,) = mint(gateway)
    known = gateway.deep_refs
    for ref, reason in ((old, "ref_invalidated"), ("c0other_1_1_1", "ref_epoch_mismatch"),
                        (new.rsplit("_", 1)[0] + "_9", "ref_not_found")):
        with pytest.raises(ToolFailure) as caught:
            known.check_known(TAB, ref)
        assert caught.value.details["reason"] == reason
    known.check_known(TAB, new)
    assert fake.sent == []


def inputs(fake: FakeTransport) -> list[str]:
    return [m for *_, m, _ in fake.sent if m.startswith("Input.")]


@pytest.mark.parametrize("now", [("button", "Delete account"), ("link", "Button 1")])
async def test_an_element_renamed_or_repurposed_since_the_read_gets_no_input(gateway, fake, now):
    page = Page(fake)
    (ref,) = mint(gateway)
    page.ax[42] = now
    with pytest.raises(ToolFailure) as caught:
        await click(gateway, ref)
    assert caught.value.code == "target_changed" and caught.value.details["dispatched"] is False
    assert caught.value.details["expected"] == {"role": "button", "name": "Button 1"}
    assert caught.value.details["found"] == {"role": now[0], "name": now[1]}
    assert "it was button \"Button 1\"" in caught.value.message
    assert inputs(fake) == []


async def test_an_element_found_by_its_listeners_is_checked_by_name_only(gateway, fake):
    page = Page(fake)
    generation = gateway.deep_refs.begin(TAB, gateway.cdp.epoch_of(TAB))
    ref = f"{generation.prefix}1"
    generation.nodes[ref] = DeepNode(ref=ref, backend_node_id=42, session_id=None, frame_id="F", loader_id="L1",
                                     document_backend_id=1, role="clickable", name="Open", source="listener")
    gateway.deep_refs.commit(TAB, generation)
    page.ax[42] = ("generic", "Open")  # "clickable" is the deep read's word, not the page's role
    assert (await click(gateway, ref)).ok
    page.ax[42] = ("generic", "Close account")
    with pytest.raises(ToolFailure) as caught:
        await click(gateway, ref)
    assert caught.value.code == "target_changed"
    assert len(inputs(fake)) == 3  # the first click's three events, none of the second
