"""`McpExecutor`: MCP server tools behind the engine's `ToolExecutor` seam, in front of the
rest of the chain (built-ins, then the browser gateway), which gets every other tool unchanged.

    mcp__<server>__<tool>   prepared here (parameters checked against the server's schema, the
                            target origin is the server URL's origin), then, after the loop's
                            dispatch-phase `authorize`, called on the server

The gatekeeper sees every MCP call as a write of category `mcp` at the server origin, so
blocked origins, rules (`mcp__github__*`), grants and payload checks apply as for a page. The
result is untrusted MCP output: the engine fences it (the spec's provenance is `mcp`).
"""

from __future__ import annotations

from typing import Any

from host.engine.executor import Authorize, Outcome, Prepared, ToolError, ToolExecutor
from host.mcp.errors import McpFailure
from host.mcp.manager import McpManager
from host.providers.model import ToolSchema
from host.tools.catalog import MCP_PREFIX

# Failures that may come after the server started the work.
_MAYBE_ACTED = ("mcp_timeout", "mcp_unreachable", "mcp_protocol_error")


class McpExecutor:
    """Runs `mcp__*` tools; hands every other tool, and every optional method the engine looks
    up with getattr (hand_over, watch, attach...), to `inner`."""

    def __init__(self, inner: ToolExecutor, manager: McpManager | None = None):
        self.inner = inner
        self.manager = manager or McpManager()

    @property
    def mcp_manager(self) -> McpManager:
        """The servers behind these tools; the settings page's ops reach them through the
        engine's executor (`getattr(engine.executor, "mcp_manager", None)`)."""
        return self.manager

    def __getattr__(self, name: str) -> Any:
        # Only called for names this class lacks: the inner chain's extras stay reachable and
        # stay absent when the inner chain lacks them.
        if name in ("inner", "manager"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- the seam -------------------------------------------------------------------------------

    def tools(self) -> list[ToolSchema]:
        """The inner chain's tools and those of every connected MCP server."""
        return [*self.inner.tools(), *(ToolSchema(t.name, t.description, t.schema) for t in self.manager.tools())]

    async def refresh_tools(self, thread_id: str) -> None:
        """A turn starts: connect the configured servers and list their tools (bounded by each
        server's connect timeout; a dead server only loses its tools)."""
        await self.manager.refresh()
        inner = getattr(self.inner, "refresh_tools", None)
        if inner is not None:
            await inner(thread_id)

    async def prepare(self, thread_id: str, tool: str, params: dict[str, Any]) -> Prepared:
        """Check an MCP call's parameters and find its server origin; other tools go to `inner`."""
        if not tool.startswith(MCP_PREFIX):
            return await self.inner.prepare(thread_id, tool, params)
        from host.mcp.params import problems

        exposed = self.manager.find(tool)
        if exposed is None:  # first need of this server (no turn start has connected it yet)
            server_id = tool[len(MCP_PREFIX):].partition("__")[0]
            try:
                await self.manager.ensure(server_id)
            except McpFailure as failure:
                # Not the server's own words: a prepare-time error reaches the model unfenced, and a
                # server's error text is untrusted (it stays in the server's lastError for people).
                raise ToolError(failure.code, f"MCP server {server_id!r} is not available ({failure.code}); "
                                              "its tools cannot be called now") from None
            exposed = self.manager.find(tool)
        if exposed is None:
            raise ToolError("unknown_tool", f"{tool} is not offered by any connected MCP server now")
        found = problems(exposed.schema, params)
        if found:
            raise ToolError("invalid_params", f"Invalid parameters for {tool}: {'; '.join(found)}")
        return Prepared(tool=tool, params=dict(params), origin=self._origin(exposed.server), handle=exposed)

    async def execute(self, thread_id: str, prepared: Prepared, authorize: Authorize) -> Outcome:
        """Authorise at the server's current origin, then call the tool; failures come back as
        an Outcome with ok=False (a failed MCP call is never replayed)."""
        if not prepared.tool.startswith(MCP_PREFIX):
            return await self.inner.execute(thread_id, prepared, authorize)
        from host.mcp.results import summarise

        exposed = prepared.handle
        origin = self._origin(exposed.server)  # mcp.json may have changed since the approval
        if origin != prepared.origin:
            # An approval names the origin it was given for; it never carries over to another one.
            raise ToolError("target_changed", f"MCP server {exposed.server!r} now points at {origin or 'nothing'}, not "
                                              f"{prepared.origin}, where this call was judged; it was not sent")
        await authorize(Prepared(tool=prepared.tool, params=prepared.params, origin=origin, handle=exposed))
        details = {"server": exposed.server, "tool": exposed.tool}
        try:
            answer = await self.manager.call(exposed.server, exposed.tool, prepared.params)
        except McpFailure as failure:
            return Outcome(ok=False, text=f"Error {failure.code}: {failure.message}", code=failure.code,
                           dispatched=failure.sent, effect_may_have_occurred=failure.sent and failure.code in _MAYBE_ACTED,
                           details={**details, "isError": False})
        result = summarise(answer)
        return Outcome(ok=not result.is_error, text=result.text, code="mcp_tool_error" if result.is_error else None,
                       details={**details, "isError": result.is_error})

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A turn starts (see ToolExecutor)."""
        self.inner.begin_turn(thread_id, tab_id, bound=bound)

    def end_turn(self, thread_id: str) -> None:
        """A turn ended (see ToolExecutor)."""
        self.inner.end_turn(thread_id)

    async def aclose(self) -> None:
        """Close every MCP session (the engine closes; the inner chain has nothing to close)."""
        await self.manager.close()
        inner = getattr(self.inner, "aclose", None)
        if inner is not None:
            await inner()

    def _origin(self, server_id: str) -> str:
        from host.gatekeeper.origins import destination

        try:
            state = self.manager.server(server_id)
        except McpFailure as failure:
            raise ToolError(failure.code, failure.message) from None
        return destination(state.config.url).origin.text
