"""The control server: a user-only local endpoint plus a token, serving named methods.

A connection is refused (and logged, see `refusals`) when the OS reports another user, when its
first frame is not a hello with the right token, when it sends more than a hello before one, or
when it says nothing within the hello timeout. Several clients may be attached at once; each
request runs in its own task so a slow one never blocks the others, and a client may cancel its
own requests. Events go to the clients subscribed to their topic (see `topics`).

The channel (Unix socket or Windows named pipe) sits behind `transport`.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import time
from typing import Any, Awaitable, Callable

import msgspec

from protocol.control import ControlEvent, ControlHello, ControlRequest, ControlWelcome
from protocol.errors import ErrorCode, ErrorInfo, ProtocolError
from protocol.framing import FrameEncoder
from protocol.messages import Cancel, Failure, Result

from host import __version__
from host.calls import after_answer
from host.control import discovery, refusals, transport
from host.control.channel import Listener, Peer
from host.control.errors import ControlError
from host.control.hello_gate import GatedDecoder, GatedSplitter, HelloGate
from host.control.topics import any_matches
from host.transport.endpoint import RETRY_AFTER_MS, Endpoint, FrameSink
from host.transport.errors import RequestError

log = logging.getLogger("tabwarden.control")

Method = Callable[[dict[str, Any], "ControlConnection"], Awaitable[Any]]

MAX_REQUESTS_PER_CLIENT = 64


# How long a stopping server waits for the requests it cut off to end.
STOP_WAIT_S = 2.0


class ControlServer:
    """Serves the control methods registered on it to authenticated local clients of one host
    process; `methods.control_server` makes one with every built-in and subsystem method."""

    def __init__(self, host: Any, hello_timeout: float = 5.0, transport_kind: str | None = None):
        self.host = host
        self.methods: dict[str, Method] = {}
        self.connections: set[ControlConnection] = set()
        self.refusals = refusals.RefusalLog()
        self.kind = transport_kind or transport.default_kind()
        self.address = ""
        self._hello_timeout = hello_timeout
        self._listener: Listener | None = None
        self._folder = None
        self._socket_path = None
        self._token = ""

    def register(self, name: str, method: Method) -> None:
        """Serve `method` under `name` (dotted, lowercase)."""
        self.methods[name] = method

    async def start(self) -> None:
        """Listen (user-only) and announce the endpoint and its token."""
        pid = os.getpid()
        self._folder, self._socket_path, self._token = discovery.publish(pid, self.kind)
        self.address = str(self._socket_path)
        self._listener = await transport.listen(self.kind, self.address, self._accept)
        discovery.write_info(self._folder, self._socket_path, pid, self.kind)
        log.info("control endpoint at %s", self.address)

    async def stop(self) -> None:
        """Stop listening, close every client and withdraw the announcement; the work the
        answered requests left for later runs now, before the host goes."""
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
        running: list[asyncio.Task[None]] = []
        for connection in list(self.connections):
            running += connection.tasks()
            await connection.endpoint.close("host shutting down")
        for task in running:
            task.cancel()
        # Requests cut off by the close hand their work over as they end: wait for them (a
        # while, so one that will not end cannot keep the host from exiting).
        if running:
            await asyncio.wait(running, timeout=STOP_WAIT_S)
        if self._folder is not None:
            discovery.unpublish(self._folder, self._socket_path)
        after_answer.flush()

    def broadcast(self, topic: str, data: Any) -> None:
        """Send an event to every attached client subscribed to `topic`."""
        for connection in list(self.connections):
            if any_matches(connection.topics, topic):
                connection.push(topic, data)

    def token_matches(self, token: str) -> bool:
        """Constant-time comparison with this host's token."""
        return bool(self._token) and hmac.compare_digest(token.encode(), self._token.encode())

    async def _accept(self, reader: asyncio.StreamReader, sink: FrameSink, peer: Peer) -> None:
        if peer.same_user is not True:
            code = refusals.UNKNOWN_PEER if peer.same_user is None else refusals.FOREIGN_USER
            self.refusals.refuse(code, f"peer is {peer.identity}; this host serves its own user only")
            sink.close()
            return
        connection = ControlConnection(self, reader, sink, peer)
        await connection.serve(self._hello_timeout)


class ControlConnection:
    """One attached client: its subscriptions, its running requests, its endpoint."""

    def __init__(self, server: ControlServer, reader: asyncio.StreamReader, sink: FrameSink,
                 peer: Peer | None = None):
        self.server = server
        self.peer = peer
        self.topics: set[str] = set()
        self.client = ""
        self.connected_at = time.time()
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._hello = asyncio.Event()
        self.gate = HelloGate(server.token_matches, self._refuse)
        self.endpoint = Endpoint(
            reader, sink, decoder=GatedDecoder(self.gate), encoder=FrameEncoder(), splitter=GatedSplitter(self.gate),
            name="control client",
        )
        self.endpoint.on(ControlHello, self._on_hello)
        self.endpoint.on(ControlRequest, self._on_request)
        self.endpoint.on(Cancel, self._on_cancel)

    @property
    def authenticated(self) -> bool:
        return self.gate.open

    def _refuse(self, code: str, detail: str) -> None:
        self.server.refusals.refuse(code, detail)
        self._hello.set()
        asyncio.ensure_future(self.endpoint.close(f"refused: {code}"))

    async def serve(self, hello_timeout: float) -> None:
        """Run the connection until the client leaves (or is refused)."""
        self.endpoint.start()
        closed = asyncio.ensure_future(self.endpoint.closed.wait())
        hello = asyncio.ensure_future(self._hello.wait())
        await asyncio.wait({closed, hello}, timeout=hello_timeout, return_when=asyncio.FIRST_COMPLETED)
        hello.cancel()
        if not self.authenticated:
            if not self.gate.refused:
                what = "closed the connection" if closed.done() else f"sent no hello within {hello_timeout:g} s"
                self.gate.refuse(refusals.NO_HELLO, f"client {what}")
            closed.cancel()
            await self.endpoint.close(self.endpoint.close_reason or "refused")
            return
        self.server.connections.add(self)
        try:
            await closed
        finally:
            self.server.connections.discard(self)
            for task in self._tasks.values():
                task.cancel()
            await self.endpoint.close(self.endpoint.close_reason or "closed")
            log.info("control client %r detached", self.client)

    def tasks(self) -> list["asyncio.Task[None]"]:
        """The requests of this client still running."""
        return list(self._tasks.values())

    def push(self, topic: str, data: Any) -> None:
        """Send one event to this client (dropped, with a warning, if it cannot keep up)."""
        try:
            self.endpoint.send(ControlEvent(topic=topic, data=data))
        except RequestError as exc:
            log.warning("dropping %s event for %s: %s", topic, self.client or "client", exc)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready view for `control.clients`."""
        return {"client": self.client, "connectedAt": self.connected_at, "topics": sorted(self.topics),
                "running": len(self._tasks), "peer": self.peer.identity if self.peer else None}

    async def _on_hello(self, hello: ControlHello) -> None:
        # The gate checked the token while decoding; a second hello is ignored.
        if self._hello.is_set():
            return
        self.client = hello.client
        host = self.server.host
        session = getattr(host, "session", None)
        self.endpoint.send(ControlWelcome(
            host_version=__version__, pid=os.getpid(), extension_id=getattr(host, "extension_id", "") or "",
            browser_session_id=session.browser_session_id if session else None,
        ))
        log.info("control client %r attached", hello.client)
        self._hello.set()

    async def _on_request(self, request: ControlRequest) -> None:
        if len(self._tasks) >= MAX_REQUESTS_PER_CLIENT:
            # Waiting here holds the dispatcher, so the queue behind it fills and is refused too.
            await self._answer(Failure(id=request.id, error=ErrorInfo(
                code=ErrorCode.OVERLOADED, retryable=True, details={"retryAfterMs": RETRY_AFTER_MS},
                message=f"{MAX_REQUESTS_PER_CLIENT} requests of this client are already running; "
                        f"try again in {RETRY_AFTER_MS} ms")))
            return
        self._tasks[request.id] = asyncio.create_task(self._run(request))

    async def _run(self, request: ControlRequest) -> None:
        after_answer.flush()  # what the requests answered before left: this one sees it done
        # Bookkeeping the request's calls leave for later runs once the answer has gone.
        with after_answer.collecting() as leftover:
            try:
                reply = await self._outcome(request)
            except asyncio.CancelledError:
                reply = Failure(id=request.id, error=ErrorInfo(code=ErrorCode.CANCELLED, message="cancelled by the client"))
        try:
            await self._answer(reply)
        finally:
            self._tasks.pop(request.id, None)
            await after_answer.finish(leftover)

    async def _outcome(self, request: ControlRequest) -> Result | Failure:
        """The request's result, or its failure in the one failure shape."""
        try:
            method = self.server.methods.get(request.method)
            if method is None:
                raise ControlError(ErrorCode.NOT_FOUND, f"no control method {request.method!r}")
            async with asyncio.timeout(request.timeout_ms / 1000):  # runs in this task: no task of its own
                value = await method(request.params, self)
            return Result(id=request.id, value=value)
        except (ControlError, RequestError) as exc:
            info = exc.info
        except ProtocolError as exc:
            info = exc.info()
        except TimeoutError:
            info = ErrorInfo(code=ErrorCode.TIMEOUT, message=f"{request.method} took longer than {request.timeout_ms} ms")
        except Exception as exc:
            code = getattr(exc, "code", None)
            if isinstance(code, str) and code == "storage_unavailable":
                info = ErrorInfo(code=code, message=str(exc), retryable=True)  # storage heals: worth a retry
            else:
                log.exception("control method %s failed", request.method)
                info = ErrorInfo(code=ErrorCode.INTERNAL, message=f"{type(exc).__name__}: {exc}")
        return Failure(id=request.id, error=info)

    async def _answer(self, reply: Result | Failure) -> None:
        """Send a reply, waiting for room: a client's request always gets its answer."""
        try:
            await self.endpoint.deliver(reply)
        except RequestError:
            pass  # the client went away
        except (ProtocolError, msgspec.EncodeError, TypeError, ValueError) as exc:  # a result that cannot be sent
            log.warning("the reply to control request %s cannot be sent: %s", reply.id, exc)
            code = exc.code if isinstance(exc, ProtocolError) else ErrorCode.INTERNAL
            try:
                await self.endpoint.deliver(Failure(id=reply.id, error=ErrorInfo(
                    code=code, message=f"the result cannot be sent: {exc}")))
            except RequestError:
                pass

    def _on_cancel(self, cancel: Cancel) -> None:
        task = self._tasks.get(cancel.id)
        if task is not None:
            task.cancel()
