"""MCP servers and their tools as the REPL shows them (`tw.mcp()`): one block per server with
its state, then its tools by model name and label, then what was skipped and why."""

from __future__ import annotations

from typing import Any

from host.repl import render
from host.repl.style import Style


def servers(data: dict[str, Any], style: Style) -> str:
    """`{"status": mcp.servers answer, "tools": mcp.tools answer}` as text."""
    status, listed = data.get("status") or {}, {s["server"]: s for s in data.get("tools") or []}
    lines = []
    if status.get("configError"):
        lines.append(style(f"mcp.json is invalid, MCP is off: {status['configError']}", "red"))
    if not status.get("servers"):
        lines.append(style("no MCP servers configured (add them to mcp.json in the config folder)", "dim"))
    for server in status.get("servers") or []:
        found = listed.get(server["id"], {})
        state = found.get("state", server["state"])
        lines.append(f"{style(server['id'], 'bold')}  {server['url']}  {state}")
        error = found.get("lastError") or server.get("lastError")
        if error:
            lines.append(style(f"  {error['code']}: {error['message']}", "red"))
        tools = found.get("tools") or []
        if tools:
            rows = [(t["name"], t["label"] if t["label"] != t["name"] else "") for t in tools]
            lines.append("  " + render.table(rows, ("tool", "label"), style).replace("\n", "\n  "))
        for skipped in found.get("skipped") or []:
            lines.append(style(f"  skipped {skipped['tool']}: {skipped['reason']}", "dim"))
    return "\n".join(lines)
