"""The control server: a user-only Unix socket plus a token, serving named methods.

A connection is refused (and logged) when the kernel reports another uid, when its first
frame is not a hello with the right token, or when it says anything outside the control
protocol. Several clients may be attached at once; each request runs in its own task so a
slow one never blocks the others, and a client may cancel its own requests.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
from typing import Any, Awaitable, Callable

from protocol.control import ControlClientMessage, ControlEvent, ControlHello, ControlRequest, ControlWelcome
from protocol.errors import ErrorCode, ErrorInfo, ProtocolError
from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder
from protocol.limits import UI_OP_LIMITS
from protocol.messages import Cancel, Failure, Result

from host import __version__
from host.control import discovery
from host.control.peer import peer_uid
from host.transport.endpoint import Endpoint, StreamSink
from host.transport.errors import RequestError

log = logging.getLogger("tabwarden.control")

Method = Callable[[dict[str, Any], "ControlConnection"], Awaitable[Any]]


class ControlError(Exception):
    """A method's structured failure."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.info = ErrorInfo(code=code, message=message, details=details)


class ControlServer:
    def __init__(self, host: Any, hello_timeout: float = 5.0):
        self.host = host
        self.methods: dict[str, Method] = {}
        self.connections: set[ControlConnection] = set()
        self._hello_timeout = hello_timeout
        self._server: asyncio.AbstractServer | None = None
        self._folder = None
        self._socket_path = None
        self._token = ""
        from host.control.methods import register_builtin

        register_builtin(self)

    def register(self, name: str, method: Method) -> None:
        """Serve `method` under `name` (dotted, lowercase)."""
        self.methods[name] = method

    async def start(self) -> None:
        """Create the socket (mode 0600) and announce it."""
        if not hasattr(asyncio, "start_unix_server"):
            raise RuntimeError("the control endpoint needs Unix sockets on this OS")
        pid = os.getpid()
        self._folder, self._socket_path, self._token = discovery.publish(pid)
        try:
            self._socket_path.unlink()
        except FileNotFoundError:
            pass
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._accept, path=str(self._socket_path))
        finally:
            os.umask(old_umask)
        os.chmod(self._socket_path, 0o600)
        discovery.write_info(self._folder, self._socket_path, pid)
        log.info("control endpoint at %s", self._socket_path)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for connection in list(self.connections):
                await connection.endpoint.close("host shutting down")
            try:
                await asyncio.wait_for(self._server.wait_closed(), 2)
            except asyncio.TimeoutError:
                pass
        if self._folder is not None:
            discovery.unpublish(self._folder, self._socket_path)

    def broadcast(self, topic: str, data: Any) -> None:
        """Send an event to every attached client subscribed to `topic`."""
        for connection in list(self.connections):
            if topic in connection.topics:
                connection.push(topic, data)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if not hasattr(os, "getuid") or uid != os.getuid():
            log.warning("refused control connection from uid %s (host runs as uid %s)", uid, getattr(os, "getuid", lambda: "?")())
            writer.close()
            return
        connection = ControlConnection(self, reader, writer)
        await connection.serve(self._hello_timeout)

    def token_matches(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self._token.encode())


class ControlConnection:
    def __init__(self, server: ControlServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.server = server
        self.topics: set[str] = set()
        self.authenticated = False
        self.client = ""
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._hello = asyncio.Event()
        self.endpoint = Endpoint(
            reader, StreamSink(writer),
            decoder=MessageDecoder(ControlClientMessage, UI_OP_LIMITS),
            encoder=FrameEncoder(), splitter=FrameSplitter(), name="control client",
        )
        self.endpoint.on(ControlHello, self._on_hello)
        self.endpoint.on(ControlRequest, self._on_request)
        self.endpoint.on(Cancel, self._on_cancel)

    async def serve(self, hello_timeout: float) -> None:
        self.endpoint.start()
        try:
            await asyncio.wait_for(self._hello.wait(), hello_timeout)
        except asyncio.TimeoutError:
            log.warning("control client sent no hello within %g s; closing", hello_timeout)
            await self.endpoint.close("no hello")
            return
        if not self.authenticated:
            return
        self.server.connections.add(self)
        try:
            await self.endpoint.closed.wait()
        finally:
            self.server.connections.discard(self)
            for task in self._tasks.values():
                task.cancel()
            await self.endpoint.close(self.endpoint.close_reason or "closed")

    def push(self, topic: str, data: Any) -> None:
        try:
            self.endpoint.send(ControlEvent(topic=topic, data=data))
        except RequestError as exc:
            log.warning("dropping %s event for %s: %s", topic, self.client or "client", exc)

    async def _on_hello(self, hello: ControlHello) -> None:
        if self.authenticated:
            return
        if not self.server.token_matches(hello.token):
            log.warning("refused control client %r: wrong token", hello.client)
            self._hello.set()
            await self.endpoint.close("wrong token")
            return
        self.authenticated = True
        self.client = hello.client
        host = self.server.host
        session = getattr(host, "session", None)
        self.endpoint.send(ControlWelcome(
            host_version=__version__, pid=os.getpid(), extension_id=getattr(host, "extension_id", ""),
            browser_session_id=session.browser_session_id if session else None,
        ))
        log.info("control client %r attached", hello.client)
        self._hello.set()

    async def _on_request(self, request: ControlRequest) -> None:
        if not self.authenticated:
            log.warning("control request before hello; closing")
            await self.endpoint.close("request before hello")
            return
        if len(self._tasks) >= 64:
            self._fail(request.id, ErrorInfo(code=ErrorCode.OVERLOADED, message="64 requests already running"))
            return
        self._tasks[request.id] = asyncio.create_task(self._run(request))

    async def _run(self, request: ControlRequest) -> None:
        try:
            method = self.server.methods.get(request.method)
            if method is None:
                raise ControlError(ErrorCode.NOT_FOUND, f"no control method {request.method!r}")
            value = await asyncio.wait_for(method(request.params, self), request.timeout_ms / 1000)
            self.endpoint.send(Result(id=request.id, value=value))
        except ControlError as exc:
            self._fail(request.id, exc.info)
        except RequestError as exc:
            self._fail(request.id, exc.info)
        except ProtocolError as exc:
            self._fail(request.id, exc.info())
        except asyncio.TimeoutError:
            self._fail(request.id, ErrorInfo(code=ErrorCode.TIMEOUT, message=f"{request.method} took longer than {request.timeout_ms} ms"))
        except asyncio.CancelledError:
            self._fail(request.id, ErrorInfo(code=ErrorCode.CANCELLED, message="cancelled by the client"))
        except Exception as exc:
            log.exception("control method %s failed", request.method)
            self._fail(request.id, ErrorInfo(code=ErrorCode.INTERNAL, message=f"{type(exc).__name__}: {exc}"))
        finally:
            self._tasks.pop(request.id, None)

    def _fail(self, request_id: int, info: ErrorInfo) -> None:
        try:
            self.endpoint.send(Failure(id=request_id, error=info))
        except RequestError:
            pass

    def _on_cancel(self, cancel: Cancel) -> None:
        task = self._tasks.get(cancel.id)
        if task is not None:
            task.cancel()
