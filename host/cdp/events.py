"""`EventBus`: many handlers per CDP event, called off the receive loop.

cdp-use keeps one callback per event method (a second registration silently replaces the
first) and runs it inside its websocket reader, so a slow handler delays every reply. Here
`publish` only queues the event; a dispatcher task calls every matching handler in arrival
order (coroutines are started as tasks of their own), and a handler that raises is logged and
does not stop the others. `wait_for` awaits the first event matching a predicate.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

log = logging.getLogger("tabwarden.cdp")

MAX_QUEUED = 20_000


@dataclass(frozen=True, slots=True)
class CdpEventRecord:
    """One event from the browser: the tab, the flat session (None: the tab's own) and the
    event itself."""

    tab_id: int
    session_id: str | None
    method: str
    params: dict[str, Any] = field(default_factory=dict)


Handler = Callable[[CdpEventRecord], Any]


class Subscription:
    """A registered handler; `close()` removes it."""

    __slots__ = ("bus", "method", "tab_id", "handler", "active")

    def __init__(self, bus: "EventBus", method: str | None, tab_id: int | None, handler: Handler):
        self.bus = bus
        self.method = method
        self.tab_id = tab_id
        self.handler = handler
        self.active = True

    def matches(self, event: CdpEventRecord) -> bool:
        return self.active and (self.method is None or self.method == event.method) and (
            self.tab_id is None or self.tab_id == event.tab_id)

    def close(self) -> None:
        if self.active:
            self.active = False
            self.bus._remove(self)


class EventBus:
    """Fan-out of CDP events to any number of handlers."""

    def __init__(self, max_queued: int = MAX_QUEUED):
        self._subscriptions: list[Subscription] = []
        self._queue: deque[CdpEventRecord] = deque()
        self._max_queued = max_queued
        self._wakeup: asyncio.Event | None = None
        self._dispatcher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.dropped = 0

    def subscribe(self, method: str | None, handler: Handler, *, tab_id: int | None = None) -> Subscription:
        """Call `handler(event)` for every event named `method` (every event when None), of one
        tab or of all tabs."""
        subscription = Subscription(self, method, tab_id, handler)
        self._subscriptions.append(subscription)
        return subscription

    def _remove(self, subscription: Subscription) -> None:
        try:
            self._subscriptions.remove(subscription)
        except ValueError:
            pass

    def publish(self, event: CdpEventRecord) -> None:
        """Queue an event for the handlers; never blocks and never runs a handler itself."""
        if not self._subscriptions:
            return
        if len(self._queue) >= self._max_queued:
            self._queue.popleft()
            self.dropped += 1
            if self.dropped in (1, 100, 10_000):
                log.warning("CDP event queue full: %d events dropped so far", self.dropped)
        self._queue.append(event)
        self._ensure_dispatcher()
        assert self._wakeup is not None
        self._wakeup.set()

    def _ensure_dispatcher(self) -> None:
        if self._dispatcher is None or self._dispatcher.done():
            self._wakeup = asyncio.Event()
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch(), name="cdp-events")

    async def _dispatch(self) -> None:
        assert self._wakeup is not None
        while True:
            while not self._queue:
                self._wakeup.clear()
                await self._wakeup.wait()
            event = self._queue.popleft()
            for subscription in list(self._subscriptions):
                if subscription.matches(event):
                    self._call(subscription, event)

    def _call(self, subscription: Subscription, event: CdpEventRecord) -> None:
        try:
            outcome = subscription.handler(event)
        except Exception:
            log.exception("CDP handler for %s failed", event.method)
            return
        if inspect.isawaitable(outcome):
            task = asyncio.ensure_future(outcome)
            self._tasks.add(task)
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("CDP handler task failed", exc_info=task.exception())

    async def wait_for(self, method: str, predicate: Callable[[CdpEventRecord], bool] = lambda e: True, *,
                       tab_id: int | None = None, timeout: float = 5.0) -> CdpEventRecord:
        """The first event named `method` (of `tab_id`) for which `predicate` holds; raises
        asyncio.TimeoutError after `timeout` seconds."""
        future: asyncio.Future[CdpEventRecord] = asyncio.get_running_loop().create_future()

        def check(event: CdpEventRecord) -> None:
            if not future.done() and predicate(event):
                future.set_result(event)

        subscription = self.subscribe(method, check, tab_id=tab_id)
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            subscription.close()

    async def close(self) -> None:
        """Stop dispatching and cancel running handler tasks."""
        tasks = [t for t in (self._dispatcher, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._dispatcher = None
        self._tasks.clear()
        self._subscriptions.clear()
        self._queue.clear()
