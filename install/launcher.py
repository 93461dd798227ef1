"""The small script Chrome starts: it runs the project's own interpreter on the host.

The browser passes its own environment, not the user's shell, so the launcher names the
interpreter by absolute path and never relies on PATH or shims. `-I` keeps PYTHONPATH and
user site-packages from the browser's environment out of the host.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path, PurePath

from host.paths import HOME_ENV


def launcher_name(family: str) -> str:
    return "tabwarden-host.cmd" if family == "win32" else "tabwarden-host"


def render(family: str, python: str, home_override: str | None) -> str:
    """The launcher's text for an OS family."""
    if family == "win32":
        lines = ["@echo off", "rem Tabwarden native host launcher, written by `tabwarden install`."]
        if home_override:
            lines.append(f'set "{HOME_ENV}={home_override}"')
        lines.append(f'"{python}" -I -m host host %*')
        return "\r\n".join(lines) + "\r\n"
    lines = ["#!/bin/sh", "# Tabwarden native host launcher, written by `tabwarden install`. The browser starts it."]
    if home_override:
        lines.append(f"export {HOME_ENV}={_sh_quote(home_override)}")
    lines.append(f'exec {_sh_quote(python)} -I -m host host "$@"')
    return "\n".join(lines) + "\n"


def _sh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def write(path: Path, family: str, python: str | None = None) -> Path:
    """Write the launcher (executable) and return its path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(family, python or sys.executable, os.environ.get(HOME_ENV)), encoding="utf-8", newline="")
    if family != "win32":
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def is_ours(path: PurePath) -> bool:
    """True when the file at `path` is a launcher written by us."""
    try:
        return "Tabwarden native host launcher" in Path(path).read_text(encoding="utf-8")
    except OSError:
        return False
