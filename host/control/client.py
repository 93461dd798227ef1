"""A client for a running host's control endpoint (used by the REPL, `launch` and tests)."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any, AsyncIterator, Callable

from protocol.control import ControlEvent, ControlHello, ControlRequest, ControlServerMessage, ControlWelcome
from protocol.errors import ErrorCode, ErrorInfo
from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder
from protocol.limits import BROWSER_LIMITS

from host.control import discovery, transport
from host.control.topics import any_matches
from host.transport.endpoint import Endpoint
from host.transport.errors import Disconnected, RequestError

STREAM_BACKLOG = 1000
MAX_RETRY_DELAY_S = 2.0


class ControlClient:
    """An authenticated connection to one host."""

    def __init__(self, endpoint: Endpoint, welcome: ControlWelcome):
        self.endpoint = endpoint
        self.welcome = welcome
        self.events: asyncio.Queue[ControlEvent] = asyncio.Queue(10_000)
        self._listeners: list[Callable[[ControlEvent], None]] = []
        self._topic_users: Counter[str] = Counter()
        endpoint.on(ControlEvent, self._on_event)

    @classmethod
    async def connect(cls, pid: int | None = None, client: str = "client", timeout: float = 5.0) -> "ControlClient":
        """Attach to the host with `pid`, or to the newest running host."""
        hosts = discovery.running_hosts()
        if pid is not None:
            hosts = [h for h in hosts if h.pid == pid]
        if not hosts:
            raise RequestError(ErrorInfo(code=ErrorCode.NOT_FOUND, message="no running Tabwarden host found" + (f" with pid {pid}" if pid else "") + (
                "; the browser starts it when the Tabwarden extension loads (`tabwarden doctor` checks the set-up, "
                "`tabwarden launch` starts a browser with it)")))
        return await cls.connect_to(hosts[0], client=client, timeout=timeout)

    @classmethod
    async def connect_to(cls, entry: discovery.HostEntry, client: str = "client", timeout: float = 5.0) -> "ControlClient":
        """Attach to one published host endpoint; raises RequestError when it refuses us."""
        reader, sink = await transport.connect(entry.transport, str(entry.socket_path), timeout)
        welcome_box: asyncio.Future[ControlWelcome] = asyncio.get_running_loop().create_future()
        endpoint = Endpoint(
            reader, sink,
            decoder=MessageDecoder(ControlServerMessage, BROWSER_LIMITS),
            encoder=FrameEncoder(), splitter=FrameSplitter(), name="host",
        )
        endpoint.on(ControlWelcome, lambda m: welcome_box.done() or welcome_box.set_result(m))
        endpoint.start()
        endpoint.send(ControlHello(token=entry.token(), client=client))
        closed = asyncio.ensure_future(endpoint.closed.wait())
        done, _ = await asyncio.wait({welcome_box, closed}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        closed.cancel()
        if welcome_box not in done:
            await endpoint.close("no welcome")
            raise RequestError(ErrorInfo(code=ErrorCode.FORBIDDEN_ORIGIN, message=f"host {entry.pid} refused the connection"))
        return cls(endpoint, welcome_box.result())

    @property
    def pid(self) -> int:
        """The host's process id."""
        return self.welcome.pid

    @property
    def is_open(self) -> bool:
        return self.endpoint.is_open

    async def call(self, method: str, timeout: float = 60.0, **params: Any) -> Any:
        """Run a control method and return its value (raises RequestError on failure)."""
        return await self.request(method, params, timeout)

    async def request(self, method: str, params: dict[str, Any], timeout: float = 60.0) -> Any:
        """Like `call`, with the parameters as a dict (for a method that itself takes `timeout`).
        A request the host refused as `overloaded` (it never ran) is sent again after the host's
        hint, politely longer each time, until `timeout` has passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        delay = 0.0
        while True:
            left = deadline - loop.time()
            try:
                return await self.endpoint.request(
                    lambda i: ControlRequest(id=i, method=method, params=params, timeout_ms=max(1, int(left * 1000))),
                    left + 1,
                )
            except RequestError as exc:
                if exc.code != ErrorCode.OVERLOADED or isinstance(exc, Disconnected):
                    raise
                hint = (exc.info.details or {}).get("retryAfterMs", 250) / 1000
                delay = min(max(hint, delay * 2), MAX_RETRY_DELAY_S) * random.uniform(0.8, 1.2)
                if loop.time() + delay >= deadline:
                    raise
                await asyncio.sleep(delay)

    def listen(self, callback: Callable[[ControlEvent], None]) -> None:
        """Call `callback` for every event this client receives."""
        self._listeners.append(callback)

    def unlisten(self, callback: Callable[[ControlEvent], None]) -> None:
        """Stop calling `callback` (no error if it was not listening)."""
        try:
            self._listeners.remove(callback)
        except ValueError:
            pass

    async def subscribe(self, *topics: str) -> list[str]:
        """Ask the host for events on `topics` (names, `family.*` or `*`); returns every
        subscription this client now holds."""
        self._topic_users.update(topics)
        return await self.call("host.subscribe", topics=list(topics))

    async def unsubscribe(self, *topics: str) -> list[str]:
        """Drop subscriptions taken with `subscribe` (one use each); returns what remains."""
        released = []
        for topic in topics:
            if self._topic_users[topic] > 0:
                self._topic_users[topic] -= 1
                if self._topic_users[topic] == 0:
                    released.append(topic)
        if not released:
            return sorted(t for t, n in self._topic_users.items() if n > 0)
        return await self.call("host.unsubscribe", topics=released)

    async def stream(self, *topics: str) -> AsyncIterator[ControlEvent]:
        """Subscribe to `topics` and yield their events as they arrive, until the host goes away
        or the caller stops iterating (which releases the subscription)."""
        wanted = set(topics)
        queue: asyncio.Queue[ControlEvent] = asyncio.Queue(STREAM_BACKLOG)

        def feed(event: ControlEvent) -> None:
            if any_matches(wanted, event.topic):
                if queue.full():
                    queue.get_nowait()  # a slow reader loses the oldest events, never the newest
                queue.put_nowait(event)

        self.listen(feed)
        try:
            await self.subscribe(*topics)
            while True:
                getter = asyncio.ensure_future(queue.get())
                closed = asyncio.ensure_future(self.endpoint.closed.wait())
                try:
                    await asyncio.wait({getter, closed}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    closed.cancel()
                    if not getter.done():
                        getter.cancel()
                if not getter.done() or getter.cancelled():
                    return
                yield getter.result()
        finally:
            self.unlisten(feed)
            if self.endpoint.is_open:
                try:
                    await self.unsubscribe(*topics)
                except RequestError:
                    pass

    def _on_event(self, event: ControlEvent) -> None:
        for callback in list(self._listeners):
            callback(event)
        try:
            self.events.put_nowait(event)
        except asyncio.QueueFull:
            pass

    async def close(self) -> None:
        await self.endpoint.close("client done")
