"""Who is on the other end of a Unix socket: the kernel's answer, not the client's claim."""

from __future__ import annotations

import socket
import struct
import sys

# macOS/BSD: getsockopt(SOL_LOCAL, LOCAL_PEERCRED) returns a struct xucred whose uid follows
# a 4-byte version field.
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 0x001


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the connected peer, or None when the OS cannot tell us."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            _pid, uid, _gid = struct.unpack("3i", raw)
            return uid
        if sys.platform == "darwin" or "bsd" in sys.platform:
            raw = sock.getsockopt(_SOL_LOCAL, _LOCAL_PEERCRED, 76)
            return struct.unpack_from("I", raw, 4)[0]
    except OSError:
        return None
    return None
