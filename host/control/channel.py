"""What every control channel (Unix socket, Windows named pipe) hands the server: the peer the
OS reports, the accept callback's shape and the listener it returns. The channel modules and
`transport` (which picks one) import these from here, so neither depends on the other."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Awaitable, Callable, Protocol

from host.transport.endpoint import FrameSink


@dataclass(frozen=True)
class Peer:
    """Who the OS says is connected: `same_user` is None when it cannot tell."""

    same_user: bool | None
    identity: str  # for the log: "uid 1000", a SID, or "unknown"


Accept = Callable[[asyncio.StreamReader, FrameSink, Peer], Awaitable[None]]


class Listener(Protocol):
    """A listening endpoint; `close` stops accepting (connections already open stay)."""

    address: str

    async def close(self) -> None: ...
