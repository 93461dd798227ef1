"""Site access granted without a click, for a browser nobody can click in (headless).

Chrome grants an extension a site only from a person's click (the side panel's grant, through
`chrome.permissions.request`, whose prompt a headless browser cannot show) or in the manifest of
the unpacked extension it loads. A launch that runs headless loads its own copy of the extension
and names it in the browser's environment (which the host inherits): the host adds the site to
that copy's manifest, and the extension reloads to take it. The reload restarts the host too, as
the extension's native port closes; its stored state (threads, rules, approvals) carries over.

The bundled extension is never written: only a copy the launch made for this run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

# Set by the launch (and the tests' browser runs) on the browser, so its host inherits it.
EXTENSION_COPY_ENV = "TABWARDEN_EXTENSION_COPY"


class SiteGrantRefused(Exception):
    """Site access cannot be granted this way here (no copy of the extension to write)."""


def extension_copy() -> Path:
    """The run's own copy of the extension, whose manifest may be written. Raises
    SiteGrantRefused when the browser loaded no such copy."""
    named = os.environ.get(EXTENSION_COPY_ENV)
    if not named:
        raise SiteGrantRefused("this browser was not started by `tabwarden launch` with a copy of the extension of "
                               "its own, so only the side panel's grant (a person's click) can add a site")
    folder = Path(named)
    if not (folder / "manifest.json").is_file():
        raise SiteGrantRefused(f"the extension copy named by {EXTENSION_COPY_ENV} has no manifest.json")
    return folder


def manifest_sites(folder: Path) -> list[str]:
    """The copy's `host_permissions`."""
    return list(_read(folder).get("host_permissions", []))


def add_site(folder: Path, pattern: str) -> list[str]:
    """Add the match pattern `pattern` to the copy's `host_permissions` (written atomically);
    returns them all."""
    return _write(folder, lambda held: {*held, pattern})


def remove_site(folder: Path, pattern: str) -> list[str]:
    """Take `pattern` out of the copy's `host_permissions`; returns those left."""
    return _write(folder, lambda held: set(held) - {pattern})


def _read(folder: Path) -> dict:
    try:
        return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SiteGrantRefused(f"the extension copy's manifest cannot be read: {exc}") from None


def _write(folder: Path, change) -> list[str]:
    manifest_path = folder / "manifest.json"
    manifest = _read(folder)
    patterns = sorted(change(manifest.get("host_permissions", [])))
    manifest["host_permissions"] = patterns
    temp = manifest_path.with_suffix(".json.tmp")
    try:
        temp.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        os.replace(temp, manifest_path)
    except OSError as exc:
        raise SiteGrantRefused(f"the extension copy's manifest cannot be written: {exc}") from None
    return patterns
