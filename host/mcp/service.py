"""`McpTools`: the tools of the MCP servers in mcp.json, as one router service.

A server tool is offered as `mcp__<server>__<tool>` while its server is connected (servers
connect at each turn start, within their connect timeout; a dead server only loses its tools).
A call is judged at the server URL's origin, so blocked origins, rules (`mcp__github__*`),
grants and payload checks apply as for a page. A tool that loads an address in a browser the
server drives (the server's `navigates` setting) names that address as the call's destination,
so the gatekeeper judges it as a navigation there as well. The runner is tools.py.
"""

from __future__ import annotations

from typing import Any

from host.calls.service import ToolService
from host.mcp.errors import McpFailure
from host.gatekeeper.storage.pins import FACT
from host.mcp.exposure import ExposedTool
from host.mcp.manager import McpManager
from host.tools.call import Target, ToolCall
from host.tools.catalog import MCP_PREFIX, mcp_tool
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult, plain_failure
from host.tools.spec import ToolSpec


class McpTools(ToolService):
    """The MCP servers' tools of one host."""

    def __init__(self, manager: McpManager | None = None):
        self.manager = manager or McpManager()

    def listed(self) -> list[ToolSpec]:
        """The tools of every connected, enabled server."""
        return [mcp_tool(t.server, t.tool, title=t.label, description=t.description, input_schema=t.schema)
                for t in self.manager.tools()]

    def unavailable(self, name: str) -> str | None:
        """Why an `mcp__<server>__…` tool is not offered: its server is down or disabled."""
        if not name.startswith(MCP_PREFIX):
            return None
        return self.manager.unavailable(name[len(MCP_PREFIX):].partition("__")[0])

    async def revive(self, name: str) -> None:
        """Connect the server of an `mcp__<server>__…` tool again if it failed (the usual pause
        between attempts applies), so a server that is back offers its tools mid-turn."""
        if name.startswith(MCP_PREFIX):
            await self.manager.revive(name[len(MCP_PREFIX):].partition("__")[0])

    async def refresh(self, thread_id: str) -> None:
        """A turn starts: connect the configured servers and list their tools."""
        await self.manager.refresh()

    async def resolve(self, call: ToolCall) -> ToolCall:
        """The server's current origin (mcp.json may have changed since the last check), after
        a structural check of the parameters against the tool's schema."""
        from host.mcp.params import problems

        exposed = self.manager.find(call.tool)
        if exposed is None:  # first need of this server (no turn start has connected it yet)
            server_id = call.tool[len(MCP_PREFIX):].partition("__")[0]
            try:
                await self.manager.ensure(server_id)
            except McpFailure as failure:
                # Not the server's own words: they are untrusted, and this error reaches the model
                # unfenced (the server's lastError keeps them for people).
                raise ToolFailure(failure.code, f"MCP server {server_id!r} is not available ({failure.code}); "
                                                "its tools cannot be called now", phase="resolve") from None
            exposed = self.manager.find(call.tool)
        if exposed is None:
            raise ToolFailure(ToolCode.UNKNOWN_TOOL, f"{call.tool} is not offered by any connected MCP server now",
                              phase="resolve")
        before = call.target.handle if call.target is not None else None
        if isinstance(before, ExposedTool) and before.definition != exposed.definition:
            # Resolved again at dispatch after an approval: what was approved is not this tool.
            raise ToolFailure("mcp_tool_changed", f"MCP server {exposed.server!r} changed the definition of "
                              f"{call.tool} after the call was checked; it was not called", phase="resolve")
        found = problems(exposed.schema, call.params)
        if found:
            raise ToolFailure(ToolCode.INVALID_PARAMS, f"Invalid parameters for {call.tool}: {'; '.join(found)}",
                              phase="validate")
        # The definition goes to the gatekeeper, which holds grants and rules to the one allowed.
        facts: dict[str, Any] = {FACT: exposed.definition}
        lead = self._navigation(exposed, call)
        if lead is not None:
            facts["destinations"] = [lead]
        return call.resolved(Target(origin=self.origin(exposed.server), facts=facts, handle=exposed))

    def _navigation(self, exposed: ExposedTool, call: ToolCall) -> dict[str, Any] | None:
        """Where the server's browser goes if the tool loads an address: `{"url"}`, or
        `{"unresolved": True}` when the argument is there but not a text (never a pass)."""
        try:
            argument = self.manager.server(exposed.server).config.url_argument(exposed.tool)
        except McpFailure as failure:
            raise ToolFailure(failure.code, failure.message, phase="resolve") from None
        if argument is None:
            return None
        value = call.wire_params().get(argument)
        if value is None:
            return None
        return {"url": value} if isinstance(value, str) else {"unresolved": True}

    def origin(self, server_id: str) -> str:
        """The origin of a configured server's URL."""
        from host.gatekeeper.origins import destination

        try:
            state = self.manager.server(server_id)
        except McpFailure as failure:
            raise ToolFailure(failure.code, failure.message, phase="resolve") from None
        return destination(state.config.url).origin.text

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Call the server's tool; failures are results (a failed MCP call is never replayed)."""
        try:
            return await runner(call, self.manager)
        except ToolFailure as problem:
            return plain_failure(call.tool, problem)

    async def aclose(self) -> None:
        """Close every MCP session."""
        await self.manager.close()
