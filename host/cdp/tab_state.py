"""What the host knows about the debugger in one tab (`TabState`) and the out-of-process frames
attached to it (`ChildSession`): kept by `CdpManager`, read by each tab's `TabClient`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChildSession:
    """A flat child session: an out-of-process iframe attached through Target auto-attach."""

    session_id: str
    target_id: str  # for an iframe target this is also its frame id
    parent: str | None  # the session it was attached from (None: the tab itself)
    url: str = ""
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class TabState:
    """What the host knows about the debugger in one tab."""

    def __init__(self, tab_id: int):
        self.tab_id = tab_id
        self.epoch = 1
        self.epoch_reason = "first use"
        self.attached = False
        self.prepared = False
        self.closed = False
        self.detach_reason: str | None = None
        # Set when the user dismissed the debugging bar: no re-attach until they allow it again.
        self.user_stopped: str | None = None
        self.lost: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.sessions: dict[str, ChildSession] = {}
        self.runtime_sessions: set[str | None] = set()
        # (session, frame id) -> execution context id of our isolated world
        self.contexts: dict[tuple[str | None, str], int] = {}
        # (session, frame id) -> (epoch, execution context id) of the focus probe's world
        self.probe_worlds: dict[tuple[str | None, str], tuple[int, int]] = {}
        # (epoch, frame) of the tab's top frame: it names its document, so it holds for one epoch
        self.top_frame: tuple[int, Any] | None = None
        # (epoch, top frame id, remote object id, whether a shadow root could be attached to it)
        # of the element the last focus look found focused in the top frame
        self.focus_anchor: tuple[int, str, str, bool] | None = None
        self.changed = asyncio.Event()  # pulsed on new sessions and contexts
        self.last_agent_input = 0.0  # when the agent's latest trusted input was sent or answered
        self.agent_inputs = 0  # commands or batches of trusted input on their way now
        self.agent_input_since = 0.0  # since when some have been on their way

    def bump(self, reason: str) -> None:
        self.epoch += 1
        self.epoch_reason = reason

    def pulse(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()
