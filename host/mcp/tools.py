"""The runner of every MCP tool: one `tools/call` on the server that listed it."""

from __future__ import annotations

from host.mcp.errors import McpFailure
from host.mcp.manager import McpManager
from host.mcp.results import summarise
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult

# Failures that may come after the server started the work.
_MAYBE_ACTED = ("mcp_timeout", "mcp_unreachable", "mcp_protocol_error")


async def call_tool(call: ToolCall, manager: McpManager) -> ToolResult:
    """Call the tool with the judged parameters; the server's answer is untrusted text."""
    exposed = call.target.handle  # type: ignore[union-attr]
    details = {"server": exposed.server, "tool": exposed.tool}
    try:
        answer = await manager.call(exposed.server, exposed.tool, call.params, definition=exposed.definition)
    except McpFailure as failure:
        raise ToolFailure(failure.code, failure.message, details={
            **details, "isError": False, "dispatched": failure.sent,
            "effectMayHaveOccurred": failure.sent and failure.code in _MAYBE_ACTED}) from None
    result = summarise(answer)
    # The card shows these; the model reads a result's text only, never its details.
    shown: dict[str, object] = {}
    if result.for_user:
        shown["forUser"] = result.for_user
    if result.images:
        shown["images"] = result.images
    if result.audio:
        shown["audio"] = result.audio
    if result.is_error:
        return ToolResult(ok=False, tool=call.tool, text=result.text, details={**details, **shown, "isError": True},
                          error=ToolFailure(ToolCode.MCP_TOOL_ERROR, "the tool reported an error",
                                            details={**details, "isError": True}).info())
    return ToolResult(ok=True, tool=call.tool, text=result.text, details={**details, **shown, "isError": False})
