"""How the contract classifies a tool: its level (the way it reaches the browser: page script,
debugger, an MCP server, or the host itself) and its effects.

Apart from the UI catalogue and free of heavy imports, so the host's tool declarations can read
the same classification without loading the catalogue.
"""

from __future__ import annotations

from typing import Literal, get_args

ToolLevel = Literal["L0", "L1", "L2", "mcp", "builtin"]
TOOL_LEVELS: tuple[str, ...] = get_args(ToolLevel)

ToolEffects = Literal["read", "write"]
TOOL_EFFECTS: tuple[str, ...] = get_args(ToolEffects)
