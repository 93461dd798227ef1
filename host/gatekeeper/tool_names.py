"""Whether a rule's tool pattern can ever match a tool, and the nearest name when it cannot.

A rule naming a tool that does not exist (`clik`) would be stored, shown and never match: the
user believes a site is covered when it is not. So exact names must be catalogued tools (or
their aliases, or MCP names `mcp__<server>__<tool>`, whose tools come and go with the servers)
and a prefix must be the start of one of those.
"""

from __future__ import annotations

from host.gatekeeper.patterns import ToolPattern
from host.tools.catalog import ALIASES, CATALOG, MCP_PREFIX, lookup
from host.tools.catalog import closest_name as closest_tool


def _known_names() -> list[str]:
    return [*CATALOG, *ALIASES]


def unknown_tool_message(pattern: ToolPattern) -> str | None:
    """Why a rule with this tool pattern would never match, or None when it can match."""
    if pattern.kind == "exact":
        if lookup(pattern.value) is not None:
            return None
        name = pattern.value
    elif pattern.kind == "prefix":
        prefix = pattern.value
        if prefix.startswith(MCP_PREFIX) or MCP_PREFIX.startswith(prefix):
            return None
        if any(known.startswith(prefix) for known in _known_names()):
            return None
        name = prefix
    else:
        return None  # `*` and categories are checked where they are parsed
    nearest = closest_tool(name)  # re-exported: the CLI and tests ask for it here
    hint = f"; did you mean {nearest!r}?" if nearest else "; the settings page lists every tool"
    what = "no tool is called" if pattern.kind == "exact" else "no tool name starts with"
    return f"{what} {name!r}, so this rule would never match{hint}"
