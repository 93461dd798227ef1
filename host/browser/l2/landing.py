"""Where an L2 write lands, and the origin it is judged at.

A page may embed frames of other origins, and trusted input goes wherever the browser routes
it: into the frame of the element clicked, the frame under a point, the frame holding the focus.
So an L2 write is judged, site-access-checked and audited at the origin of the frame it lands
in, not at the tab's. `resolve_landing` finds that frame when the call is resolved (under the
tab's hold, for a call allowed at once on a tab its thread drives; else before the first check
and again under the hold, before the final one), reading only:

    a deep ref          the frame it was read in, wherever that frame lives now
    an L1 ref           the frame of the element the page executor hands over
    coordinates         the frame whose document is under the point (`click_xy`; both ends of
                        a `drag`, which must be in one origin)
    `press_key`, no ref the frame holding the keyboard focus

A frame that moved to another origin between two resolutions changes the call's origin, so
the final check ends it as `target_changed`. The runner then binds its writes to the lifecycle
epoch the landing was proven under (`check_node`, `writer_epoch`) and, for what moves without a
lifecycle event (the layout under a point, the focus), looks again right before it sends
(`confirm_points`, `confirm_focus`): anything else than what was judged refuses the input.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from host.browser.l2 import geometry
from host.browser.l2.deep_refs import StaleReason, is_deep_ref, stale
from host.browser.l2.focus import FocusLost, focused_frame
from host.browser.l2.frames import Frame, FrameTrees
from host.browser.l2.session import check_not_stopped, debugger
from host.browser.l2.targets import NodeTarget, translate_l1
from host.browser.target import TabTarget
from host.cdp.client import TabClient
from host.tools.browser_params import ClickXYParams, DragParams, PressKeyParams
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.spec import ToolSpec

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

ATTEMPTS = 2  # a resolution the page changed under is read once more


@dataclass(frozen=True)
class Landing:
    """Where an L2 write lands, as resolution found it."""

    tab: TabTarget
    origin: str  # what the call is judged at
    frame_id: str
    session_id: str | None  # the session whose frame tree lists the frame
    epoch: int  # the tab's lifecycle epoch it was proven under
    kind: str  # "ref", "point", "focus", or "synthetic" (press_key without the debugger)
    # For coordinates: the points as given (top-level viewport) and where each one's input goes.
    points: tuple[tuple[float, float], ...] = ()
    hits: tuple[geometry.Hit, ...] = ()

    @property
    def in_other_origin(self) -> bool:
        """True when the frame is not at the tab's own origin."""
        return self.origin != self.tab.origin

    def note(self) -> str:
        """The frame, as the approval card shows it next to the target's line."""
        what = {"point": "the point is", "focus": "the focus is"}.get(self.kind, "it is")
        return f"[{what} in a frame of {self.origin}, embedded in {self.tab.origin}]"


def lands_in_frame(spec: ToolSpec) -> bool:
    """True for the tools whose input lands in a frame: the L2 writes."""
    return spec.target == "page" and spec.level == "L2" and spec.is_write


async def resolve_landing(call: ToolCall, browser: "BrowserGateway", tab: TabTarget) -> Landing:
    """Where `call` lands in `tab` now (reads only; attaches the debugger). Raises ToolFailure:
    `stale_ref` for a ref whose frame is gone, `invalid_params` for a point outside the page,
    `unsupported_frame` where the frame cannot be told, or the debugger's own failures."""
    params = call.params
    ref = getattr(params, "ref", None)
    state = browser.cdp.state(tab.tab_id)
    check_not_stopped(browser, tab.tab_id)
    if is_deep_ref(ref) and not state.attached:
        # The debugger left the page since the ref was read, so the ref is stale: say so without
        # attaching again for a call that cannot run.
        browser.deep_refs.check_known(tab.tab_id, ref)
        browser.deep_refs.resolve(tab.tab_id, ref, state.epoch, state.epoch_reason)
    synthetic_ok = isinstance(params, PressKeyParams) and not is_deep_ref(params.ref)
    try:
        async with debugger(tab.tab_id, browser, write=False) as client:
            landing = None
            for _ in range(ATTEMPTS):
                epoch = client.epoch
                landing = await _resolve(call, browser, client, tab, epoch)
                if client.epoch == epoch:
                    break
            assert landing is not None
            return landing
    except ToolFailure as problem:
        # press_key falls back to the page executor's synthetic keys, which stay in the tab's
        # own document (they are events the executor dispatches there, not input the browser routes).
        if synthetic_ok and problem.code == ToolCode.DEBUGGER_UNAVAILABLE:
            return Landing(tab, tab.origin, "", None, 0, "synthetic")
        raise


async def _resolve(call: ToolCall, browser: "BrowserGateway", client: TabClient, tab: TabTarget, epoch: int) -> Landing:
    params = call.params
    frames = FrameTrees(client, tab.origin)
    ref = getattr(params, "ref", None)
    if ref:
        frame = await _frame_of_ref(call, browser, client, frames, ref)
        return Landing(tab, await _origin(frames, frame), frame.frame_id, frame.session_id, epoch, "ref")
    if isinstance(params, ClickXYParams):
        return await _point_landing(client, frames, tab, epoch, [(params.x, params.y)])
    if isinstance(params, DragParams):
        return await _point_landing(client, frames, tab, epoch, [(params.start.x, params.start.y),
                                                                 (params.to.x, params.to.y)])
    if isinstance(params, PressKeyParams):
        try:
            frame = await focused_frame(frames)
        except FocusLost as exc:
            raise ToolFailure(ToolCode.UNSUPPORTED_FRAME, f"cannot tell which frame the key would go to ({exc}); focus "
                              "an element with a ref instead", phase="resolve", details={"dispatched": False}) from None
        return Landing(tab, await _origin(frames, frame), frame.frame_id, frame.session_id, epoch, "focus")
    # Fail closed: an L2 write that does not say where it acts cannot be judged anywhere.
    raise ToolFailure(ToolCode.UNSUPPORTED, f"{call.tool} does not say where in the page it acts", phase="resolve",
                      details={"dispatched": False})


async def _frame_of_ref(call: ToolCall, browser: "BrowserGateway", client: TabClient, frames: FrameTrees,
                        ref: str) -> Frame:
    if is_deep_ref(ref):
        browser.deep_refs.check_known(client.tab_id, ref)  # its epoch is checked by the runner, against the page then
        node = browser.deep_refs.peek(client.tab_id, ref)
        assert node is not None  # check_known found it in the latest read
        frame_id, hint = node.frame_id, node.session_id
    else:
        frame_id, hint = (await translate_l1(call, browser, client, ref)).frame_id, None
    frame = await frames.find(frame_id, hint)
    if frame is None:
        raise stale(ref, StaleReason.DOCUMENT_CHANGED, "its frame is gone")
    return frame


async def _point_landing(client: TabClient, frames: FrameTrees, tab: TabTarget, epoch: int,
                         points: list[tuple[float, float]]) -> Landing:
    await _inside_viewport(client, points)
    hits = [await geometry.hit_point(client, x, y) for x, y in points]
    landed = []
    for hit in hits:
        frame = await frames.find(hit.frame_id, hit.session_id)
        if frame is None:
            raise ToolFailure(ToolCode.TARGET_CHANGED, "the frame under the point went away while it was checked; take a "
                              "screenshot and try again", phase="resolve", retryable=True, details={"dispatched": False})
        landed.append((frame, await _origin(frames, frame)))
    origins = {origin for _, origin in landed}
    if len(origins) > 1:
        shown = " and ".join(origin for _, origin in landed)
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"the drag starts and ends in frames of different origins ({shown}); "
                          "a drag may only stay within one origin", phase="resolve", details={"dispatched": False})
    frame, origin = landed[0]
    return Landing(tab, origin, frame.frame_id, frame.session_id, epoch, "point", tuple(points), tuple(hits))


async def _origin(frames: FrameTrees, frame: Frame) -> str:
    origin = await frames.origin(frame)
    if not origin:
        raise ToolFailure(ToolCode.UNSUPPORTED_FRAME, f"cannot tell the origin of the frame {frame.url[:200] or frame.frame_id}"
                          " the action would land in", phase="resolve", details={"dispatched": False})
    return origin


async def _inside_viewport(client: TabClient, points: list[tuple[float, float]]) -> None:
    metrics = await client.send("Page.getLayoutMetrics")
    view = metrics["cssLayoutViewport"]
    width, height = view["clientWidth"], view["clientHeight"]
    for x, y in points:
        if x >= width or y >= height:
            raise ToolFailure(ToolCode.INVALID_PARAMS, f"({x:g}, {y:g}) is outside the viewport ({width}x{height} CSS px); "
                              "take a screenshot to find the point again", phase="validate", details={"dispatched": False})


# ---------------------------------------------------------------- the runner's side


def landing_of(call: ToolCall) -> Landing:
    """The landing the call was judged at; an L2 write resolved without one is never sent."""
    handle = call.target.handle if call.target is not None else None
    if not isinstance(handle, Landing):
        raise ToolFailure(ToolCode.INTERNAL, f"{call.tool} was not resolved to the frame it lands in, so it is not sent",
                          phase="precheck", details={"dispatched": False})
    return handle


def moved_since_judged(what: str) -> ToolFailure:
    """The refusal of an input whose landing changed after it was judged (nothing was sent)."""
    return ToolFailure(ToolCode.TARGET_CHANGED, f"{what} after the permission check; nothing was sent. Look at the page "
                       "again", phase="dispatch", retryable=True, details={"dispatched": False})


def check_node(landing: Landing, target: NodeTarget) -> None:
    """The element the runner resolved is in the frame that was judged, and the page has not
    changed since (its writes are bound to that epoch)."""
    if target.frame_id != landing.frame_id:
        raise moved_since_judged("the element's frame changed")
    if target.epoch != landing.epoch:
        raise stale(target.ref, StaleReason.LIFECYCLE_CHANGED, "the page changed after the permission check")


def writer_epoch(client: TabClient, landing: Landing) -> int:
    """The epoch writes without a ref are bound to: the landing's, if the page is still there."""
    if client.epoch != landing.epoch:
        raise moved_since_judged(f"the page changed ({client.state.epoch_reason})")
    return landing.epoch


async def confirm_points(client: TabClient, landing: Landing) -> list[geometry.Hit]:
    """Hit-test the points again, just before the input: the frame under each must be the one
    judged (a page can move a frame under a point without any navigation)."""
    fresh = []
    for (x, y), judged in zip(landing.points, landing.hits):
        hit = await geometry.hit_point(client, x, y)
        if hit.frame_id != judged.frame_id or hit.session_id != judged.session_id:
            raise moved_since_judged(f"another frame came under ({x:g}, {y:g})")
        fresh.append(hit)
    return fresh


async def confirm_focus(client: TabClient, landing: Landing, frame_id: str | None = None) -> None:
    """The keyboard focus is (still) in the frame judged, just before keys are sent: a page can
    move the focus into another origin's frame without any navigation."""
    expected = frame_id or landing.frame_id
    try:
        frame = await focused_frame(FrameTrees(client, landing.tab.origin))
    except FocusLost as exc:
        raise moved_since_judged(f"the focus could no longer be followed ({exc})") from None
    if frame.frame_id != expected:
        raise moved_since_judged("the keyboard focus moved to another frame")
