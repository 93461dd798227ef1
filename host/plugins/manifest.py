"""A plugin's manifest: `plugin.json` at the top of the plugin, or `.claude-plugin/plugin.json`
(Claude Code's place, so one bundle serves both).

    {
      "name": "careful-shopper",                 lowercase letters, digits and hyphens, ≤ 64
      "version": "1.2.0", "description": "...", "author": "Ana" | {"name": "Ana", "email", "url"},
      "homepage": "https://example.org/careful-shopper",
      "skills": ["skills/checkout-review"],      default: every folder of skills/ holding a SKILL.md
      "mcpServers": {"shop": {"type": "http", "url": "https://mcp.example.org/mcp"}} | "./.mcp.json",
      "tabwarden": {
        "rules":   [{"tool": "click", "origin": "*.shop.example", "verdict": "ask"}],   ask or deny only
        "guarded": ["*.shop.example"],
        "blocked": ["pay.example"]
      }
    }

Fields other plugin hosts define (commands, agents, hooks, keywords...) are ignored and named in
the review; unknown fields inside `tabwarden` are errors. MCP servers are checked as mcp.json
checks them; a server started by a command (stdio) is refused: Tabwarden reaches servers over
HTTP. Every problem is a `PluginError` naming its field (`$.tabwarden.rules[0].verdict`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from host.plugins.errors import INVALID_MANIFEST, MISSING_FILE, NOT_A_PLUGIN, PluginError
from host.skills.front_matter import check_name
from host.skills.errors import SkillError

MANIFEST_PLACES = ("plugin.json", ".claude-plugin/plugin.json")
MAX_MANIFEST_BYTES = 256 * 1024
_KNOWN = {"name", "version", "description", "author", "homepage", "skills", "mcpServers", "tabwarden"}


@dataclass(frozen=True)
class Manifest:
    """A checked manifest: who made the plugin, and everything it adds."""

    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    homepage: str = ""
    skills: tuple[str, ...] = ()  # folders relative to the plugin's root
    servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # mcp.json entries, not yet enabled
    rules: tuple[dict[str, Any], ...] = ()
    guarded: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any]:
        """As stored with the installed plugin (and read back by `from_wire`)."""
        return {"name": self.name, "version": self.version, "description": self.description, "author": self.author,
                "homepage": self.homepage, "skills": list(self.skills), "servers": self.servers,
                "rules": list(self.rules), "guarded": list(self.guarded), "blocked": list(self.blocked)}

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> "Manifest":
        """The manifest stored with an installed plugin."""
        return cls(name=data["name"], version=data.get("version", ""), description=data.get("description", ""),
                   author=data.get("author", ""), homepage=data.get("homepage", ""),
                   skills=tuple(data.get("skills", ())), servers=dict(data.get("servers", {})),
                   rules=tuple(data.get("rules", ())), guarded=tuple(data.get("guarded", ())),
                   blocked=tuple(data.get("blocked", ())))


def find_manifest(root: Path) -> Path:
    """The manifest file of the plugin at `root`; `not_a_plugin` when there is none."""
    for place in MANIFEST_PLACES:
        path = root / place
        if os.path.lexists(path):
            if os.path.islink(path) or not path.is_file():
                raise PluginError(INVALID_MANIFEST, "the manifest must be a regular file", place)
            return path
    raise PluginError(NOT_A_PLUGIN, f"there is no {' or '.join(MANIFEST_PLACES)} at the top of the plugin")


def read_manifest(root: Path) -> Manifest:
    """Read and check the manifest of the plugin at `root` (files it names must exist in it)."""
    path = find_manifest(root)
    where = path.relative_to(root).as_posix()
    data = _json(path, where)
    if not isinstance(data, dict):
        raise PluginError(INVALID_MANIFEST, "the manifest must be a JSON object", where)
    model = _validated(data, where)
    try:
        name = check_name(model.name)
    except SkillError as exc:
        raise PluginError(INVALID_MANIFEST, exc.message, f"{where}:$.name") from None
    skills = _skill_folders(root, model.skills, where)
    servers = _servers(root, model.mcpServers, where)
    extra = model.tabwarden
    rules = tuple(_rule(rule, index, where) for index, rule in enumerate(extra.rules)) if extra else ()
    guarded = tuple(_pattern(p, f"{where}:$.tabwarden.guarded[{i}]") for i, p in enumerate(extra.guarded)) if extra else ()
    blocked = tuple(_pattern(p, f"{where}:$.tabwarden.blocked[{i}]") for i, p in enumerate(extra.blocked)) if extra else ()
    author = model.author if isinstance(model.author, str) else (model.author.name if model.author else "")
    return Manifest(name=name, version=model.version or "", description=model.description or "", author=author or "",
                    homepage=model.homepage or "", skills=skills, servers=servers, rules=rules,
                    guarded=tuple(dict.fromkeys(guarded)), blocked=tuple(dict.fromkeys(blocked)),
                    ignored=tuple(sorted(k for k in data if k not in _KNOWN)))


def _json(path: Path, where: str) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PluginError(INVALID_MANIFEST, f"cannot read it: {exc.strerror}", where) from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise PluginError(INVALID_MANIFEST, f"it is {len(raw)} bytes, over {MAX_MANIFEST_BYTES}", where)
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PluginError(INVALID_MANIFEST, f"not valid JSON: {exc}", where) from None


def _validated(data: dict, where: str) -> Any:
    from pydantic import ValidationError

    from host.plugins.manifest_model import manifest_model

    try:
        return manifest_model().model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        raise PluginError(INVALID_MANIFEST, error["msg"].removeprefix("Value error, "), f"{where}:{path}") from None


def _inside(root: Path, relative: str, where: str) -> Path:
    """`relative` resolved under `root`, refusing anything that leaves it."""
    parts = relative.replace("\\", "/").split("/")
    if relative.startswith(("/", "\\")) or any(p == ".." for p in parts) or ":" in parts[0]:
        raise PluginError(INVALID_MANIFEST, f"{relative!r} must be a path inside the plugin", where)
    path = root.joinpath(*[p for p in parts if p not in ("", ".")])
    if not os.path.lexists(path):
        raise PluginError(MISSING_FILE, f"the manifest names {relative!r}, which is not in the plugin", where)
    return path


def _skill_folders(root: Path, named: list[str] | None, where: str) -> tuple[str, ...]:
    if named is not None:
        folders = []
        for index, relative in enumerate(named):
            path = _inside(root, relative, f"{where}:$.skills[{index}]")
            if not (path / "SKILL.md").is_file():
                raise PluginError(MISSING_FILE, f"{relative!r} holds no SKILL.md", f"{where}:$.skills[{index}]")
            folders.append(path.relative_to(root).as_posix())
        return tuple(dict.fromkeys(folders))
    top = root / "skills"
    if not top.is_dir() or top.is_symlink():
        return ()
    return tuple(f"skills/{entry.name}" for entry in sorted(os.scandir(top), key=lambda e: e.name)
                 if entry.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(entry.path, "SKILL.md")))


def _servers(root: Path, given: Any, where: str) -> dict[str, dict[str, Any]]:
    if given is None:
        return {}
    source = f"{where}:$.mcpServers"
    if isinstance(given, str):
        path = _inside(root, given, source)
        source = path.relative_to(root).as_posix()
        given = _json(path, source)
        if isinstance(given, dict) and isinstance(given.get("mcpServers"), dict):
            given = given["mcpServers"]  # the .mcp.json shape: {"mcpServers": {...}}
    if not isinstance(given, dict):
        raise PluginError(INVALID_MANIFEST, "MCP servers must be an object of server ids", source)
    servers: dict[str, dict[str, Any]] = {}
    for server_id, entry in given.items():
        here = f"{source}.{server_id}" if source.endswith("mcpServers") else f"{source}:$.{server_id}"
        if not isinstance(entry, dict):
            raise PluginError(INVALID_MANIFEST, "a server must be an object", here)
        if "command" in entry:
            raise PluginError(INVALID_MANIFEST, "servers started by a command (stdio) are not supported: Tabwarden "
                              "connects to MCP servers over HTTP (give a url)", here)
        kind = entry.get("type", "http")
        if kind not in ("http", "streamable-http", "streamableHttp"):
            raise PluginError(INVALID_MANIFEST, f"server type {kind!r} is not supported; use an HTTP server", here)
        body = {k: v for k, v in entry.items() if k != "type"}
        body["enabled"] = False  # a plugin's server starts only once the user turns it on
        servers[server_id] = body
    _check_servers(servers, source)
    return servers


def _check_servers(servers: dict[str, dict[str, Any]], where: str) -> None:
    from host.config_files import ConfigFileError
    from host.mcp.config import parse_mcp_config

    try:
        parse_mcp_config({"servers": servers}, where)
    except ConfigFileError as exc:
        path, message = exc.problems[0]
        raise PluginError(INVALID_MANIFEST, message, f"{where}{path.removeprefix('$.servers')}") from None


def _rule(rule: Any, index: int, where: str) -> dict[str, Any]:
    from host.gatekeeper.errors import InvalidInput
    from host.gatekeeper.rules import parse_rule

    here = f"{where}:$.tabwarden.rules[{index}]"
    if isinstance(rule, dict) and rule.get("verdict") == "allow":
        raise PluginError(INVALID_MANIFEST, "a plugin's rule may ask or deny, never allow: a plugin can only make "
                          "the gatekeeper stricter", f"{here}.verdict")
    try:
        parsed = parse_rule(rule, force_source="plugin_default")
    except InvalidInput as exc:
        raise PluginError(INVALID_MANIFEST, exc.message, f"{here}{(exc.path or '$')[1:]}") from None
    out: dict[str, Any] = {"tool": parsed.tool, "origin": parsed.origin, "verdict": parsed.verdict}
    if parsed.args:
        out["args"] = dict(parsed.args)
    return out


def _pattern(pattern: str, where: str) -> str:
    from host.gatekeeper.patterns import PatternError, parse_origin_pattern

    try:
        return parse_origin_pattern(pattern).text
    except PatternError as exc:
        raise PluginError(INVALID_MANIFEST, str(exc), where) from None
