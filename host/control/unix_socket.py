"""The control endpoint on Unix: a socket file with mode 0600 in a 0700 folder, and the peer's
uid from the kernel (SO_PEERCRED / LOCAL_PEERCRED) for every connection. The modes keep other
users out; the uid check refuses them where the modes do not (root, or a loosened folder)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from host.control.peer import peer_uid
from host.control.channel import Accept, Peer
from host.transport.endpoint import FrameSink, StreamSink


class UnixListener:
    def __init__(self, address: str, server: asyncio.AbstractServer):
        self.address = address
        self._server = server

    async def close(self) -> None:
        self._server.close()
        try:
            await asyncio.wait_for(self._server.wait_closed(), 2)
        except asyncio.TimeoutError:
            pass
        try:
            Path(self.address).unlink()
        except OSError:
            pass


def _peer_of(writer: asyncio.StreamWriter) -> Peer:
    sock = writer.get_extra_info("socket")
    uid = peer_uid(sock) if sock is not None else None
    if uid is None:
        return Peer(None, "unknown")
    return Peer(uid == os.getuid(), f"uid {uid}")


async def listen_unix(address: str, accept: Accept) -> UnixListener:
    """Listen on a fresh socket file at `address`, readable and writable by this user only."""
    try:
        Path(address).unlink()
    except FileNotFoundError:
        pass

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accept(reader, StreamSink(writer), _peer_of(writer))

    # The umask makes the socket private from the moment it exists (chmod alone leaves a window).
    old_umask = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(on_connect, path=address)
    finally:
        os.umask(old_umask)
    os.chmod(address, 0o600)
    return UnixListener(address, server)


async def connect_unix(address: str, timeout: float) -> tuple[asyncio.StreamReader, FrameSink]:
    """Connect to a control socket."""
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(address), timeout)
    return reader, StreamSink(writer)
