"""The caller-origin check: only our registered extensions may start a host session.

Chrome starts the host with the caller's origin (`chrome-extension://<id>/`) as an argument;
on Windows a `--parent-window=<hwnd>` argument follows.
"""

from __future__ import annotations

import re

_ORIGIN = re.compile(r"^chrome-extension://([a-p]{32})/?$")


def extension_id_from_origin(origin: str) -> str | None:
    """The 32-letter extension id in a caller origin, or None if it is not one."""
    match = _ORIGIN.match(origin or "")
    return match.group(1) if match else None


def find_caller_origin(argv: list[str]) -> str | None:
    """The first argument that looks like a caller origin (Chrome passes it first)."""
    for arg in argv:
        if arg.startswith("chrome-extension://"):
            return arg
    return None


def check_caller(argv: list[str], allowed_ids: set[str]) -> tuple[str | None, str | None]:
    """(extension id, None) when the caller is allowed, else (None, reason)."""
    origin = find_caller_origin(argv)
    if origin is None:
        return None, "no caller origin argument: the host must be started by the browser"
    ext_id = extension_id_from_origin(origin)
    if ext_id is None:
        return None, f"malformed caller origin {origin!r}"
    if ext_id not in allowed_ids:
        return None, f"caller {origin} is not a registered Tabwarden extension"
    return ext_id, None
