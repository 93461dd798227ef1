"""Which frame holds the keyboard focus: where trusted key events go.

The browser delivers `Input.dispatchKeyEvent` to the focused frame, whichever session the event
is sent on, out-of-process frames included. Starting at the top frame, each document's
`activeElement` is read; when it is a frame owner (the focus is inside that frame) the search
goes on in the frame it holds, in the same session or in the frame's own child session.

Documents are read in an isolated world of our own (`Page.createIsolatedWorld`, reused by
name, its context kept for the tab's lifecycle epoch), where the page's scripts cannot redefine
`activeElement` to point elsewhere. Only reads
are sent; every failure to follow the focus is raised, never guessed.
"""

from __future__ import annotations

from protocol.errors import TabwardenError

from protocol.messages import CdpStep

from host.browser.l2.frames import READ_TIMEOUT_S, Frame, FrameTrees
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError

PROBE_WORLD = "tabwarden-probe"
PROBE_GROUP = "tabwarden-probe"
MAX_DEPTH = 8
# The focused element of the document, followed into open shadow roots (a frame inside one
# leaves the document's activeElement at the shadow host), told by its local name in any case
# (XHTML documents keep it lowercase in nodeName).
_ACTIVE = ("let a = document.activeElement; while (a && a.shadowRoot && a.shadowRoot.activeElement) "
           "a = a.shadowRoot.activeElement; const owner = !!a && "
           "/^(iframe|frame|object|embed|fencedframe)$/i.test(a.localName || '');")
# The active element when it holds a frame (the focus is somewhere inside that frame), else null.
_ACTIVE_FRAME_OWNER = f"(() => {{ {_ACTIVE} return owner ? a : null; }})()"
# True while the focus is in this frame's own document (no frame of it holds the focus).
_FOCUS_HERE = f"(() => {{ {_ACTIVE} return !owner; }})()"


class FocusLost(TabwardenError):
    """The focus could not be followed (a frame without a session, too deep, a document gone)."""


async def focused_frame(frames: FrameTrees) -> Frame:
    """The frame whose document holds the keyboard focus. Raises FocusLost or CdpError."""
    client = frames.client
    frame = await frames.top()
    for _ in range(MAX_DEPTH):
        session = frame.session_id
        handle = (await _read_active(frames, frame)).get("objectId")
        if not handle:
            return frame  # the focus is in this frame's own document
        try:
            node = (await client.send("DOM.describeNode", {"objectId": handle}, session_id=session,
                                      timeout=READ_TIMEOUT_S)).get("node") or {}
        finally:
            await _release(frames, session)
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


def focus_stays_step(client: TabClient, frame_id: str) -> CdpStep | None:
    """For a batch: the look, in our probe world of the tab's top frame `frame_id`, that the
    focus is still in that frame's own document (the step expects True; a document that went
    fails it, its world with it). None when that world is not known in this lifecycle epoch."""
    kept = client.state.probe_worlds.get((None, frame_id))
    top = client.state.top_frame
    epoch = client.state.epoch
    if kept is None or kept[0] != epoch or top is None or top[0] != epoch or top[1].frame_id != frame_id:
        return None
    return CdpStep(method="Runtime.evaluate", params={"expression": _FOCUS_HERE, "contextId": kept[1], "returnByValue": True},
                   expect=True, deadline_ms=int(READ_TIMEOUT_S * 1000))


async def _read_active(frames: FrameTrees, frame: Frame) -> dict:
    """The frame document's active element when it owns a frame (a remote object), in our
    probe world. The world's context is kept for the tab's lifecycle epoch (a navigation or a
    frame change starts a new one), so the next look at the same frame sends one command."""
    client, session = frames.client, frame.session_id
    key = (session, frame.frame_id)
    epoch = client.state.epoch
    kept = client.state.probe_worlds.get(key)
    for cached in ((kept[1],) if kept and kept[0] == epoch else ()) + (None,):
        context = cached
        if context is None:
            world = await client.send("Page.createIsolatedWorld", {"frameId": frame.frame_id, "worldName": PROBE_WORLD},
                                      session_id=session, timeout=READ_TIMEOUT_S)
            context = int(world["executionContextId"])
            worlds = client.state.probe_worlds
            for older in [k for k, (at, _) in worlds.items() if at != epoch]:
                del worlds[older]  # from documents that are gone
            worlds[key] = (epoch, context)
        try:
            active = await client.send("Runtime.evaluate", {"expression": _ACTIVE_FRAME_OWNER, "objectGroup": PROBE_GROUP,
                                                            "contextId": context, "returnByValue": False},
                                       session_id=session, timeout=READ_TIMEOUT_S)
        except CdpError as exc:
            if cached is None or exc.code != CdpCode.PROTOCOL_ERROR:
                raise
            continue  # the kept world is gone with its document: make it again
        return active.get("result") or {}
    raise FocusLost("the focused frame's document could not be read")


async def _release(frames: FrameTrees, session: str | None) -> None:
    try:
        await frames.client.send("Runtime.releaseObjectGroup", {"objectGroup": PROBE_GROUP}, session_id=session,
                                 timeout=READ_TIMEOUT_S)
    except CdpError as exc:
        if exc.code not in (CdpCode.SESSION_GONE, CdpCode.PROTOCOL_ERROR):
            raise
