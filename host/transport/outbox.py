"""Where an endpoint's frames go out: the sink they are written to, and a bounded queue with one
writer task that drains it in order.

On a sink that can write without waiting (`StreamSink`: sockets and pipes asyncio polls), frames
put while nothing waits to be written go to the OS at once (the transport takes them whole or
keeps the rest in order): a hop through the writer task would cost a round trip a turn of the
event loop. Queued frames always go first, and a peer that stops reading stops the sender at the
queue (the direct path needs the transport's buffer empty, as the writer's drain waits for it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


class FrameSink(Protocol):
    """Where encoded frames go (stdout pipe, socket, test buffer). A sink may also offer
    `write_now(data) -> bool`: write at once without waiting, when nothing it holds is still
    unwritten (False, nothing taken, otherwise)."""

    async def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


class StreamSink:
    """FrameSink over an asyncio StreamWriter; waits for the OS to take each write."""

    def __init__(self, writer: asyncio.StreamWriter):
        self._writer = writer

    async def write(self, data: bytes) -> None:
        self._writer.write(data)
        await self._writer.drain()

    def write_now(self, data: bytes) -> bool:
        """Hand `data` to the transport without waiting, when its buffer is empty (so a peer that
        does not read still stops the sender at the queue, as `write`'s drain does)."""
        transport = self._writer.transport
        if transport.is_closing() or transport.get_write_buffer_size():
            return False
        self._writer.write(data)
        return True

    def close(self) -> None:
        self._writer.close()


class Outbox:
    """The outgoing side of one endpoint (see the module docstring). `on_error(reason)` is told
    when the sink fails a write; the writer stops there."""

    def __init__(self, sink: FrameSink, maxsize: int, on_error: Callable[[str], None]):
        self.sink = sink
        self._queue: asyncio.Queue[list[bytes] | None] = asyncio.Queue(maxsize)
        self._writing = False  # the writer task holds frames it has not finished writing
        self._write_now: Callable[[bytes], bool] | None = getattr(sink, "write_now", None)
        self._on_error = on_error

    @property
    def maxsize(self) -> int:
        return self._queue.maxsize

    def empty(self) -> bool:
        """Whether no frames wait in the queue (the writer may still be writing some)."""
        return self._queue.empty()

    def put(self, frames: list[bytes]) -> bool:
        """Send `frames`: at once when nothing waits before them, else queued; False (nothing
        taken) when the queue is full. Raises OSError when the sink fails the direct write (the
        error is told as a write error, as the writer tells its own)."""
        if self._write_now is not None and not self._writing and self._queue.empty():
            try:
                if self._write_now(b"".join(frames)):
                    return True
            except (ConnectionError, OSError) as exc:
                self._on_error(f"write error: {exc}")
                raise
        try:
            self._queue.put_nowait(frames)
        except asyncio.QueueFull:
            return False
        return True

    def stop(self) -> None:
        """Let the frames queued so far be written, then end the writer."""
        try:
            self._queue.put_nowait(None)
        except asyncio.QueueFull:
            pass

    async def run(self) -> None:
        """The writer task: drain the queue to the sink until `stop`, or a write fails."""
        try:
            while True:
                frames = await self._queue.get()
                if frames is None:
                    break
                self._writing = True
                await self.sink.write(b"".join(frames))
                self._writing = False
        except (ConnectionError, OSError) as exc:
            self._on_error(f"write error: {exc}")
