"""Which frame holds the keyboard focus: where trusted key events go.

The browser delivers `Input.dispatchKeyEvent` to the focused frame, whichever session the event
is sent on, out-of-process frames included. Starting at the top frame, each document's
focused element is read (`activeElement`, followed into open shadow roots by script and into
closed ones through the debugger, which alone sees into them); when it is a frame owner (the
focus is inside that frame) the search goes on in the frame it holds, in the same session or in
the frame's own child session.

Documents are read in our isolated world (`probe_world`), where the page's scripts cannot redefine
`activeElement` to point elsewhere. Only reads are sent; every failure to follow the focus is
raised, never guessed. The top frame's focused element is kept for a press batch's last look.
"""

from __future__ import annotations

from protocol.errors import TabwardenError
from protocol.messages import CdpStep

from host.browser.l2.frames import READ_TIMEOUT_S, Frame, FrameTrees
from host.cdp.client import TabClient
from host.browser.l2.probe_world import evaluate_in_probe_world, kept_context
from host.cdp.errors import CdpError
PROBE_GROUP = "tabwarden-probe"
# The top frame's focused element as the last look found it, kept (one at a time) for a batch's
# look right before its keys.
ANCHOR_GROUP = "tabwarden-focus-anchor"
MAX_DEPTH = 8
FRAME_OWNERS = frozenset({"HTMLIFrameElement", "HTMLFrameElement", "HTMLObjectElement", "HTMLEmbedElement",
                          "HTMLFencedFrameElement"})
# The built-in elements a page may attach a shadow root to (custom elements too, whose class
# our isolated world does not know): only these can hide a focused frame in a closed root.
_HOSTS = frozenset({"HTMLElement", "HTMLDivElement", "HTMLSpanElement", "HTMLBodyElement", "HTMLParagraphElement",
                    "HTMLHeadingElement", "HTMLQuoteElement"})
# The focused element, followed into open shadow roots (a frame inside one leaves the
# document's activeElement at the shadow host); closed ones are followed through the debugger.
_DEEPEST = "while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a;"
_ACTIVE_ELEMENT = f"(() => {{ let a = document.activeElement; {_DEEPEST} }})()"
_ACTIVE_IN_ROOT = f"function () {{ let a = this.activeElement; {_DEEPEST} }}"
# True while `this` is still where the focus is (as far as the page's open roots go).
_STILL_FOCUSED = f"function () {{ const me = this; let a = document.activeElement; {_DEEPEST.replace('return a;', 'return a === me;')} }}"


class FocusLost(TabwardenError):
    """The focus could not be followed (a frame without a session, too deep, a document gone)."""


def _may_host(class_name: str) -> bool:
    return class_name in _HOSTS or not class_name.startswith(("HTML", "SVG"))


async def focused_frame(frames: FrameTrees) -> Frame:
    """The frame whose document holds the keyboard focus. Raises FocusLost or CdpError."""
    client = frames.client
    frame = top = await frames.top()
    for _ in range(MAX_DEPTH):
        session = frame.session_id
        probed: list[bool] = [frame is not top]  # the top frame's look goes into the anchor's group
        active = await _read_active(frames, frame, anchor=frame is top)
        try:
            node = await _through_closed_roots(frames, frame, active, probed)
        finally:
            if probed[0]:
                _let_go(client, session, PROBE_GROUP)  # ordered before what follows on the session
        if node is None:
            return frame  # the focus is in this frame's own document
        inner = node.get("frameId")
        if not inner or inner == frame.frame_id:
            raise FocusLost("the focused frame owner holds no frame the debugger knows")
        local = (await frames.session_frames(session)).get(inner)
        if local is not None:
            frame = local
            continue
        child = next((c for c in client.state.sessions.values() if c.target_id == inner and c.parent == session), None)
        if child is None:
            raise FocusLost(f"the focus is in a frame ({inner[:8]}…) the debugger is not attached to")
        found = (await frames.session_frames(child.session_id)).get(inner)
        if found is None:
            raise FocusLost(f"the focused frame ({inner[:8]}…) is gone")
        frame = found
    raise FocusLost(f"the focus is more than {MAX_DEPTH} frames deep")


async def _through_closed_roots(frames: FrameTrees, frame: Frame, active: dict, probed: list[bool]) -> dict | None:
    """The node of the frame owner that holds the focus (`active`: the focused element as our
    world sees it), followed into closed shadow roots, which only the debugger sees into; None
    when the focus is in the frame's own document. `probed[0]` is set once objects are held in
    the probe group."""
    client, session = frames.client, frame.session_id
    for _ in range(MAX_DEPTH):
        handle, kind = active.get("objectId"), str(active.get("className") or "")
        if not handle or not (kind in FRAME_OWNERS or _may_host(kind)):
            return None  # nothing focused, or an element that can neither hold a frame nor hide one
        node = (await client.send("DOM.describeNode", {"objectId": handle, "depth": 0}, session_id=session,
                                  timeout=READ_TIMEOUT_S)).get("node") or {}
        if kind in FRAME_OWNERS:
            return node
        closed = next((r for r in node.get("shadowRoots") or [] if r.get("shadowRootType") == "closed"), None)
        if closed is None:
            return None
        client.state.focus_anchor = None  # the batch's look cannot see into a closed root
        probed[0] = True
        context = kept_context(client, session, frame.frame_id)  # kept by the look just made
        if context is None:
            raise FocusLost("the focused frame's document could not be read")
        root = await client.send("DOM.resolveNode", {"backendNodeId": closed["backendNodeId"], "executionContextId": context,
                                                     "objectGroup": PROBE_GROUP}, session_id=session, timeout=READ_TIMEOUT_S)
        inside = await client.send("Runtime.callFunctionOn", {"objectId": root["object"]["objectId"], "objectGroup": PROBE_GROUP,
                                                              "functionDeclaration": _ACTIVE_IN_ROOT},
                                   session_id=session, timeout=READ_TIMEOUT_S)
        active = inside.get("result") or {}
        if not active.get("objectId"):
            return None  # the host itself holds the focus
    raise FocusLost(f"the focus is more than {MAX_DEPTH} shadow roots deep")


def focus_stays_step(client: TabClient, frame_id: str) -> list[CdpStep] | None:
    """For a batch: the look, in our probe world of the tab's top frame `frame_id`, that the
    focus is still on the element the last look found there (expects True; a document that went
    fails it, the element with it), and, for an element a shadow root could be attached to
    since, that it has none (a closed one could hide a frame). None when no such look is known
    in this lifecycle epoch (or the focus was inside a closed root)."""
    anchor = client.state.focus_anchor
    top = client.state.top_frame
    epoch = client.state.epoch
    if anchor is None or anchor[0] != epoch or anchor[1] != frame_id or top is None or top[0] != epoch \
            or top[1].frame_id != frame_id:
        return None
    deadline = int(READ_TIMEOUT_S * 1000)
    steps = [CdpStep(method="Runtime.callFunctionOn", params={"objectId": anchor[2], "functionDeclaration": _STILL_FOCUSED,
                                                              "returnByValue": True}, expect=True, deadline_ms=deadline)]
    if anchor[3]:
        steps.append(CdpStep(method="DOM.describeNode", params={"objectId": anchor[2], "depth": 0},
                             expect_at=["node", "shadowRoots"], expect=None, deadline_ms=deadline))
    return steps


async def _read_active(frames: FrameTrees, frame: Frame, *, anchor: bool = False) -> dict:
    """The frame document's focused element (a remote object), in our probe world. `anchor`:
    keep it, for the next batch's look (the one kept before is let go)."""
    client, session = frames.client, frame.session_id
    epoch = client.state.epoch
    if anchor:
        client.state.focus_anchor = None
        _let_go(client, session, ANCHOR_GROUP)
    active = await evaluate_in_probe_world(client, session, frame.frame_id, {
        "expression": _ACTIVE_ELEMENT, "objectGroup": ANCHOR_GROUP if anchor else PROBE_GROUP, "returnByValue": False})
    result = active.get("result") or {}
    if anchor and result.get("objectId"):
        kind = str(result.get("className") or "")
        client.state.focus_anchor = (epoch, frame.frame_id, result["objectId"], _may_host(kind))
    return result


def _let_go(client: TabClient, session: str | None, group: str) -> None:
    """Release an object group without waiting (sent before what follows on the session)."""
    try:
        waiting = client.begin("Runtime.releaseObjectGroup", {"objectGroup": group}, session_id=session,
                               timeout=READ_TIMEOUT_S)
    except CdpError:
        return
    waiting.add_done_callback(lambda done: done.cancelled() or done.exception())
