"""A framed, bidirectional message endpoint over an asyncio byte stream.

One reader task cuts frames, decodes them, resolves replies by id and answers pings; one writer
task drains a bounded queue of frames, when they cannot go to the OS at once (`outbox.py`); one
dispatcher task hands other messages to handlers in arrival order (`inbox.py`, which also says
what becomes of a message its bounded queue cannot take). Nothing the peer sends goes unanswered
for want of room: a reply the outbound queue cannot take makes `deliver` wait for room instead of
dropping it.

A protocol violation in a frame that leaves the stream in sync is reported to the peer and
skipped; a corrupt length prefix closes the link.
"""

from __future__ import annotations

import asyncio
import itertools
import logging

import msgspec
from typing import Any, Awaitable, Callable

from protocol.errors import ErrorInfo, ProtocolError
from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder, decode_value
from protocol.messages import Cancel, Failure, Message, Ping, Pong, ProtocolErrorReport, Result

from host.transport.errors import Disconnected, Overloaded, RemoteError, RequestError, RequestTimeout
from host.transport.inbox import INBOUND_WAIT_S, RETRY_AFTER_MS, Handler, Inbox, Refuser
from host.transport.outbox import FrameSink, Outbox, StreamSink

__all__ = ["Endpoint", "FrameSink", "StreamSink", "RETRY_AFTER_MS", "INBOUND_WAIT_S"]

log = logging.getLogger("tabwarden.transport")


class Endpoint:
    """Request/response and event plumbing for one peer."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        sink: FrameSink,
        *,
        decoder: MessageDecoder,
        encoder: FrameEncoder,
        splitter: FrameSplitter,
        name: str = "peer",
        max_pending: int = 512,
        max_outbound: int = 2048,
        max_inbound: int = 2048,
        default_timeout: float = 30.0,
        refuse: Refuser | None = None,
    ):
        self.name = name
        self._reader = reader
        self._decoder = decoder
        self._encoder = encoder
        self._splitter = splitter
        self._max_pending = max_pending
        self.outbox = Outbox(sink, max_outbound, self._begin_close)
        self.inbox = Inbox(max_inbound, self.deliver, name=name, refuse=refuse)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._expected: dict[int, Any] = {}  # request id -> the result type it asked for
        decoder.result_kind = self._expected.get
        self._ids = itertools.count(1)
        self._tasks: list[asyncio.Task[None]] = []
        self._close_reason: str | None = None
        self.default_timeout = default_timeout
        self.closed = asyncio.Event()

    # ------------------------------------------------------------------ wiring

    def on(self, message_type: type[Message], handler: Handler) -> None:
        """Call `handler` for every inbound message of this type (in arrival order)."""
        self.inbox.handlers[message_type] = handler

    def on_other(self, handler: Handler) -> None:
        """Call `handler` for inbound messages without a specific handler."""
        self.inbox.fallback = handler

    def start(self) -> None:
        """Start the reader, writer and dispatcher tasks."""
        self._tasks = [
            asyncio.create_task(self._read_loop(), name=f"{self.name}-reader"),
            asyncio.create_task(self.outbox.run(), name=f"{self.name}-writer"),
            asyncio.create_task(self.inbox.run(), name=f"{self.name}-dispatcher"),
        ]

    @property
    def is_open(self) -> bool:
        return not self.closed.is_set()

    @property
    def close_reason(self) -> str | None:
        return self._close_reason

    @property
    def refused(self) -> int:
        """Messages answered `overloaded` because the host could not take them."""
        return self.inbox.refused

    # ------------------------------------------------------------------ sending

    def next_id(self) -> int:
        """A fresh request id."""
        return next(self._ids)

    async def deliver(self, message: Message) -> None:
        """Queue a message, waiting while the outbound queue is full (a reply, a refusal: what
        the peer waits for is never dropped for want of room). Raises Disconnected when the link
        closes first."""
        frames = self._encoder.encode(message)
        while True:
            if self.closed.is_set():
                raise Disconnected(f"{self.name} link is closed ({self._close_reason})")
            if self._put(frames):
                return
            await asyncio.sleep(0.005)  # the writer drains to the OS; the peer reads at its pace

    def send(self, message: Message) -> None:
        """Queue a message; raises Overloaded when the outbound queue is full."""
        if self.closed.is_set():
            raise Disconnected(f"{self.name} link is closed ({self._close_reason})")
        frames = self._encoder.encode(message)
        if not self._put(frames):
            raise Overloaded(f"{self.name} outbound queue is full ({self.outbox.maxsize} messages)") from None

    def _put(self, frames: list[bytes]) -> bool:
        """`Outbox.put`, a failed write being the link's end."""
        try:
            return self.outbox.put(frames)
        except (ConnectionError, OSError) as exc:
            raise Disconnected(f"{self.name} link closed: write error: {exc}") from None

    async def request(self, build: Callable[[int], Message], timeout: float | None = None,
                      result_type: Any = Any) -> Any:
        """Send the message `build(id)` and wait for the peer's result for that id.

        The result is decoded into `result_type` (any JSON within the limits by default).
        Raises RemoteError (the peer failed it), RequestTimeout (a cancel is sent to the peer),
        RequestError (the result does not fit `result_type`), Disconnected, or Overloaded.
        Cancelling the awaiting task also cancels the peer's work.
        """
        request_id, message, future = self._send_request(build, result_type)
        return await self._result(request_id, message, future, timeout, result_type)

    def begin(self, build: Callable[[int], Message], timeout: float | None = None,
              result_type: Any = Any) -> "asyncio.Task[Any]":
        """`request`, with the message sent before this returns: what is sent after it reaches
        the peer after it. Returns the task that waits for the result (await it, or cancel it:
        the peer is told, even when it is cancelled before it ever ran)."""
        request_id, message, future = self._send_request(build, result_type)
        task = asyncio.ensure_future(self._result(request_id, message, future, timeout, result_type))

        def forget(_: "asyncio.Task[Any]") -> None:
            # A task cancelled before its first step never ran `_result`'s own clean-up.
            if self._pending.pop(request_id, None) is not None and not future.done():
                future.cancel()
                self._cancel_remote(request_id)
            self._expected.pop(request_id, None)

        task.add_done_callback(forget)
        return task

    def _send_request(self, build: Callable[[int], Message],
                      result_type: Any) -> tuple[int, Message, "asyncio.Future[Any]"]:
        """Number the message, register what waits for its result, and send it now."""
        if len(self._pending) >= self._max_pending:
            raise Overloaded(f"{len(self._pending)} requests to the {self.name} are already waiting")
        request_id = self.next_id()
        message = build(request_id)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._expected[request_id] = result_type
        try:
            self.send(message)
        except BaseException:
            self._pending.pop(request_id, None)
            self._expected.pop(request_id, None)
            raise
        return request_id, message, future

    async def _result(self, request_id: int, message: Message, future: "asyncio.Future[Any]", timeout: float | None,
                      result_type: Any) -> Any:
        try:
            # A deadline on this task (no task of its own, as `wait_for` would make for each request).
            async with asyncio.timeout(timeout if timeout is not None else self.default_timeout):
                raw = await future
        except TimeoutError:
            self._cancel_remote(request_id)
            raise RequestTimeout(
                f"no answer from the {self.name} to {type(message).__name__} #{request_id} within {timeout or self.default_timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            self._cancel_remote(request_id)
            raise
        finally:
            self._pending.pop(request_id, None)
            self._expected.pop(request_id, None)
        if not isinstance(raw, msgspec.Raw):
            return raw  # decoded into result_type as it arrived
        try:
            return decode_value(raw, result_type, self._decoder.limits, request_id)
        except ProtocolError as exc:
            raise RequestError(ErrorInfo(code=exc.code, message=exc.message)) from None

    async def ping(self, timeout: float = 2.0) -> None:
        """Round trip a ping; raises on timeout or disconnect."""
        await self.request(lambda i: Ping(id=i), timeout)

    def _cancel_remote(self, request_id: int) -> None:
        if self.is_open:
            try:
                self.send(Cancel(id=request_id))
            except RequestError:
                pass

    # ------------------------------------------------------------------ receiving

    async def _read_loop(self) -> None:
        reason = "end of input"
        try:
            while True:
                data = await self._reader.read(1 << 20)
                if not data:
                    if self._splitter.pending:
                        reason = f"end of input inside a frame ({self._splitter.pending} bytes unread)"
                    break
                try:
                    payloads = self._splitter.feed(data)
                except ProtocolError as exc:
                    log.error("%s: %s; closing", self.name, exc)
                    reason = exc.code
                    break
                for payload in payloads:
                    waiting = self._accept(payload)
                    if waiting is not None:
                        await waiting  # back-pressure: nothing more is read until it is placed
        except (ConnectionError, OSError) as exc:
            reason = f"read error: {exc}"
        except asyncio.CancelledError:
            reason = "cancelled"
            raise
        finally:
            self._begin_close(reason)

    def _accept(self, payload: bytes) -> Awaitable[None] | None:
        """Take one frame; returns what the reader must wait for when the frame could not be
        placed at once (see the module docstring)."""
        try:
            message = self._decoder.decode(payload)
        except ProtocolError as exc:
            log.warning("%s sent a bad frame: %s", self.name, exc)
            self.report(exc)
            return None
        if message is None:
            return None  # a chunk of an unfinished message
        if isinstance(message, (Result, Failure, Pong)):  # typed results subclass Result
            self._resolve(message)
            return None
        if type(message) is Ping:
            self._reply(Pong(id=message.id))
            return None
        return self.inbox.take(message)

    def _resolve(self, message: Result | Failure | Pong) -> None:
        future = self._pending.get(message.id)
        if future is None or future.done():
            log.debug("%s: reply for unknown or finished request %s", self.name, message.id)
            return
        if isinstance(message, Failure):
            future.set_exception(RemoteError(message.error))
        else:
            future.set_result(message.value if isinstance(message, Result) else msgspec.Raw(b"null"))

    def report(self, exc: ProtocolError) -> None:
        # A malformed reply still ends the request it was meant for.
        if exc.request_id is not None:
            future = self._pending.get(exc.request_id)
            if future is not None and not future.done():
                future.set_exception(RequestError(ErrorInfo(code=exc.code, message=f"invalid reply: {exc.message}")))
        self._reply(ProtocolErrorReport(error=exc.info(), request_id=exc.request_id))

    def _reply(self, message: Message) -> None:
        try:
            self.send(message)
        except RequestError as exc:
            log.warning("%s: could not send %s: %s", self.name, type(message).__name__, exc)

    # ------------------------------------------------------------------ closing

    def _begin_close(self, reason: str) -> None:
        if self.closed.is_set():
            return
        self._close_reason = reason
        self.closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(Disconnected(f"{self.name} link closed: {reason}"))
        self.outbox.stop()  # let queued frames drain, then stop
        log.info("%s link closed: %s", self.name, reason)

    async def close(self, reason: str = "closed by host", drain_timeout: float = 2.0) -> None:
        """Close the link: fail waiting requests, flush what is queued, stop the tasks.

        From one of the endpoint's own handlers this only starts the close (queued frames are
        still written): the task that owns the endpoint finishes it, so two closes never wait
        on each other.
        """
        self._begin_close(reason)
        current = asyncio.current_task()
        if current in self._tasks:
            return
        writer = next((t for t in self._tasks if t.get_name().endswith("writer")), None)
        if writer is not None:
            try:
                await asyncio.wait_for(asyncio.shield(writer), drain_timeout)
            except (asyncio.TimeoutError, Exception):
                pass
        self.outbox.sink.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
