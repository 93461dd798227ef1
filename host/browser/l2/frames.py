"""Frames and their origins, as the debugger reports them.

A tab's frames are spread over its sessions: the tab's own session holds the frames rendered in
its process, each out-of-process iframe's flat child session holds that frame and the frames
rendered with it. `Page.getFrameTree` of a session lists them with their `securityOrigin`.

The origin an action in a frame is judged at (`frame_origin`) is the frame's security origin.
A sandboxed frame's origin is opaque; Chrome reports the origin it was loaded from, and when
it does not, the origin of its URL stands in, so a sandboxed bank page is judged as the bank.
A frame with neither (`about:srcdoc`, `about:blank`, `data:`) holds what the frame that made it
wrote into it, so it is judged at its parent's origin; the top frame's parent is the tab.

`FrameTrees` reads each session's tree at most once and finds a frame by its id wherever it
lives now: a frame that navigated to its parent's site leaves its child session and appears in
its parent's, under the same id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError
from host.gatekeeper.origins import normalize_origin

# Reads made while resolving where an action lands: short, since nothing waits on a busy page.
READ_TIMEOUT_S = 5.0
MAX_SESSIONS = 64  # sessions searched for one frame
MAX_DEPTH = 16  # parents followed for an inherited origin


@dataclass(frozen=True)
class Frame:
    """One frame as a session's frame tree reports it."""

    frame_id: str
    session_id: str | None  # the session whose tree lists it (input for it goes there)
    parent_id: str | None
    url: str
    security_origin: str
    loader_id: str = ""


def frame_origin(security_origin: str, url: str, parent: str) -> str:
    """The origin an action in a frame is judged at (see the module docstring); "" when none of
    them names one."""
    for text in (security_origin, url):
        origin = normalize_origin(text)
        if origin.host:  # a tuple origin (scheme://host[:port]); "null", "://" and about: are not
            return origin.text
    return parent


def flatten(tree: dict[str, Any], session_id: str | None) -> dict[str, Frame]:
    """Every frame of a `Page.getFrameTree` answer, by id."""
    frames: dict[str, Frame] = {}
    stack = [tree]
    while stack:
        item = stack.pop()
        info = item.get("frame") or {}
        frame_id = str(info.get("id") or "")
        if frame_id:
            frames[frame_id] = Frame(frame_id, session_id, info.get("parentId") or None, str(info.get("url") or ""),
                                     str(info.get("securityOrigin") or ""), str(info.get("loaderId") or ""))
        stack.extend(item.get("childFrames") or [])
    return frames


class FrameTrees:
    """The frame trees of one tab's sessions, each read at most once (reads only)."""

    def __init__(self, client: TabClient, tab_origin: str):
        self.client = client
        self.tab_origin = tab_origin
        self._trees: dict[str | None, dict[str, Frame]] = {}

    async def session_frames(self, session_id: str | None) -> dict[str, Frame]:
        """The frames `session_id`'s tree lists ({} for a session that has ended)."""
        if session_id not in self._trees:
            try:
                tree = await self.client.send("Page.getFrameTree", session_id=session_id, timeout=READ_TIMEOUT_S)
            except CdpError as exc:
                if exc.code != CdpCode.SESSION_GONE:
                    raise
                tree = {}
            self._trees[session_id] = flatten(tree.get("frameTree") or {}, session_id) if tree else {}
        return self._trees[session_id]

    async def top(self) -> Frame:
        """The tab's top frame, read once per lifecycle epoch (every navigation of a frame starts
        a new one, so a kept top frame still names the document and origin it was read with)."""
        state = self.client.state
        epoch = state.epoch
        if state.top_frame is not None and state.top_frame[0] == epoch:
            return state.top_frame[1]
        frames = await self.session_frames(None)
        top = next((f for f in frames.values() if f.parent_id is None), None)
        if top is None:
            raise CdpError(CdpCode.SESSION_GONE, f"tab {self.client.tab_id} reports no top frame")
        if state.epoch == epoch:  # nothing moved while it was read
            state.top_frame = (epoch, top)
        return top

    async def find(self, frame_id: str, session_hint: str | None = None) -> Frame | None:
        """The frame with this id, looked for in `session_hint`'s tree first, then in the tab's,
        then in every other session; None when no session lists it (it is gone)."""
        order: list[str | None] = [session_hint, None, *self.client.state.sessions]
        seen: set[str | None] = set()
        for session in order:
            if session in seen:
                continue
            seen.add(session)
            if len(seen) > MAX_SESSIONS:
                break
            if session is not None and session not in self.client.state.sessions:
                continue
            found = (await self.session_frames(session)).get(frame_id)
            if found is not None:
                return found
        return None

    async def origin(self, frame: Frame) -> str:
        """The origin an action in `frame` is judged at ("" when it cannot be told)."""
        chain: list[Frame] = [frame]
        current = frame
        # Walk up only as far as needed: most frames name their own origin.
        while not frame_origin(current.security_origin, current.url, "") and len(chain) <= MAX_DEPTH:
            if current.parent_id is None:
                return self.tab_origin
            hint = self.client.state.sessions[current.session_id].parent \
                if current.session_id in self.client.state.sessions else None
            parent = await self.find(current.parent_id, hint)
            if parent is None:
                return ""
            chain.append(parent)
            current = parent
        origin = ""
        for item in reversed(chain):
            origin = frame_origin(item.security_origin, item.url, origin)
        return origin
