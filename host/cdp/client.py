"""`TabClient`: CDP commands for one tab, the object cdp-use's typed library wraps.

cdp-use's generated domain clients only need an object with an async
`send_raw(method, params=None, session_id=None)`; `TabClient.cdp` is a `CDPLibrary` over this
one, so `await client.cdp.DOM.describeNode(params=..., session_id=...)` goes through our bridge.
Unlike cdp-use's websocket client, every command here has a timeout, is cancelled in the
browser when its caller is cancelled, fails at once when the debugger detaches, checks the
domain against chrome.debugger's allowlist first, and can be bound to the tab's lifecycle epoch
(`expect_epoch`): a command prepared for a document that has since changed is never sent.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Protocol

import msgspec

from protocol.errors import ErrorInfo
from protocol.messages import MAX_BATCH_STEPS, CdpBatchOutcome, CdpStep

from host.cdp.domains import check_method
from host.cdp.errors import CdpCode, CdpError
from host.cdp.events import CdpEventRecord, EventBus, Subscription
from host.cdp.tab_state import TabState
from host.cdp.transport import CdpTransport

DEFAULT_TIMEOUT_S = 30.0


class TabOwner(Protocol):
    """What a `TabClient` needs of the manager that made it (`CdpManager`): the transport its
    commands take, the bus its events come from, and a note that trusted input is on its way."""

    transport: CdpTransport
    bus: EventBus

    def mark_agent_input(self, state: TabState) -> None: ...

    def end_agent_input(self, state: TabState) -> None: ...


class _TabRegistry:
    """What `CDPRegistrationLibrary` registers into: every registration adds a handler on our
    bus (cdp-use's own registry would replace the previous one)."""

    def __init__(self, client: "TabClient"):
        self._client = client
        self.subscriptions: list[Subscription] = []

    def register(self, method: str, callback: Callable[[Any, str | None], Any]) -> None:
        self.subscriptions.append(self._client.on(method, lambda event: callback(event.params, event.session_id)))

    def unregister(self, method: str) -> None:
        for subscription in [s for s in self.subscriptions if s.method == method]:
            subscription.close()
            self.subscriptions.remove(subscription)


class TabClient:
    """CDP for one tab through the debugger bridge."""

    def __init__(self, manager: TabOwner, state: TabState, default_timeout: float = DEFAULT_TIMEOUT_S):
        self.manager = manager
        self.state = state
        self.default_timeout = default_timeout
        self._library: Any = None
        self._registration: Any = None

    @property
    def tab_id(self) -> int:
        return self.state.tab_id

    @property
    def epoch(self) -> int:
        """The tab's lifecycle epoch now."""
        return self.state.epoch

    async def send(self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None,
                   timeout: float | None = None, result_type: Any = Any, expect_epoch: int | None = None,
                   trim: str | None = None) -> Any:
        """Send one command; returns its result decoded into `result_type`.

        Raises CdpError: `cdp_domain_not_allowed` before anything is sent, `cdp_epoch_changed`
        when `expect_epoch` is no longer the tab's epoch (nothing sent), `cdp_session_gone` for
        a child session that ended, `cdp_detached` when the debugger detaches while waiting,
        `timeout`, or the browser's own error (`cdp_error`). `trim`: what the bridge may leave
        out of the result (`CdpCommand.trim`).
        """
        return await self.begin(method, params, session_id=session_id, timeout=timeout, result_type=result_type,
                                expect_epoch=expect_epoch, trim=trim)

    def begin(self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None,
              timeout: float | None = None, result_type: Any = Any, expect_epoch: int | None = None,
              trim: str | None = None) -> "asyncio.Future[Any]":
        """Like `send`, but the command is on its way (in call order) when this returns: await
        the future for its result. Lets a caller send several commands without waiting for each
        acknowledgement (mouse moves in a hidden tab are acknowledged only at its next frame)."""
        inputs = self._ready([(method, session_id)], expect_epoch, f"{method} was not sent")
        state = self.state
        # Tasks start in creation order and the transport queues the frame at its first step.
        request = asyncio.ensure_future(self.manager.transport.command(
            state.tab_id, session_id, method, params or {}, timeout=timeout or self.default_timeout,
            result_type=result_type, trim=trim))
        outcome = asyncio.ensure_future(self._outcome(request, state.lost, method))
        if inputs:
            outcome.add_done_callback(lambda _: self.manager.end_agent_input(state))
        return outcome

    async def batch(self, steps: list[CdpStep], *, timeout: float | None = None, expect_epoch: int | None = None,
                    list_tabs: bool = False) -> CdpBatchOutcome:
        """Send `steps` one after the other with no round trip to the host between them (the
        extension's `cdp.batch`; one by one from here over a transport without batches). The
        outcome stops at the first step that fails or reads a value other than its `expect`;
        nothing after it is sent. `list_tabs`: the outcome also lists the tabs before and after
        (not over a transport without batches). Raises CdpError as `send` does for what fails
        before any step is sent (too many steps among it), and for a batch whose answer is lost
        (`cdp_detached`, `timeout`, `not_connected`...: which steps ran is then unknown)."""
        if len(steps) > MAX_BATCH_STEPS:
            raise CdpError("invalid_params", f"a batch holds at most {MAX_BATCH_STEPS} commands, not {len(steps)}")
        if not steps:
            return CdpBatchOutcome()
        inputs = self._ready([(step.method, step.session_id) for step in steps], expect_epoch, "nothing was sent")
        state = self.state
        wait = timeout or self.default_timeout
        run = getattr(self.manager.transport, "batch", None)
        try:
            work = run(state.tab_id, steps, timeout=wait, list_tabs=list_tabs) if run is not None else self._one_by_one(steps, wait)
            return await self._outcome(asyncio.ensure_future(work), state.lost, "a batch of commands")
        finally:
            if inputs:
                self.manager.end_agent_input(state)

    def _ready(self, commands: list[tuple[str, str | None]], expect_epoch: int | None, unsent: str) -> bool:
        """Refuse, before anything is sent, commands (method, session) this tab cannot take now
        (a domain not allowed, the tab closed, its epoch moved on, a session gone); note that
        trusted input is on its way (True: the caller notes its end, `end_agent_input`)."""
        for method, _ in commands:
            check_method(method)
        state = self.state
        if state.closed:
            raise CdpError(CdpCode.TAB_CLOSED, f"tab {state.tab_id} is closed")
        if expect_epoch is not None and state.epoch != expect_epoch:
            raise CdpError(CdpCode.EPOCH_CHANGED, f"tab {state.tab_id} changed ({state.epoch_reason}) since the call "
                           f"was prepared; {unsent}", details={"reason": state.epoch_reason})
        gone = next((session for _, session in commands if session is not None and session not in state.sessions), None)
        if gone is not None:
            raise CdpError(CdpCode.SESSION_GONE, f"the frame session {gone[:12]}… of tab {state.tab_id} has ended")
        if any(method.startswith("Input.") for method, _ in commands):
            self.manager.mark_agent_input(state)
            return True
        return False

    async def _one_by_one(self, steps: list[CdpStep], timeout: float) -> CdpBatchOutcome:
        results: list[Any] = []
        for index, step in enumerate(steps):
            limit = min(timeout, step.deadline_ms / 1000) if step.deadline_ms else timeout
            try:
                result = await self.manager.transport.command(self.state.tab_id, step.session_id, step.method, step.params,
                                                              timeout=limit)
            except CdpError as exc:
                details = {**exc.details, **({} if exc.dispatched else {"dispatched": False})}
                return CdpBatchOutcome(results=results, stopped_at=index, error=ErrorInfo(
                    code=exc.code, message=exc.message, retryable=exc.retryable, details=details or None))
            results.append(result)
            if step.expect is not msgspec.UNSET:
                value: Any = result
                for key in step.expect_at or ["result", "value"]:
                    value = value.get(key) if isinstance(value, dict) else None
                # Compared as JSON, as the extension does (True is not 1).
                if msgspec.json.encode(value) != msgspec.json.encode(step.expect):
                    return CdpBatchOutcome(results=results, stopped_at=index, unexpected=value)
        return CdpBatchOutcome(results=results)

    async def _outcome(self, request: "asyncio.Future[Any]", lost: "asyncio.Future[str]", method: str) -> Any:
        state = self.state
        try:
            done, _ = await asyncio.wait((request, lost), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            request.cancel()  # the endpoint cancels it in the browser too
            raise
        if request in done:
            result = request.result()
            state.attached = True
            return result
        request.cancel()
        raise CdpError(CdpCode.DETACHED, f"the debugger detached from tab {state.tab_id} ({lost.result()}) while "
                       f"{method} was waiting", retryable=True, dispatched=True, details={"reason": lost.result()})

    async def send_raw(self, method: str, params: Any = None, session_id: str | None = None) -> Any:
        """cdp-use's transport hook."""
        return await self.send(method, params, session_id=session_id)

    @property
    def cdp(self) -> Any:
        """cdp-use's typed domains over this client (`client.cdp.DOM.getBoxModel(...)`)."""
        if self._library is None:
            from cdp_use.cdp.library import CDPLibrary

            self._library = CDPLibrary(self)  # type: ignore[arg-type]
        return self._library

    @property
    def register(self) -> Any:
        """cdp-use's typed event registration; every registration adds a handler."""
        if self._registration is None:
            from cdp_use.cdp.registration_library import CDPRegistrationLibrary

            self._registration = CDPRegistrationLibrary(_TabRegistry(self))  # type: ignore[arg-type]
        return self._registration

    def on(self, method: str | None, handler: Callable[[CdpEventRecord], Any]) -> Subscription:
        """Call `handler` for this tab's events named `method` (all when None), off the receive loop."""
        return self.manager.bus.subscribe(method, handler, tab_id=self.state.tab_id)
