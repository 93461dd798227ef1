"""The local channel under the control link, chosen per OS: a Unix domain socket, or a Windows
named pipe. The server and the client only see an asyncio StreamReader, a FrameSink and, on the
server, what the OS says about the peer (see `channel`); everything OS-specific lives behind
`listen`/`connect`.
"""

from __future__ import annotations

import asyncio
import sys

from host.control.channel import Accept, Listener
from host.transport.endpoint import FrameSink

UNIX = "unix"
PIPE = "pipe"


def default_kind() -> str:
    """The transport this OS uses."""
    return PIPE if sys.platform == "win32" else UNIX


async def listen(kind: str, address: str, accept: Accept) -> Listener:
    """Start accepting connections at `address` (user-only); `accept` runs once per connection."""
    if kind == UNIX:
        from host.control.unix_socket import listen_unix

        return await listen_unix(address, accept)
    if kind == PIPE:
        from host.control.windows_pipe import listen_pipe

        return await listen_pipe(address, accept)
    raise ValueError(f"unknown control transport {kind!r}")


async def connect(kind: str, address: str, timeout: float) -> tuple[asyncio.StreamReader, FrameSink]:
    """Open a connection to a host's control endpoint."""
    if kind == UNIX:
        from host.control.unix_socket import connect_unix

        return await connect_unix(address, timeout)
    if kind == PIPE:
        from host.control.windows_pipe import connect_pipe

        return await connect_pipe(address, timeout)
    raise ValueError(f"unknown control transport {kind!r}")
