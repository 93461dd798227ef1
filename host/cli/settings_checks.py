"""`tabwarden doctor`'s look at the settings files: each one the host reads is validated the way
the host validates it, so a typo shows up here with its path instead of as a feature that
quietly does nothing (a provider missing, MCP off, default limits, a policy refused)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from install.doctor import Check

SUBJECT = "settings"


def _check(name: str, path: Path, load: Callable[[], Any], fix: str) -> Check:
    if not path.exists():
        return Check(SUBJECT, name, True, f"{path} (not present: defaults)")
    try:
        load()
    except Exception as exc:  # each loader raises its own error type, all naming the bad field
        return Check(SUBJECT, name, False, str(exc), fix)
    return Check(SUBJECT, name, True, str(path))


def _builtins(path: Path) -> None:
    from host.builtins.settings import parse_settings

    parse_settings(json.loads(path.read_text(encoding="utf-8")), str(path))  # load_settings would fall back


def _policy(path: Path, *, managed: bool) -> None:
    from host.gatekeeper.policy_files import load_policy_file

    layer = load_policy_file(path, managed=managed)
    if layer is not None and layer.skipped:  # the host leaves these rules out and uses the others
        raise ValueError("; ".join(str(e) for e in layer.skipped) + " (the file's other rules are in force)")


def run() -> list[Check]:
    """One check per settings file the host reads (a missing file is fine: defaults apply)."""
    from host.builtins.settings import settings_path
    from host.gatekeeper.policy_files import managed_policy_path, user_policy_path
    from host.mcp.config import config_path as mcp_path
    from host.mcp.config import load_mcp_config
    from host.providers.config import config_path as engine_path
    from host.providers.config import load_config

    user, managed = user_policy_path(), managed_policy_path()
    builtins = settings_path()
    return [
        _check("engine.json (providers)", engine_path(), load_config,
               "fix the named field, or re-add the provider from the settings page"),
        _check("policy (user)", user, lambda: _policy(user, managed=False),
               "fix the named field; `tabwarden policy check` tries a call against it"),
        _check("policy (managed)", managed, lambda: _policy(managed, managed=True),
               "ask whoever manages this machine to fix the managed policy file"),
        _check("mcp.json (MCP servers)", mcp_path(), load_mcp_config,
               "fix the named field, or edit the server from the settings page"),
        _check("builtins.json (limits)", builtins, lambda: _builtins(builtins),
               "fix the named field; until then the built-in tools use their default limits"),
    ]
