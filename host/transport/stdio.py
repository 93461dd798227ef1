"""Binding the endpoint to the process's stdin/stdout.

Chrome reads frames from our stdout, so nothing else may ever reach file descriptor 1. We
duplicate fd 1 for the frame writer, then point fd 1 (and `sys.stdout`) at stderr: a stray
print, from our code or a library's, lands in the log stream instead of corrupting a frame.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import BinaryIO

from host.transport.endpoint import FrameSink, StreamSink


def claim_stdout() -> BinaryIO:
    """Reserve the real stdout for frames; return it as an unbuffered binary file."""
    sys.stdout.flush()
    frame_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(frame_fd, "wb", buffering=0)


async def open_pipes(stdin: BinaryIO, stdout: BinaryIO) -> tuple[asyncio.StreamReader, FrameSink]:
    """Asyncio reader and frame sink over the given pipe files."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, StreamSink(writer)
