"""Skills and plugins as text, for the REPL (`tw.skills`) and `tabwarden skill|plugin`: the
installed list with each one's status against its pin, one skill's instructions, and a plugin's
review (everything it would add)."""

from __future__ import annotations

from typing import Any

from host.repl import render
from host.repl.style import Style

_STATUS = {"ok": "green", "changed": "yellow", "broken": "red"}


def overview(data: dict[str, Any], style: Style) -> str:
    """A `skills.list` answer: skills, then plugins, then what the listing costs."""
    lines = []
    skills = data.get("skills") or []
    if not skills:
        lines.append(style("no skills installed (tabwarden skill add PATH, or tw.skills.add(path))", "dim"))
    else:
        rows = [(s["name"], "on" if s.get("enabled") else "off", style(s["status"], _STATUS.get(s["status"], "dim")),
                 f"plugin {s['plugin']}" if s.get("plugin") else "you", _short(s.get("description", ""), 60))
                for s in skills]
        lines.append(render.table(rows, ("skill", "", "status", "from", "description"), style))
        for s in skills:
            if s["status"] == "changed":
                lines.append(style(f"{s['name']}: changed on disk ({', '.join(s.get('changedFiles') or [])}); not used "
                                   f"until approved: approve {s['name']} {s.get('currentHash')}", "yellow"))
            elif s["status"] == "broken":
                lines.append(style(f"{s['name']}: {s.get('problem')}", "red"))
    for plugin in data.get("plugins") or []:
        lines.append("")
        lines.extend(_plugin(plugin, style))
    lines.append(style(f"listing: {data.get('promptChars', 0):,} of {data.get('promptBudget', 0):,} characters of the "
                       "model's instructions" + (f"; {data['unlisted']} skills not listed" if data.get("unlisted") else ""),
                       "dim"))
    return "\n".join(lines)


def _plugin(plugin: dict[str, Any], style: Style) -> list[str]:
    head = f"{style(plugin['name'], 'bold')} {plugin.get('version', '')}".rstrip()
    lines = [f"plugin {head}" + (f" by {plugin['author']}" if plugin.get("author") else "")]
    if plugin.get("description"):
        lines.append(f"  {_short(plugin['description'], 200)}")
    lines.extend(_additions(plugin, style))
    return lines


def _additions(data: dict[str, Any], style: Style) -> list[str]:
    lines = []
    skills = data.get("skills") or []
    if skills:
        names = [s if isinstance(s, str) else s["name"] + (" (has scripts, never run)" if s.get("hasScripts") else "")
                 for s in skills]
        lines.append(f"  skills: {', '.join(names)}")
    for server in data.get("servers") or []:
        state = "on" if server.get("enabled") else "off until you turn it on"
        lines.append(f"  MCP server {server['id']}: {server['url']} ({state})")
    for rule in data.get("rules") or []:
        lines.append(f"  rule: {rule['tool']} @ {rule['origin']} -> {rule['verdict']}")
    if data.get("guarded"):
        lines.append(f"  guarded: {', '.join(data['guarded'])}")
    if data.get("blocked"):
        lines.append(f"  blocked: {', '.join(data['blocked'])}")
    return lines


def review(data: dict[str, Any], style: Style) -> str:
    """A plugin's review: who made it and everything installing it would add."""
    head = f"{style(data['name'], 'bold')} {data.get('version', '')}".rstrip()
    lines = [f"plugin {head}" + (f" by {data['author']}" if data.get("author") else "")
             + (f" (replaces {data['replaces']})" if data.get("replaces") else "")]
    if data.get("homepage"):
        lines.append(f"  homepage: {data['homepage']}")
    if data.get("description"):
        lines.append(f"  {data['description']}")
    lines.append("It would add:")
    lines.extend(_additions(data, style) or ["  nothing"])
    lines.append(style("Plugin rules only ask or deny, and rank below your own rules.", "dim"))
    return "\n".join(lines)


def skill(data: dict[str, Any], style: Style) -> str:
    """A `skills.show` answer: status, files, then the instructions."""
    state = style(data["status"], _STATUS.get(data["status"], "dim"))
    lines = [f"{style(data['name'], 'bold')}  {state}  {'on' if data.get('enabled') else 'off'}  "
             f"sha256 {data['contentHash'][:16]}"]
    if data.get("problem"):
        lines.append(style(str(data["problem"]), "red"))
    if data.get("changedFiles"):
        lines.append(style(f"changed: {', '.join(data['changedFiles'])} (now {data.get('currentHash')})", "yellow"))
    lines.append("files: " + ", ".join(f"{f['path']} ({f['size']:,} B)" for f in data.get("files") or []))
    if data.get("body"):
        lines.extend(["", data["body"]])
    return "\n".join(lines)


def _short(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"
