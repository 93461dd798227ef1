"""Binding the endpoint to the process's stdin/stdout.

Chrome reads frames from our stdout, so nothing else may ever reach file descriptor 1. We
duplicate fd 1 for the frame writer, then point fd 1 (and `sys.stdout`) at stderr: a stray
print, from our code or a library's, lands in the log stream instead of corrupting a frame.

Chrome gives us pipes, which asyncio can poll. Anything else (a file, /dev/null, a terminal
in some set-ups) falls back to a reader thread and blocking writes in an executor.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
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
    """Asyncio reader and frame sink over the given files."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    if _pollable(stdin):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    else:
        _start_reader_thread(loop, reader, stdin.fileno())
    if not _pollable(stdout):
        return reader, BlockingSink(stdout)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    return reader, StreamSink(asyncio.StreamWriter(transport, protocol, None, loop))


def _pollable(file: BinaryIO) -> bool:
    # epoll refuses regular files and some character devices (/dev/null); pipes and
    # sockets are what the browser gives us.
    if sys.platform == "win32":
        return False
    mode = os.fstat(file.fileno()).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _start_reader_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    def pump() -> None:
        while True:
            try:
                data = os.read(fd, 1 << 20)
            except OSError:
                data = b""
            if not data:
                loop.call_soon_threadsafe(reader.feed_eof)
                return
            loop.call_soon_threadsafe(reader.feed_data, data)

    threading.Thread(target=pump, name="stdin-reader", daemon=True).start()


class BlockingSink:
    """FrameSink for a file that asyncio cannot poll: blocking writes off the event loop."""

    def __init__(self, file: BinaryIO):
        self._file = file

    async def write(self, data: bytes) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._write_all, data)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = self._file.write(view)
            view = view[written:]

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass
