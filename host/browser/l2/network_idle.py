"""Network-idle waits for trusted actions: requests are tracked from just before the action;
after it, the wait ends once no request has been in flight for 500 ms, or after 5 s at most
(a page with a long-lived connection never goes idle: `settled` is then False)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.cdp.events import CdpEventRecord, Subscription

IDLE_S = 0.5
CAP_S = 5.0
_STARTED = "Network.requestWillBeSent"
_ENDED = ("Network.loadingFinished", "Network.loadingFailed")


@dataclass(frozen=True)
class Settled:
    settled: bool
    waited_ms: int
    requests: int  # requests seen since tracking began
    pending: int  # still in flight when the wait ended


class NetworkIdle:
    """Tracks the tab's requests (its own session and its frame sessions) while it is open."""

    def __init__(self, client: TabClient):
        self._client = client
        self._inflight: set[tuple[str | None, str]] = set()
        self._seen = 0
        self._changed = asyncio.Event()
        self._last_activity = 0.0
        self._subscriptions: list[Subscription] = []
        self._sessions: list[str | None] = []

    def _on_event(self, event: CdpEventRecord) -> None:
        request_id = event.params.get("requestId")
        if not isinstance(request_id, str):
            return
        key = (event.session_id, request_id)
        if event.method == _STARTED:
            if key not in self._inflight:
                self._seen += 1
            self._inflight.add(key)
        else:
            self._inflight.discard(key)
        self._last_activity = asyncio.get_running_loop().time()
        self._changed.set()

    async def __aenter__(self) -> "NetworkIdle":
        for method in (_STARTED, *_ENDED):
            self._subscriptions.append(self._client.on(method, self._on_event))
        self._sessions = [None, *self._client.state.sessions]
        for session in self._sessions:
            try:
                await self._client.send("Network.enable", {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0},
                                        session_id=session, timeout=5)
            except CdpError:
                pass  # a frame that went away: nothing to track there
        return self

    async def wait(self, idle: float = IDLE_S, cap: float = CAP_S) -> Settled:
        """Wait until `idle` seconds pass with nothing in flight, at most `cap` seconds."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + cap
        while True:
            now = loop.time()
            quiet_for = now - max(start, self._last_activity)
            if not self._inflight and quiet_for >= idle:
                return Settled(True, int((now - start) * 1000), self._seen, 0)
            if now >= deadline:
                return Settled(False, int((now - start) * 1000), self._seen, len(self._inflight))
            self._changed.clear()
            step = deadline - now if self._inflight else min(deadline - now, idle - quiet_for)
            try:
                await asyncio.wait_for(self._changed.wait(), max(0.01, step))
            except asyncio.TimeoutError:
                pass

    async def __aexit__(self, *exc: object) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        for session in self._sessions:
            try:
                await self._client.send("Network.disable", session_id=session, timeout=5)
            except CdpError:
                pass
