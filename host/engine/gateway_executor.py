"""`GatewayExecutor`: the browser gateway behind the engine's `ToolExecutor` seam.

The engine owns authorisation (the gatekeeper, approvals, the dispatch re-check); the gateway
owns the rest. `prepare` is the gateway's `prepare` (validate, resolve the tab, element facts);
`execute` is its `execute_authorized`, which holds the tab, resolves it again and hands the
fresh target to the loop's `authorize` before anything is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from host.engine.executor import Authorize, Outcome, Prepared, ToolError
from host.providers.model import ToolSchema

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway, PreparedCall


def _error(failure: Any) -> ToolError:
    details = dict(failure.details)
    return ToolError(failure.code, failure.message, retryable=failure.retryable,
                     dispatched=bool(details.get("dispatched")),
                     effect_may_have_occurred=bool(details.get("effectMayHaveOccurred")), details=details)


def _prepared(call: "PreparedCall") -> Prepared:
    return Prepared(tool=call.tool, params=call.params, origin=call.origin, tab_id=call.tab_id, target=call.target,
                    target_line=call.target_line, site_access=call.site_access, handle=call)


class GatewayExecutor:
    """Runs the gateway's browser tools (L0, L1, L2) for the loop."""

    def __init__(self, gateway: "BrowserGateway"):
        self.gateway = gateway
        self._tools: list[ToolSchema] | None = None

    def tools(self) -> list[ToolSchema]:
        """The browser tools with their parameter schemas (computed once)."""
        if self._tools is None:  # the declarations are fixed for the life of the process
            self._tools = [ToolSchema(d["name"], d["description"], d["parameters"])
                           for d in self.gateway.describe_tools()]
        return list(self._tools)

    async def prepare(self, thread_id: str, tool: str, params: dict[str, Any]) -> Prepared:
        """Validate the parameters and resolve the tab; nothing is sent to the page."""
        from host.browser.errors import ToolFailure

        try:
            return _prepared(await self.gateway.prepare(tool, params, thread_id=thread_id))
        except ToolFailure as failure:
            raise _error(failure) from None

    async def execute(self, thread_id: str, prepared: Prepared, authorize: Authorize) -> Outcome:
        """Hold the tab, resolve it again, let the loop authorise, then run the tool."""

        async def check(fresh: "PreparedCall") -> None:
            await authorize(_prepared(fresh))

        result = await self.gateway.execute_authorized(prepared.handle, check)
        error = result.error
        details = dict(result.details)
        return Outcome(ok=result.ok, text=result.text, code=error.code if error is not None else None,
                       tab_id=result.result_tab_id or result.tab_id,
                       dispatched=bool(details.get("dispatched", result.ok)),
                       effect_may_have_occurred=bool(details.get("effectMayHaveOccurred")), details=details)

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """Bind the submission's tab, lift a manual-takeover pause, allow the debugger again."""
        self.gateway.begin_turn(thread_id, tab_id, bound=bound)

    def end_turn(self, thread_id: str) -> None:
        """Forget the turn's driven tabs and floating target."""
        self.gateway.end_turn(thread_id)
