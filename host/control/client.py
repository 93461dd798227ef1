"""A client for a running host's control endpoint (used by the REPL, `launch` and tests)."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from protocol.control import ControlEvent, ControlRequest, ControlServerMessage, ControlWelcome, ControlHello
from protocol.errors import ErrorCode, ErrorInfo
from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder
from protocol.limits import BROWSER_LIMITS

from host.control import discovery
from host.transport.endpoint import Endpoint, StreamSink
from host.transport.errors import RequestError


class ControlClient:
    """An authenticated connection to one host."""

    def __init__(self, endpoint: Endpoint, welcome: ControlWelcome):
        self.endpoint = endpoint
        self.welcome = welcome
        self.events: asyncio.Queue[ControlEvent] = asyncio.Queue(10_000)
        self._listeners: list[Callable[[ControlEvent], None]] = []
        endpoint.on(ControlEvent, self._on_event)

    @classmethod
    async def connect(cls, pid: int | None = None, client: str = "client", timeout: float = 5.0) -> "ControlClient":
        """Attach to the host with `pid`, or to the newest running host."""
        hosts = discovery.running_hosts()
        if pid is not None:
            hosts = [h for h in hosts if h.pid == pid]
        if not hosts:
            raise RequestError(ErrorInfo(code=ErrorCode.NOT_FOUND, message="no running Tabwarden host found" + (f" with pid {pid}" if pid else "")))
        entry = hosts[0]
        reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(entry.socket_path)), timeout)
        welcome_box: asyncio.Future[ControlWelcome] = asyncio.get_running_loop().create_future()
        endpoint = Endpoint(
            reader, StreamSink(writer),
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

    async def call(self, method: str, timeout: float = 60.0, **params: Any) -> Any:
        """Run a control method and return its value (raises RequestError on failure)."""
        return await self.endpoint.request(
            lambda i: ControlRequest(id=i, method=method, params=params, timeout_ms=int(timeout * 1000)),
            timeout + 1,
        )

    def listen(self, callback: Callable[[ControlEvent], None]) -> None:
        self._listeners.append(callback)

    def _on_event(self, event: ControlEvent) -> None:
        for callback in self._listeners:
            callback(event)
        try:
            self.events.put_nowait(event)
        except asyncio.QueueFull:
            pass

    async def close(self) -> None:
        await self.endpoint.close("client done")
