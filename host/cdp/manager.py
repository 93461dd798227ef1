"""`CdpManager`: the debugger state of every tab the host drives through the bridge.

Per tab it keeps the attachment (a future that fails every waiting command when the debugger
detaches), the lifecycle epoch, the flat child sessions of out-of-process iframes, and the
execution contexts of our content scripts' isolated world. The epoch grows on every event that
can replace a document or a frame: frame navigation started or committed, frame detached,
child target attached or detached, the debugger detached, the tab removed, replaced or loading.
Deep refs and prepared writes are bound to it, so stale work fails before it is sent.

The manager's own epoch is random per instance: a host restart invalidates every deep ref.
One tab uses the debugger at a time (`use`), as the extension attaches to one tab at a time.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.cdp.events import CdpEventRecord, EventBus
from host.cdp.tab_state import ChildSession, TabState
from host.cdp.transport import CdpTransport

log = logging.getLogger("tabwarden.cdp")

# The name CDP gives the isolated world of our content scripts (the extension's name).
WORLD_NAME = "Tabwarden"
EXTENSION_ORIGIN_PREFIX = "chrome-extension://"
# A person's input reported while agent input is on its way, or within this window after it was
# answered, is the agent's own.
AGENT_INPUT_WINDOW_S = 1.5
# Input on its way longer than this (no command waits as long) no longer vouches for what is
# reported: an end that was somehow never noted cannot hide a person's input for good.
AGENT_INPUT_LONGEST_S = 120.0
SETUP_TIMEOUT_S = 5.0
USER_CANCELLED = "canceled_by_user"  # chrome.debugger's reason when the user dismisses the bar

# Events after which refs into a document may point at something else.
LIFECYCLE_EVENTS = frozenset({
    "Page.frameStartedNavigating", "Page.frameNavigated", "Page.frameDetached",
    "Target.attachedToTarget", "Target.detachedFromTarget", "Inspector.targetCrashed",
})
_AUTO_ATTACH = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True, "filter": [{"type": "iframe"}]}


def _token() -> str:
    # Four base-36 characters: the epoch is in every deep ref the model reads, and a ref of
    # another host run must also name a node of this run's current read to resolve.
    value = secrets.randbelow(36 ** 4)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    for _ in range(4):
        value, rest = divmod(value, 36)
        out = digits[rest] + out
    return out


class CdpManager:
    """Tabs, epochs and sessions of the debugger bridge."""

    def __init__(self, transport: CdpTransport, *, default_timeout: float = 30.0):
        self.transport = transport
        self.epoch = _token()
        self.bus = EventBus()
        self.default_timeout = default_timeout
        self._tabs: dict[int, TabState] = {}
        self._clients: dict[int, TabClient] = {}
        self._debugger = asyncio.Lock()
        self._setups: set[asyncio.Task[None]] = set()
        # The latest detaches, newest last: {tabId, reason, at} (for diagnostics and tests).
        self.detaches: deque[dict[str, Any]] = deque(maxlen=32)
        transport.connect(self._on_event, self._on_detached)

    # ------------------------------------------------------------------ tabs

    def state(self, tab_id: int) -> TabState:
        """The tab's state (created on first use)."""
        state = self._tabs.get(tab_id)
        if state is None:
            state = self._tabs[tab_id] = TabState(tab_id)
        return state

    def client(self, tab_id: int) -> TabClient:
        """The tab's CDP client."""
        client = self._clients.get(tab_id)
        if client is None or client.state is not self.state(tab_id):
            client = self._clients[tab_id] = TabClient(self, self.state(tab_id), self.default_timeout)
        return client

    def epoch_of(self, tab_id: int) -> int:
        """The tab's lifecycle epoch now."""
        return self.state(tab_id).epoch

    @asynccontextmanager
    async def use(self, tab_id: int) -> AsyncIterator[TabClient]:
        """Hold the debugger for one tab (the extension attaches to one tab at a time) and make
        sure the tab reports page lifecycle and out-of-process frames."""
        async with self._debugger:
            client = self.client(tab_id)
            await self._prepare(client)
            yield client

    async def _prepare(self, client: TabClient) -> None:
        state = client.state
        if state.prepared and state.attached:
            return
        await client.send("Page.enable", timeout=10)
        await client.send("Target.setAutoAttach", _AUTO_ATTACH, timeout=10)
        state.prepared = True
        await self._settle(state)

    async def _settle(self, state: TabState) -> None:
        """Wait (bounded) until every child session known now, and the ones they attach, is set up."""
        deadline = asyncio.get_running_loop().time() + SETUP_TIMEOUT_S
        while True:
            waiting = [s for s in state.sessions.values() if not s.ready.is_set()]
            if not waiting:
                return
            if not await self._wait_change(state, deadline):
                return

    def invalidate(self, tab_id: int, reason: str) -> None:
        """The tab's documents may have changed (it started loading): bump its epoch."""
        state = self._tabs.get(tab_id)
        if state is not None:
            state.bump(reason)

    def tab_removed(self, tab_id: int) -> None:
        """The tab closed: its state ends; waiting commands fail."""
        state = self._tabs.pop(tab_id, None)
        self._clients.pop(tab_id, None)
        if state is not None:
            state.closed = True
            state.bump("tab closed")
            self._end_attachment(state, "target_closed")

    def tab_replaced(self, old_tab: int, new_tab: int) -> None:
        """Chrome swapped the tab for another id: nothing of the old one holds."""
        self.tab_removed(old_tab)
        self.invalidate(new_tab, "tab replaced")

    def user_stopped(self, tab_id: int) -> str | None:
        """The detach reason when the user stopped the debugger in this tab, else None."""
        state = self._tabs.get(tab_id)
        return state.user_stopped if state is not None else None

    def allow_again(self, tab_id: int | None = None) -> None:
        """The user spoke again (a new message): trusted tools may attach again (one tab, or all)."""
        for state in self._tabs.values():
            if tab_id is None or state.tab_id == tab_id:
                state.user_stopped = None

    def mark_agent_input(self, state: TabState) -> None:
        """Trusted input is about to be sent in the tab of `state`: a person's input reported
        until a moment after its answer (`end_agent_input`) is ours, however long it takes."""
        now = time.monotonic()
        if not state.agent_inputs:
            state.agent_input_since = now
        state.agent_inputs += 1
        state.last_agent_input = now

    def end_agent_input(self, state: TabState) -> None:
        """Trusted input marked with `mark_agent_input` was answered (or failed, or was
        cancelled); `state` is the tab's state it was marked on (not one made for the id since)."""
        state.agent_inputs = max(0, state.agent_inputs - 1)
        state.last_agent_input = time.monotonic()

    def recent_agent_input(self, tab_id: int, window: float = AGENT_INPUT_WINDOW_S) -> bool:
        """True while the agent's own trusted input is on its way in the tab, and within
        `window` seconds of its answer."""
        state = self._tabs.get(tab_id)
        if state is None:
            return False
        now = time.monotonic()
        on_its_way = state.agent_inputs > 0 and now - state.agent_input_since < AGENT_INPUT_LONGEST_S
        return on_its_way or now - state.last_agent_input < window

    # ------------------------------------------------------------------ sessions and contexts

    async def wait_for_session(self, tab_id: int, target_id: str, timeout: float = SETUP_TIMEOUT_S) -> ChildSession | None:
        """The ready child session of an out-of-process frame, waiting for its attach event;
        None when it does not appear in time."""
        state = self.state(tab_id)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            found = next((s for s in state.sessions.values() if s.target_id == target_id), None)
            if found is not None:
                try:
                    await asyncio.wait_for(found.ready.wait(), max(0.0, deadline - loop.time()))
                except asyncio.TimeoutError:
                    return None
                return found if found.session_id in state.sessions else None
            if not await self._wait_change(state, deadline):
                return None

    async def track_contexts(self, client: TabClient, session_id: str | None = None) -> None:
        """Have the session report its execution contexts (Runtime, enabled once per session):
        the contexts of our isolated world are known from then on."""
        state = client.state
        if session_id not in state.runtime_sessions:
            await client.send("Runtime.enable", session_id=session_id, timeout=10)
            state.runtime_sessions.add(session_id)

    async def isolated_context(self, client: TabClient, frame_id: str, session_id: str | None = None,
                               timeout: float = SETUP_TIMEOUT_S) -> int | None:
        """The execution context of our content scripts' isolated world in a frame (enables
        Runtime for the session on first use); None when there is none."""
        state = client.state
        await self.track_contexts(client, session_id)
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            context = state.contexts.get((session_id, frame_id))
            if context is not None:
                return context
            if not await self._wait_change(state, deadline):
                return None

    async def _wait_change(self, state: TabState, deadline: float) -> bool:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return False
        try:
            await asyncio.wait_for(state.changed.wait(), remaining)
        except asyncio.TimeoutError:
            return False
        return True

    async def _setup_child(self, state: TabState, child: ChildSession) -> None:
        client = self.client(state.tab_id)
        try:
            await client.send("Page.enable", session_id=child.session_id, timeout=SETUP_TIMEOUT_S)
            await client.send("Target.setAutoAttach", _AUTO_ATTACH, session_id=child.session_id, timeout=SETUP_TIMEOUT_S)
        except CdpError as exc:
            log.info("child session of tab %d not set up: %s", state.tab_id, exc)
        finally:
            child.ready.set()
            state.pulse()

    # ------------------------------------------------------------------ inbound

    def _on_event(self, tab_id: int, session_id: str | None, method: str, params: dict[str, Any]) -> None:
        state = self._tabs.get(tab_id)
        if state is not None:
            self._track(state, session_id, method, params)
        self.bus.publish(CdpEventRecord(tab_id, session_id, method, params))

    def _track(self, state: TabState, session_id: str | None, method: str, params: dict[str, Any]) -> None:
        """Bookkeeping that must happen before anything else looks at the tab: synchronous."""
        if method in LIFECYCLE_EVENTS:
            state.bump(method)
            self._forget_frame_contexts(state, session_id, method, params)
        if method == "Target.attachedToTarget":
            info = params.get("targetInfo") or {}
            child_id = params.get("sessionId")
            if isinstance(child_id, str) and info.get("type") == "iframe":
                child = ChildSession(child_id, str(info.get("targetId") or ""), session_id, str(info.get("url") or ""))
                state.sessions[child_id] = child
                task = asyncio.get_running_loop().create_task(self._setup_child(state, child))
                self._setups.add(task)
                task.add_done_callback(self._setups.discard)
            state.pulse()
        elif method == "Target.detachedFromTarget":
            gone = params.get("sessionId")
            doomed = {gone}
            # Children of a detached frame session go with it.
            changed = True
            while changed:
                changed = False
                for sid, child in list(state.sessions.items()):
                    if child.parent in doomed and sid not in doomed:
                        doomed.add(sid)
                        changed = True
            for sid in doomed:
                state.sessions.pop(sid, None)  # type: ignore[arg-type]
                state.runtime_sessions.discard(sid)
                for key in [k for k in state.contexts if k[0] == sid]:
                    del state.contexts[key]
        elif method == "Runtime.executionContextCreated":
            context = params.get("context") or {}
            aux = context.get("auxData") or {}
            if (aux.get("type") == "isolated" and context.get("name") == WORLD_NAME
                    and str(context.get("origin") or "").startswith(EXTENSION_ORIGIN_PREFIX)
                    and isinstance(context.get("id"), int) and isinstance(aux.get("frameId"), str)):
                state.contexts[(session_id, aux["frameId"])] = context["id"]
                state.pulse()
        elif method == "Runtime.executionContextDestroyed":
            gone_id = params.get("executionContextId")
            for key in [k for k, v in state.contexts.items() if k[0] == session_id and v == gone_id]:
                del state.contexts[key]
        elif method == "Runtime.executionContextsCleared":
            for key in [k for k in state.contexts if k[0] == session_id]:
                del state.contexts[key]

    def _forget_frame_contexts(self, state: TabState, session_id: str | None, method: str, params: dict[str, Any]) -> None:
        if method in ("Page.frameNavigated", "Page.frameDetached"):
            frame = params.get("frame") or {}
            frame_id = frame.get("id") if method == "Page.frameNavigated" else params.get("frameId")
            state.contexts.pop((session_id, frame_id), None)  # type: ignore[arg-type]

    def _on_detached(self, tab_id: int, reason: str) -> None:
        self.detaches.append({"tabId": tab_id, "reason": reason, "at": time.time()})
        log.info("debugger detached from tab %d: %s", tab_id, reason)
        state = self._tabs.get(tab_id)
        if state is not None:
            state.bump(f"debugger detached ({reason})")
            if reason == USER_CANCELLED:
                state.user_stopped = reason
            self._end_attachment(state, reason)
        self.bus.publish(CdpEventRecord(tab_id, None, "Tabwarden.detached", {"reason": reason}))

    def _end_attachment(self, state: TabState, reason: str) -> None:
        state.attached = False
        state.prepared = False
        state.detach_reason = reason
        state.sessions.clear()
        state.runtime_sessions.clear()
        state.contexts.clear()
        if not state.lost.done():
            state.lost.set_result(reason)
        if not state.closed:
            state.lost = asyncio.get_running_loop().create_future()
        state.pulse()

    async def close(self) -> None:
        """Stop event dispatch and child set-ups."""
        for task in list(self._setups):
            task.cancel()
        await asyncio.gather(*self._setups, return_exceptions=True)
        await self.bus.close()
