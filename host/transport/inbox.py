"""Where an endpoint's incoming messages wait for their handlers: a bounded queue, one dispatcher
task that hands each message to its handler in arrival order, and what happens to a message the
queue cannot take (replies to requests never come here: the endpoint resolves them at once).

    a request the queue cannot take  ->  its refusal (`overloaded`, retryable, with a
                                         `retryAfterMs` hint), sent as any reply
    any other message                ->  the reader waits for room (back-pressure on the peer);
                                         after `INBOUND_WAIT_S` the message is refused through
                                         `refuse`, or dropped and logged
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from protocol.errors import ErrorCode, ErrorInfo
from protocol.messages import Cancel, Failure, Message

from host.transport.errors import RequestError

log = logging.getLogger("tabwarden.transport")

Handler = Callable[[Message], Awaitable[None] | None]
# Builds the refusal for a message without a request id that could not be taken (None: drop it).
Refuser = Callable[[Message, ErrorInfo], "Message | None"]

INBOUND_WAIT_S = 5.0  # how long the reader holds a message while the dispatcher catches up
RETRY_AFTER_MS = 250  # the hint an `overloaded` refusal carries


class Inbox:
    """The incoming side of one endpoint (see the module docstring). `deliver` sends a refusal
    back to the peer, waiting for room; `name` is the link's, for the log."""

    def __init__(self, maxsize: int, deliver: Callable[[Message], Awaitable[None]], *, name: str,
                 refuse: Refuser | None = None):
        self._queue: asyncio.Queue[Message] = asyncio.Queue(maxsize)
        self._deliver = deliver
        self._name = name
        self._refuse = refuse
        self.refused = 0  # messages answered `overloaded` because the host could not take them
        self.handlers: dict[type, Handler] = {}
        self.fallback: Handler | None = None

    def take(self, message: Message) -> Awaitable[None] | None:
        """Queue `message` for its handler; when the queue is full, what the reader must wait
        for before it reads on (the refusal's sending, or the wait for room)."""
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            request_id = getattr(message, "id", None)
            if isinstance(request_id, int) and type(message) is not Cancel:
                return self._refuse_now(message, request_id)
            return self._place_when_room(message)
        return None

    async def run(self) -> None:
        """The dispatcher: each message to its handler (or the fallback), one at a time; a
        handler that fails is logged and the next message goes on."""
        while True:
            message = await self._queue.get()
            handler = self.handlers.get(type(message), self.fallback)
            if handler is None:
                log.info("%s: no handler for %s", self._name, type(message).__name__)
                continue
            try:
                outcome = handler(message)
                if outcome is not None:
                    await outcome
            except Exception:
                log.exception("%s: handler for %s failed", self._name, type(message).__name__)

    def _overloaded(self, kind: str) -> ErrorInfo:
        return ErrorInfo(code=ErrorCode.OVERLOADED, retryable=True, details={"retryAfterMs": RETRY_AFTER_MS},
                         message=f"the host is busy ({self._queue.maxsize} messages waiting): {kind} was not "
                                 f"taken; try again in {RETRY_AFTER_MS} ms")

    async def _refuse_now(self, message: Message, request_id: int) -> None:
        self.refused += 1
        if self.refused == 1 or self.refused % 1000 == 0:
            log.warning("%s: inbound queue full, refused %d requests so far", self._name, self.refused)
        try:
            await self._deliver(Failure(id=request_id, error=self._overloaded(type(message).__name__)))
        except RequestError:
            pass  # the link closed: the peer's request ends with it

    async def _place_when_room(self, message: Message) -> None:
        try:
            await asyncio.wait_for(self._queue.put(message), INBOUND_WAIT_S)
            return
        except asyncio.TimeoutError:
            pass
        self.refused += 1
        refusal = self._refuse(message, self._overloaded(type(message).__name__)) if self._refuse else None
        if refusal is None:
            log.error("%s: the dispatcher took nothing for %g s; dropping %s", self._name, INBOUND_WAIT_S,
                      type(message).__name__)
            return
        try:
            await self._deliver(refusal)
        except RequestError:
            pass
