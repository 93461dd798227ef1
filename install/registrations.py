"""The record of what `install` wrote, so `uninstall` removes exactly that and the host knows
which extension ids may call it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from host.paths import dirs

from install.extension_id import default_extension_id

FILE_NAME = "registrations.json"


def registrations_path() -> Path:
    return dirs().config / FILE_NAME


def load(path: Path | None = None) -> list[dict[str, Any]]:
    """Recorded registrations (empty when none or unreadable)."""
    path = path or registrations_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = data.get("entries") if isinstance(data, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def save(entries: list[dict[str, Any]], path: Path | None = None) -> None:
    """Replace the record atomically."""
    path = path or registrations_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"version": 1, "entries": entries}, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def allowed_extension_ids(path: Path | None = None) -> set[str]:
    """Every extension id a registration allows, plus the id of our own unpacked extension."""
    ids = {default_extension_id()}
    for entry in load(path):
        ids.update(i for i in entry.get("extension_ids", []) if isinstance(i, str))
    return ids
