"""Where an L2 write lands, through the real resolution and runner code on a fake debugger: a
shop page (http://site.test) with an in-process frame of another origin on its site
(http://pay.site.test), a srcdoc frame, and an out-of-process bank frame (https://bank.test).
The origin judged is the frame's; the runner sends nothing when the frame under a point or the
frame holding the focus is no longer the one judged."""

from __future__ import annotations

from typing import Any

import pytest

from host.browser.gateway import BrowserGateway
from host.browser.l2 import tools as l2_tools
from host.browser.l2.deep_refs import DeepNode, DeepRefMap
from host.browser.l2.frames import frame_origin
from host.browser.l2.landing import resolve_landing
from host.browser.service import BrowserTools
from host.browser.target import TabTarget
from host.cdp.errors import CdpCode, CdpError
from host.cdp.manager import CdpManager
from host.tools.call import Target, ToolCall
from host.tools.catalog import lookup
from host.tools.failure import ToolFailure
from host.tools.params import decode
from tests.support.fake_cdp import FakeTransport
from tests.support.fake_extension import FakeExtension

TAB = 1
SHOP, PAY, BANK = "http://site.test", "http://pay.site.test", "https://bank.test"
BANK_SESSION = "S-BANK"


def frame(frame_id: str, url: str, origin: str, parent: str | None = None) -> dict[str, Any]:
    info = {"id": frame_id, "url": url, "securityOrigin": origin, "loaderId": f"L-{frame_id}"}
    if parent:
        info["parentId"] = parent
    return info


class Page:
    """The fake browser's view of the shop page: frame trees per session, what is under each
    point, what each node is, and which document element holds the focus."""

    def __init__(self, fake: FakeTransport):
        self.trees: dict[str | None, dict[str, Any]] = {
            None: {"frame": frame("TOP", "http://site.test/a", SHOP), "childFrames": [
                {"frame": frame("PAYF", "http://pay.site.test/form", PAY, "TOP")},
                {"frame": frame("DOC", "about:srcdoc", "://", "TOP")}]},
            BANK_SESSION: {"frame": frame("BANK", "https://bank.test/pay", BANK, "TOP")},
        }
        # (session, rounded point) -> (backend node id, frame of that node)
        self.hits: dict[tuple[str | None, tuple[int, int]], tuple[int, str]] = {
            (None, (10, 10)): (100, "TOP"), (None, (10, 100)): (200, "PAYF"), (None, (10, 200)): (250, "DOC"),
            (None, (10, 300)): (300, "TOP"), (None, (200, 300)): (300, "TOP"),
            (BANK_SESSION, (10, 50)): (400, "BANK"), (BANK_SESSION, (200, 50)): (401, "BANK")}
        self.nodes: dict[int, dict[str, Any]] = {
            100: {"localName": "button"}, 200: {"localName": "input"}, 250: {"localName": "button"},
            300: {"localName": "iframe", "frameId": "BANK"}, 400: {"localName": "button"}, 401: {"localName": "div"}}
        self.focus = {None: None}  # session -> the frame owner its document's activeElement is (None: itself)
        self.focus_line = 'textbox "Card number" [ref=s1_1_1]'  # what our world reads of the focus after input
        fake.handlers.update({
            "Page.getFrameTree": lambda p, s: {"frameTree": self.trees[s]},
            "DOM.getNodeForLocation": self._hit,
            "DOM.describeNode": self._describe,
            "DOM.getBoxModel": lambda p, s: {"model": {"content": [0, 250, 400, 250, 400, 450, 0, 450]}},
            "Page.getLayoutMetrics": lambda p, s: {"cssLayoutViewport": {"clientWidth": 800, "clientHeight": 600}},
            "Page.createIsolatedWorld": lambda p, s: {"executionContextId": 7},
            "Runtime.evaluate": self._active,
            "Runtime.callFunctionOn": self._still_focused,
        })

    def _hit(self, params: dict[str, Any], session: str | None) -> Any:
        backend, frame_id = self.hits[(session, (params["x"], params["y"]))]
        return {"backendNodeId": backend, "frameId": frame_id}

    def _describe(self, params: dict[str, Any], session: str | None) -> Any:
        if "objectId" in params:
            return {"node": self.nodes[int(params["objectId"].removeprefix("node-"))]}
        return {"node": {"backendNodeId": params["backendNodeId"], **self.nodes[params["backendNodeId"]]}}

    def _active(self, params: dict[str, Any], session: str | None) -> Any:
        owner = self.focus.get(session)
        expression = params.get("expression", "")
        if "focusLine" in expression:  # the flush after trusted input, in our isolated world
            return {"result": {"type": "object", "value": {"focus": self.focus_line, "changed": False}}}
        # The focused element: the frame owner holding the focus, else a field of the document.
        if owner:
            return {"result": {"type": "object", "subtype": "node", "className": "HTMLIFrameElement",
                               "objectId": f"node-{owner}"}}
        return {"result": {"type": "object", "subtype": "node", "className": "HTMLInputElement",
                           "objectId": f"field-{session}"}}

    def _still_focused(self, params: dict[str, Any], session: str | None) -> Any:
        # The look of a batch, on the element the judgement found: is the focus still there?
        return {"result": {"type": "boolean", "value": self.focus.get(session) is None}}


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def page(fake) -> Page:
    return Page(fake)


@pytest.fixture
async def gateway(fake, page) -> BrowserGateway:
    extension = FakeExtension()
    gateway = BrowserGateway(lambda: extension, None)  # type: ignore[arg-type]
    gateway.cdp = CdpManager(fake)
    gateway.deep_refs = DeepRefMap(gateway.cdp.epoch)
    gateway.extension = extension  # type: ignore[attr-defined]
    async with gateway.cdp.use(TAB):
        fake.event(TAB, "Target.attachedToTarget", {"sessionId": BANK_SESSION, "targetInfo": {
            "type": "iframe", "targetId": "BANK", "url": "https://bank.test/pay"}})
    await gateway.cdp.wait_for_session(TAB, "BANK")
    return gateway


def call_of(tool: str, **params: Any) -> ToolCall:
    spec = lookup(tool)
    assert spec is not None
    return ToolCall(spec, decode(spec, params), "t")


async def landed(gateway: BrowserGateway, tool: str, **params: Any) -> ToolCall:
    """The call resolved as the service resolves it for the gatekeeper."""
    call = call_of(tool, **params)
    tab = TabTarget(TAB, "http://site.test/a", SHOP)
    landing = await resolve_landing(call, gateway, tab)
    return call.resolved(Target(tab_id=TAB, url=tab.url, origin=landing.origin, handle=landing))


def test_a_frame_is_judged_at_its_origin_else_at_its_url_else_at_its_parents():
    assert frame_origin("https://bank.test", "https://bank.test/pay", SHOP) == BANK
    # Opaque (sandboxed) frames: the URL they loaded names the site.
    assert frame_origin("null", "https://bank.test/pay", SHOP) == BANK
    assert frame_origin("://", "https://bank.test/pay", SHOP) == BANK
    # What a parent wrote into a frame is the parent's.
    for url in ("about:srcdoc", "about:blank", "data:text/html,<b>x</b>", ""):
        assert frame_origin("://", url, SHOP) == SHOP
    assert frame_origin("", "blob:https://bank.test/0b1c", SHOP) == BANK


async def test_a_deep_ref_lands_in_its_frame_wherever_that_frame_lives_now(gateway, page, fake):
    generation = gateway.deep_refs.begin(TAB, gateway.cdp.epoch_of(TAB))
    ref = f"{generation.prefix}1"
    generation.nodes[ref] = DeepNode(ref=ref, backend_node_id=400, session_id=BANK_SESSION, frame_id="BANK",
                                     loader_id="L-BANK", document_backend_id=1, role="button", name="Pay")
    gateway.deep_refs.commit(TAB, generation)
    call = await landed(gateway, "click_trusted", element="Pay", ref=ref)
    assert call.origin == BANK and call.target.handle.session_id == BANK_SESSION
    # The frame navigated to the shop's own site: it left its session and shows in the tab's tree.
    fake.event(TAB, "Target.detachedFromTarget", {"sessionId": BANK_SESSION})
    del page.trees[BANK_SESSION]
    page.trees[None]["childFrames"].append({"frame": frame("BANK", "http://site.test/elsewhere", SHOP, "TOP")})
    again = await landed(gateway, "click_trusted", element="Pay", ref=ref)
    assert again.origin == SHOP and not call.target.same_place(again.target)  # the final check: target_changed


async def test_a_point_lands_in_the_frame_under_it(gateway, page):
    shop = await landed(gateway, "click_xy", x=10, y=10)
    in_process = await landed(gateway, "click_xy", x=10, y=100)
    srcdoc = await landed(gateway, "click_xy", x=10, y=200)
    bank = await landed(gateway, "click_xy", x=10, y=300)
    assert [c.origin for c in (shop, in_process, srcdoc, bank)] == [SHOP, PAY, SHOP, BANK]
    hit = bank.target.handle.hits[0]
    assert (hit.session_id, hit.x, hit.y) == (BANK_SESSION, 10, 50)  # input over the bank frame goes to it


async def test_a_drag_from_one_origin_into_another_is_refused(gateway, fake):
    with pytest.raises(ToolFailure) as caught:
        await landed(gateway, "drag", **{"from": {"x": 10, "y": 10}, "to": {"x": 10, "y": 300}})
    assert caught.value.code == "invalid_params" and BANK in caught.value.message
    within = await landed(gateway, "drag", **{"from": {"x": 10, "y": 300}, "to": {"x": 200, "y": 300}})
    assert within.origin == BANK
    assert fake.writes() == []


async def test_keys_land_where_the_focus_is(gateway, page):
    assert (await landed(gateway, "press_key", key="Enter")).origin == SHOP
    page.focus[None] = 300  # the shop's active element is the bank's iframe: the focus is inside it
    page.focus[BANK_SESSION] = None
    assert (await landed(gateway, "press_key", key="Enter")).origin == BANK


async def test_the_focus_probe_keeps_its_world_until_the_page_changes(gateway, page, fake):
    worlds = lambda: fake.methods().count("Page.createIsolatedWorld")  # noqa: E731
    await landed(gateway, "press_key", key="Enter")
    await landed(gateway, "press_key", key="Enter")
    assert worlds() == 1  # the same document: its world is kept
    fake.event(TAB, "Page.frameNavigated", {"frame": {"id": "TOP"}})
    await landed(gateway, "press_key", key="Enter")
    assert worlds() == 2  # a new document: a new world
    # A kept world the browser no longer knows is made again, once.
    answer, failed = page._active, []

    def gone_once(params, session):
        if not failed:
            failed.append(params.get("contextId"))
            raise CdpError(CdpCode.PROTOCOL_ERROR, "Cannot find context with specified id")
        return answer(params, session)

    fake.handlers["Runtime.evaluate"] = gone_once
    assert (await landed(gateway, "press_key", key="Enter")).origin == SHOP
    assert worlds() == 3


async def test_the_runner_sends_nothing_when_another_frame_is_under_the_point(gateway, page, fake):
    call = await landed(gateway, "click_xy", x=10, y=300)
    page.hits[(None, (10, 300))] = (200, "PAYF")  # the page moved another frame there, without navigating
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.click_xy(call, gateway)
    assert caught.value.code == "target_changed" and caught.value.details["dispatched"] is False
    assert fake.writes() == []


async def test_the_runner_sends_no_key_when_the_focus_moved_to_another_frame(gateway, page, fake):
    call = await landed(gateway, "press_key", key="x")
    page.focus[None] = 300
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.press_key(call, gateway)
    assert caught.value.code == "target_changed" and fake.writes() == []


async def in_one_trip(gateway: BrowserGateway, fake: FakeTransport, key: str) -> ToolCall:
    """A press resolved on the top frame's focus once our isolated world there is known: the
    runner's batch path (the fake runs a batch one command at a time, in order)."""
    call = await landed(gateway, "press_key", key=key)
    gateway.cdp.state(TAB).contexts[(None, "TOP")] = 9
    fake.sent.clear()
    return call


async def test_a_press_on_the_top_frames_focus_goes_as_one_batch_the_look_right_before_the_keys(gateway, page, fake):
    call = await in_one_trip(gateway, fake, "Enter")
    result = await l2_tools.press_key(call, gateway)
    methods = fake.methods()
    keys = [i for i, m in enumerate(methods) if m == "Input.dispatchKeyEvent"]
    assert len(keys) == 2 and set(methods[:keys[0] - 1]) == {"Network.enable"}  # tracking starts before the keys
    look = fake.sent[keys[0] - 1]
    assert look[2] == "Runtime.callFunctionOn" and look[3]["objectId"] == "field-None" and "a === me" in look[3]["functionDeclaration"]
    flush = fake.sent[keys[-1] + 1]
    assert flush[2] == "Runtime.evaluate" and flush[3]["contextId"] == 9 and "focusLine" in flush[3]["expression"]
    assert result.ok and 'Focus now: textbox "Card number"' in result.text and result.details["dispatched"] is True


async def test_the_batch_sends_no_key_when_the_focus_moved_into_another_frame(gateway, page, fake):
    call = await in_one_trip(gateway, fake, "x")
    page.focus[None] = 300  # the page moved the focus into the bank's frame after the judgement
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.press_key(call, gateway)
    assert caught.value.code == "target_changed" and caught.value.details["dispatched"] is False
    assert fake.writes() == [] and fake.methods()[-1] == "Runtime.callFunctionOn"


async def test_a_press_on_a_page_of_many_frame_sessions_takes_the_step_by_step_path(gateway, page, fake):
    call = await in_one_trip(gateway, fake, "x")
    for n in range(40):  # more sessions than a batch holds steps
        gateway.cdp.state(TAB).sessions[f"S-AD-{n}"] = gateway.cdp.state(TAB).sessions[BANK_SESSION]
    result = await l2_tools.press_key(call, gateway)
    assert result.ok and fake.writes() == ["Input.dispatchKeyEvent", "Input.dispatchKeyEvent"]


@pytest.mark.parametrize("error, code, said", [
    (CdpError(CdpCode.PROTOCOL_ERROR, "Cannot find context with specified id"), "target_changed", "the page changed"),
    (CdpError(CdpCode.DETACHED, "the debugger was detached"), "debugger_detached", "detached"),
], ids=["the look's document is gone", "the debugger detached"])
async def test_a_batch_whose_look_failed_sends_no_key_and_says_why(gateway, page, fake, error, code, said):
    call = await in_one_trip(gateway, fake, "x")

    def failing(params, session):
        raise error

    fake.handlers["Runtime.callFunctionOn"] = failing  # the look, on the element the judgement found
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.press_key(call, gateway)
    assert caught.value.code == code and said in caught.value.message and caught.value.details["dispatched"] is False
    assert fake.writes() == []


async def test_the_runner_sends_nothing_after_the_page_changed(gateway, fake):
    call = await landed(gateway, "click_xy", x=10, y=10)
    fake.event(TAB, "Page.frameNavigated", {"frame": {"id": "PAYF"}}, None)
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.click_xy(call, gateway)
    assert caught.value.code == "target_changed" and fake.writes() == []


async def test_a_write_without_its_landing_is_never_sent(gateway, fake):
    call = call_of("click_xy", x=10, y=10).resolved(Target(tab_id=TAB, url="http://site.test/a", origin=SHOP))
    with pytest.raises(ToolFailure) as caught:
        await l2_tools.click_xy(call, gateway)
    assert caught.value.code == "internal" and fake.writes() == []


async def test_the_service_judges_the_frame_and_asks_for_its_site_access(gateway):
    extension = gateway.extension  # type: ignore[attr-defined]
    call = await BrowserTools(gateway).resolve(call_of("click_xy", x=10, y=300, tabId=TAB))
    assert call.origin == BANK and call.tab_id == TAB and call.target.url == "http://site.test/a"
    assert f"in a frame of {BANK}, embedded in {SHOP}" in (call.target.line or "")
    asked = [c.args[0]["origins"] for c in extension.api_calls if c.api == "permissions.contains"]
    # The tab's own origin may be asked while the frame is found; the frame's is asked and decides.
    assert asked[-1] == [f"{BANK}/*"] and set(map(tuple, asked)) <= {(f"{BANK}/*",), ("http://site.test/*",)}
    # A read of the whole tab stays at the tab's origin, and needs no frame.
    read = await BrowserTools(gateway).resolve(call_of("screenshot", tabId=TAB))
    assert read.origin == SHOP and read.target.handle.origin == SHOP


async def test_press_key_without_the_debugger_falls_back_to_the_tabs_own_document(gateway, fake):
    def refused(params: dict[str, Any], session: str | None) -> Any:
        raise CdpError(CdpCode.ATTACH_FAILED, "another debugger is attached to the tab")

    fake.detach(TAB, "target_closed")
    fake.handlers["Page.enable"] = refused
    call = await landed(gateway, "press_key", key="Enter")
    assert call.origin == SHOP and call.target.handle.kind == "synthetic"
    result = await l2_tools.press_key(call, gateway)
    assert result.details["fallback"] == "synthetic" and fake.writes() == []
    sent = gateway.extension.content_calls  # type: ignore[attr-defined]
    assert [(c.tool, c.frame_id) for c in sent] == [("press_key", 0)]  # the page executor of the top frame
