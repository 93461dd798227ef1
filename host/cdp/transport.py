"""How CDP commands reach the browser: the seam between the CDP client and the wire.

`CdpTransport` is the small interface the client needs (like httpx's transports): send one
command to a tab (optionally a flat child session) and get its result decoded into a type, and
deliver the browser's events and detach notices to one sink. `EndpointTransport` is the real
one, over the native-messaging endpoint (`cdp.command` frames through the extension's
`chrome.debugger` bridge); tests plug in fakes, and the benchmark a direct websocket.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Protocol

from protocol.messages import CdpBatch, CdpBatchOutcome, CdpCommand, CdpDetached, CdpEvent, CdpStep

from host.cdp.errors import CdpCode, CdpError
from host.transport.errors import Disconnected, Overloaded, RemoteError, RequestError, RequestTimeout

# The extension enforces the deadline itself; the host waits this much longer for its answer.
BRIDGE_GRACE_S = 2.0

EventSink = Callable[[int, str | None, str, dict[str, Any]], None]
DetachSink = Callable[[int, str], None]


class CdpTransport(Protocol):
    """Carries CDP commands to a browser and its events back."""

    async def command(self, tab_id: int, session_id: str | None, method: str, params: dict[str, Any], *,
                      timeout: float, result_type: Any = Any, trim: str | None = None) -> Any:
        """Send one command; return its result decoded into `result_type`; raise CdpError.
        `trim`: what the bridge may leave out of the result (see `CdpCommand.trim`)."""
        ...

    def connect(self, on_event: EventSink, on_detached: DetachSink) -> None:
        """Deliver every event `(tab, session, method, params)` and detach `(tab, reason)`."""
        ...


class EndpointTransport:
    """CDP through the extension: `cdp.command` frames over the host's native-messaging endpoint.

    Inbound `cdp.event` and `cdp.detached` frames are routed here through the endpoint's public
    `on` hook, installed once per endpoint when the first command goes out (no event can come
    before the debugger attaches, which only a command does).
    """

    def __init__(self, endpoint: Callable[[], Any]):
        self._endpoint = endpoint
        self._on_event: EventSink | None = None
        self._on_detached: DetachSink | None = None
        self._hooked: "weakref.WeakSet[Any]" = weakref.WeakSet()

    def connect(self, on_event: EventSink, on_detached: DetachSink) -> None:
        self._on_event = on_event
        self._on_detached = on_detached

    def deliver(self, message: CdpEvent | CdpDetached) -> None:
        """Hand one inbound frame to the sink (also usable as a HostServices listener)."""
        if isinstance(message, CdpEvent):
            if self._on_event is not None:
                self._on_event(message.tab_id, message.session_id, message.method, message.params)
        elif self._on_detached is not None:
            self._on_detached(message.tab_id, message.reason)

    def _live(self) -> Any:
        endpoint = self._endpoint()
        if endpoint is None or not endpoint.is_open:
            raise CdpError(CdpCode.NOT_CONNECTED, "no browser is connected to the host", retryable=True)
        if endpoint not in self._hooked:
            hook = getattr(endpoint, "on", None)
            if hook is not None:  # test stand-ins for the endpoint may carry no events
                hook(CdpEvent, self.deliver)
                hook(CdpDetached, self.deliver)
            self._hooked.add(endpoint)
        return endpoint

    async def command(self, tab_id: int, session_id: str | None, method: str, params: dict[str, Any], *,
                      timeout: float, result_type: Any = Any, trim: str | None = None) -> Any:
        deadline_ms = max(1, min(int(timeout * 1000), 600_000))
        return await self._request(lambda i: CdpCommand(id=i, tab_id=tab_id, session_id=session_id, method=method,
                                                        params=params, deadline_ms=deadline_ms, trim=trim),
                                   method, timeout, result_type)

    async def batch(self, tab_id: int, steps: list[CdpStep], *, timeout: float, list_tabs: bool = False) -> CdpBatchOutcome:
        """Run `steps` one after the other in the extension (see `CdpBatch`); raises CdpError
        only when the batch as a whole failed (nothing ran, or its answer was lost)."""
        deadline_ms = max(1, min(int(timeout * 1000), 600_000))
        return await self._request(lambda i: CdpBatch(id=i, tab_id=tab_id, steps=steps, list_tabs=list_tabs,
                                                      deadline_ms=deadline_ms),
                                   steps[0].method if len(steps) == 1 else f"a batch of {len(steps)} commands",
                                   timeout, CdpBatchOutcome)

    async def _request(self, build: Callable[[int], Any], method: str, timeout: float, result_type: Any) -> Any:
        endpoint = self._live()
        try:
            return await endpoint.request(build, timeout + BRIDGE_GRACE_S, result_type=result_type)
        except RemoteError as exc:
            info = exc.info
            details = dict(info.details or {})
            dispatched = info.code not in (CdpCode.DOMAIN_NOT_ALLOWED, CdpCode.ATTACH_FAILED) and \
                details.get("dispatched") is not False
            raise CdpError(info.code, info.message, retryable=info.retryable, dispatched=dispatched,
                           details=details) from None
        except RequestTimeout:
            raise CdpError(CdpCode.TIMEOUT, f"{method} got no answer within {timeout:g} s; it was cancelled",
                           retryable=True, dispatched=True) from None
        except Disconnected as exc:
            raise CdpError(CdpCode.NOT_CONNECTED, exc.info.message, retryable=True, dispatched=True) from None
        except Overloaded as exc:
            raise CdpError(exc.code, exc.info.message, retryable=True) from None
        except RequestError as exc:
            raise CdpError(CdpCode.INVALID_RESULT, f"{method}: {exc.info.message}", dispatched=True) from None
