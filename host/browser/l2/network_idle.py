"""Waiting for what a trusted action set off on the network. Requests and frame loads are
tracked from just before the input. After it, one round trip through the page lets the input's
own handlers run (and start their requests): when nothing started, there is nothing to wait for
and the action returns at once. Otherwise the wait ends once nothing is in flight and QUIET_S
passes without a new start (a response often leads to one more request), or after CAP_S at
most (a long-lived connection never ends: `settled` is then False).

The round trip may run in our content scripts' isolated world of the frame the input landed in
(same event loop as the page, out of the page's reach): it then also brings back where the focus
is, as the snapshot would show it, at no extra round trip."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from protocol.messages import CdpStep

from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.cdp.events import CdpEventRecord, Subscription

QUIET_S = 0.1
CAP_S = 3.0
FLUSH_TIMEOUT_S = 1.0
ENABLE_TIMEOUT_MS = 5000
# Runs after the input's handlers and their promises; on a shown page, one more task of its event
# loop too (a message to itself). A hidden page runs such tasks tens of milliseconds late, its own
# follow-ups as much as ours, so there the round trip alone is the flush.
_FLUSH = ("document.visibilityState !== 'visible' ? Promise.resolve(0) : new Promise((done) => { "
          "const channel = new MessageChannel(); channel.port1.onmessage = () => done(0); channel.port2.postMessage(0); })")
# The Network.disable commands still on their way (kept referenced until they are answered).
_closing: set["asyncio.Future[None]"] = set()
# The same round trip in our isolated world, answering with the focused element's line and
# whether the page changed since the last snapshot.
_FLUSH_AND_FOCUS = (f"({_FLUSH}).then(() => {{ const tw = globalThis.__tabwarden; "
                    "return tw && tw.focusLine ? {focus: tw.focusLine(), changed: !!tw.state.changedSinceSnapshot} "
                    ": {focus: '', changed: false}; })")
_ENABLE = {"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}
_STARTED = ("Network.requestWillBeSent", "Page.frameStartedLoading")
_ENDED = ("Network.loadingFinished", "Network.loadingFailed", "Page.frameStoppedLoading")


@dataclass(frozen=True)
class Flushed:
    """What the round trip after input read in our isolated world of the top frame."""

    focus: str = ""  # the focused element's snapshot line
    page_changed: bool = False  # the document changed since its last snapshot


@dataclass(frozen=True)
class Settled:
    settled: bool
    waited_ms: int
    requests: int  # requests and frame loads seen since tracking began
    pending: int  # still in flight when the wait ended
    focus: str = ""  # the focused element's snapshot line, when the round trip could read it
    page_changed: bool = False  # the top document changed since its last snapshot (when it could be read)

    @property
    def waited_for_network(self) -> bool:
        """Whether the input set something off that was waited for."""
        return self.requests > 0


def _key(event: CdpEventRecord) -> tuple[str | None, str] | None:
    """What an event starts or ends: a request by its id, a frame load by its frame."""
    if event.method.startswith("Page."):
        frame = event.params.get("frameId")
        return (event.session_id, f"load:{frame}") if isinstance(frame, str) else None
    request = event.params.get("requestId")
    return (event.session_id, request) if isinstance(request, str) else None


class NetworkIdle:
    """Tracks the tab's requests and frame loads (its own session and its frame sessions) while
    it is open."""

    def __init__(self, client: TabClient, *, enable: bool = True):
        """`enable`: send Network.enable on entry; else the caller sends `enable_steps()` in
        a batch of its own, before the input."""
        self._client = client
        self._enable = enable
        self._inflight: set[tuple[str | None, str]] = set()
        self._seen = 0
        self._changed = asyncio.Event()
        self._last_activity = 0.0
        self._subscriptions: list[Subscription] = []
        self._sessions: list[str | None] = []

    def _on_event(self, event: CdpEventRecord) -> None:
        key = _key(event)
        if key is None:
            return
        if event.method in _STARTED:
            if key not in self._inflight:
                self._seen += 1
            self._inflight.add(key)
        else:
            self._inflight.discard(key)
        self._last_activity = asyncio.get_running_loop().time()
        self._changed.set()

    async def __aenter__(self) -> "NetworkIdle":
        for method in (*_STARTED, *_ENDED):
            self._subscriptions.append(self._client.on(method, self._on_event))
        self._sessions = [None, *self._client.state.sessions]
        if self._enable:
            await asyncio.gather(*(self._send("Network.enable", session, _ENABLE) for session in self._sessions))
        return self

    def enable_steps(self) -> list[CdpStep]:
        """The Network.enable commands of every session tracked, for a batch that runs them
        before the input."""
        return [CdpStep(session_id=session, method="Network.enable", params=_ENABLE, deadline_ms=ENABLE_TIMEOUT_MS)
                for session in self._sessions]

    @staticmethod
    def flush_step(context: int) -> CdpStep:
        """The round trip `wait` would make, in our isolated world (`context`) of the top frame,
        for a batch that runs it right after the input (its value: `flushed`)."""
        return CdpStep(method="Runtime.evaluate", deadline_ms=int(FLUSH_TIMEOUT_S * 1000),
                       params={"expression": _FLUSH_AND_FOCUS, "awaitPromise": True, "returnByValue": True,
                               "contextId": context})

    @staticmethod
    def flushed(result: object) -> Flushed:
        """What a flush in our isolated world read (nothing when it read none)."""
        value = ((result or {}).get("result") or {}).get("value") if isinstance(result, dict) else None
        if not isinstance(value, dict):
            return Flushed()
        focus = value.get("focus")
        return Flushed(focus if isinstance(focus, str) else "", value.get("changed") is True)

    async def _send(self, method: str, session: str | None, params: dict | None = None) -> None:
        try:
            await self._client.send(method, params, session_id=session, timeout=ENABLE_TIMEOUT_MS / 1000)
        except CdpError:
            pass  # a frame that went away: nothing to track there

    async def _stop(self, session: str | None) -> None:
        try:
            await self._send("Network.disable", session)
        except Exception:  # the tab or the bridge went away: nothing is tracked there any more
            pass

    async def _flush(self, session: str | None, context: int | None = None) -> Flushed:
        """Let the page finish handling the input (its handlers, their promises and one more
        task), so the requests they start have been reported. In our isolated world (`context`),
        also the focused element's line and whether the page changed (nothing otherwise)."""
        params: dict = {"expression": _FLUSH, "awaitPromise": True, "returnByValue": True}
        if context is not None:
            params.update(expression=_FLUSH_AND_FOCUS, contextId=context)
        try:
            answer = await self._client.send("Runtime.evaluate", params, session_id=session, timeout=FLUSH_TIMEOUT_S)
        except CdpError:
            return Flushed()  # the page navigated or went away: its load is tracked, if it started one
        return self.flushed(answer)

    async def wait(self, session: str | None = None, quiet: float = QUIET_S, cap: float = CAP_S,
                   context: int | None = None, flushed: Flushed | None = None) -> Settled:
        """Wait for what the input set off in the frame of `session` (None: the tab's top frame;
        `context`: our isolated world there, to read the focus too): no wait when nothing
        started; else until nothing is in flight for `quiet` seconds, at most `cap` seconds.
        `flushed`: what a flush already made read (a batch's `flush_step`)."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        read = flushed if flushed is not None else await self._flush(session, context)
        focus, changed = read.focus, read.page_changed
        if not self._seen and not self._inflight:
            return Settled(True, int((loop.time() - start) * 1000), 0, 0, focus, changed)
        deadline = start + cap
        while True:
            now = loop.time()
            quiet_for = now - max(start, self._last_activity)
            if not self._inflight and quiet_for >= quiet:
                return Settled(True, int((now - start) * 1000), self._seen, 0, focus, changed)
            if now >= deadline:
                return Settled(False, int((now - start) * 1000), self._seen, len(self._inflight), focus, changed)
            self._changed.clear()
            step = deadline - now if self._inflight else min(deadline - now, quiet - quiet_for)
            try:
                await asyncio.wait_for(self._changed.wait(), max(0.01, step))
            except asyncio.TimeoutError:
                pass

    async def __aexit__(self, *exc: object) -> None:
        for subscription in self._subscriptions:
            subscription.close()
        # Not waited for: the action's answer does not depend on it, and the session's next
        # commands (the next action's Network.enable among them) are sent after it, in order.
        for session in self._sessions:
            task = asyncio.ensure_future(self._stop(session))
            _closing.add(task)
            task.add_done_callback(_closing.discard)
