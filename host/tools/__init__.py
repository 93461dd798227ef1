"""Tool identities: the one place every tool is declared (see `spec` and `catalog`)."""

from host.tools.catalog import CATALOG, lookup, mcp_tool, mcp_tool_name
from host.tools.spec import ToolSpec

__all__ = ["CATALOG", "ToolSpec", "lookup", "mcp_tool", "mcp_tool_name"]
