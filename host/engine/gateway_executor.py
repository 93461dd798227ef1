"""`GatewayExecutor`: the browser gateway behind the engine's `ToolExecutor` seam.

The gateway's own `call()` authorises by itself (and treats ASK as a refusal); the engine needs
the check, the approval wait and the dispatch re-check in its loop. Until the gateway offers
`prepare`/`execute_authorized` (see the engine's report), this adapter composes the gateway's
public pieces the same way `BrowserGateway.call` does: validate, resolve the tab, hold the
tab's turn, resolve again, compare, then let the loop authorise before running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from host.engine.executor import Authorize, Outcome, Prepared, ToolError
from host.providers.model import ToolSchema

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway


def _error(failure: Any) -> ToolError:
    details = dict(failure.details)
    return ToolError(failure.code, failure.message, retryable=failure.retryable,
                     dispatched=bool(details.get("dispatched")),
                     effect_may_have_occurred=bool(details.get("effectMayHaveOccurred")), details=details)


class GatewayExecutor:
    """Runs the gateway's L0/L1 tools for the loop."""

    def __init__(self, gateway: "BrowserGateway"):
        self.gateway = gateway
        self._tools: list[ToolSchema] | None = None

    def tools(self) -> list[ToolSchema]:
        """The browser tools with their parameter schemas (computed once)."""
        if self._tools is None:  # the declarations are fixed for the life of the process
            self._tools = [ToolSchema(d["name"], d["description"], d["parameters"])
                           for d in self.gateway.describe_tools()]
        return list(self._tools)

    async def _resolve(self, call: Any, kind: str) -> Any:
        from host.browser.target import get_tab, resolve_page_tab

        if kind == "none":
            return None
        if kind == "explicit":
            return await get_tab(self.gateway.bridge, getattr(call.params, "tab_id"))
        return await resolve_page_tab(self.gateway.bridge, self.gateway.routes, call.thread_id,
                                      getattr(call.params, "tab_id", None))

    async def _site_access(self, target: Any, kind: str) -> bool | None:
        if kind != "page" or target is None:
            return None
        return bool(await self.gateway.bridge.api("permissions.contains", {"origins": [f"{target.origin}/*"]}))

    def _target_line(self, call: Any) -> str | None:
        from host.browser.page_writes import refs_used

        if call.tab_id is None:
            return None
        used = refs_used(call)
        if not used:
            return None
        _, text = self.gateway.refs.last_text(call.tab_id)
        lines = []
        for ref in used:
            marker = f"[ref={ref}]"
            found = next((line.strip() for line in text.split("\n") if marker in line), None)
            if found is None:
                hint = self.gateway.refs.lookup(call.tab_id, ref)
                found = f'- {hint.role} "{hint.name}" {marker}' if hint is not None else None
            if found:
                lines.append(found[:500])
        return "\n".join(lines) or None

    async def _describe(self, call: Any, kind: str) -> Prepared:
        from host.browser import page_writes

        if call.spec.is_write and kind == "page":
            page_writes.require_known_refs(call)
        target = call.target
        return Prepared(
            tool=call.spec.name, params=msgspec.to_builtins(call.params), origin=target.origin if target else "",
            tab_id=call.tab_id, target=page_writes.facts(call) if kind == "page" else None,
            target_line=self._target_line(call), site_access=await self._site_access(target, kind),
        )

    async def prepare(self, thread_id: str, tool: str, params: dict[str, Any]) -> Prepared:
        """Validate the parameters and resolve the tab; nothing is sent to the page."""
        from host.browser.call import ToolCall
        from host.browser.errors import Code, ToolFailure
        from host.browser.gateway import IMPLEMENTATIONS
        from host.browser.params import decode_params
        from host.tools.catalog import lookup

        spec = lookup(tool)
        implementation = IMPLEMENTATIONS.get(spec.name) if spec is not None else None
        if spec is None or implementation is None:
            raise ToolError(Code.UNKNOWN_TOOL, f"there is no tool named {tool!r} here")
        try:
            call = ToolCall(spec, decode_params(spec.name, params), thread_id, None, self.gateway)
            call.target = await self._resolve(call, implementation.target)
            prepared = await self._describe(call, implementation.target)
        except ToolFailure as failure:
            raise _error(failure) from None
        prepared.handle = (call, implementation)
        return prepared

    async def execute(self, thread_id: str, prepared: Prepared, authorize: Authorize) -> Outcome:
        """Hold the tab, resolve it again, let the loop authorise, then run the tool."""
        from host.browser.errors import Code, ToolFailure
        from host.browser.results import failure as failed_result

        call, implementation = prepared.handle
        first = call.target
        try:
            async with self.gateway.queue.hold(call.tab_id):
                # The tab may have moved on while this call waited for approval or its turn.
                call.target = await self._resolve(call, implementation.target)
                if first is not None and call.target is not None and (
                        call.target.tab_id != first.tab_id or call.target.origin != first.origin):
                    raise ToolError(Code.TARGET_CHANGED, f"tab {first.tab_id} moved from {first.origin} to "
                                    f"{call.target.origin} after the permission check; look at it again and do not "
                                    "reuse the previous approval", retryable=True)
                self.gateway.takeover.check(thread_id)
                await authorize(await self._describe(call, implementation.target))
                result = await implementation.run(call)
        except ToolFailure as problem:
            shown = failed_result(call.tool, problem, tab_id=call.tab_id)
            return Outcome(ok=False, text=shown.text, code=problem.code, tab_id=call.tab_id,
                           dispatched=problem.dispatched,
                           effect_may_have_occurred=bool(problem.details.get("effectMayHaveOccurred")),
                           details=dict(problem.details))
        error = result.error
        return Outcome(ok=result.ok, text=result.text, code=error.code if error is not None else None,
                       tab_id=result.result_tab_id or result.tab_id, details=dict(result.details))

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """Bind the submission's tab and lift a manual-takeover pause."""
        if bound:
            self.gateway.routes.bind(thread_id, tab_id)
        self.gateway.takeover.resume(thread_id)

    def end_turn(self, thread_id: str) -> None:
        """Forget the turn's driven tabs and floating target."""
        self.gateway.routes.end_turn(thread_id)
