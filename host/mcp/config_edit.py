"""Changing mcp.json for the settings page: add, edit or remove one server.

The file is read as JSON, the one server is changed, and the whole result is validated exactly
as the file is at each turn start (`parse_mcp_config`); only then is it written, atomically
(a temp file, then a rename), so a refused change leaves the file as it was and a reader never
sees half a file. Fields the page does not edit (headers, bearerTokenEnv, connectTimeoutSeconds)
stay as they were. A file that cannot be read or is not a JSON object is left alone: the person
who wrote it fixes it by hand.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from host.config_files import ConfigFileError, EditRefused
from host.mcp.auth import origin_of
from host.mcp.config import MAX_FILE_BYTES, parse_mcp_config


def _read(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {"servers": {}}
    except OSError as exc:
        raise EditRefused("invalid_mcp_config", f"cannot read {path.name}: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise EditRefused("invalid_mcp_config", f"{path.name} is larger than {MAX_FILE_BYTES} bytes; fix it by hand first")
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EditRefused("invalid_mcp_config", f"{path.name} is not valid JSON ({exc}); fix it by hand first") from None
    if not isinstance(document, dict) or not isinstance(document.get("servers", {}), dict):
        raise EditRefused("invalid_mcp_config", f"{path.name} does not hold a JSON object with a `servers` object; "
                                                   "fix it by hand first")
    document.setdefault("servers", {})
    return document


def _check(path: Path, document: dict[str, Any]) -> None:
    try:
        parse_mcp_config(document, path.name)
    except ConfigFileError as exc:
        # The same words and paths as the file's own errors, in the form other refusals use.
        raise EditRefused("invalid_mcp_server", "; ".join(f"{message} - at `{where}`"
                                                             for where, message in exc.problems)) from None


def _write(path: Path, document: dict[str, Any]) -> None:
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def save_server(path: Path, server_id: str, *, url: str, enabled: bool, tools: list[str] | None,
                timeout_seconds: float | None, new: bool, on_origin_change: Callable[[], None] | None = None,
                elicitation: bool = False, sampling: bool = False) -> None:
    """Add or edit `server_id` in the file at `path` (raises EditRefused, writing nothing).
    `tools` / `timeout_seconds` None drop the key (every tool; the default timeout);
    `elicitation` / `sampling` false drop theirs (off).
    `on_origin_change` runs, before the file changes, when an edit moves the server to another
    origin (the stored token was given for the old one); if it raises, nothing is written."""
    document = _read(path)
    servers = document["servers"]
    current = servers.get(server_id)
    if current is not None and new:
        raise EditRefused("mcp_server_exists", f"there is already a server {server_id!r}; edit it instead - at `$.server`")
    moved = isinstance(current, dict) and origin_of(str(current.get("url"))) != origin_of(url)
    if moved:
        carried = [k for k in ("headers", "bearerTokenEnv", "bearer_token_env") if current.get(k)]
        if carried:
            # Headers and an env token were set up for the old origin and may be secrets: moving the
            # server from here would send them to the new one unseen.
            raise EditRefused("mcp_origin_change_refused",
                                 f"{server_id!r} has {' and '.join(sorted({'headers' if k == 'headers' else 'bearerTokenEnv' for k in carried}))} "
                                 f"set for {origin_of(str(current.get('url')))}; they would go to {origin_of(url)}. "
                                 f"Remove the server and add it again, or edit {path.name} by hand - at `$.url`")
    entry = dict(current) if isinstance(current, dict) else {}
    entry["url"] = url
    entry["enabled"] = enabled
    entry.pop("timeout_seconds", None)  # the file may use the Python name; the camel one replaces it
    for key, value in (("tools", tools), ("timeoutSeconds", timeout_seconds), ("elicitation", elicitation or None),
                       ("sampling", sampling or None)):
        if value is None:
            entry.pop(key, None)
        else:
            entry[key] = value
    servers[server_id] = entry
    _check(path, document)
    if moved and on_origin_change is not None:
        on_origin_change()
    _write(path, document)


def remove_server(path: Path, server_id: str, before_write: Callable[[], None] | None = None) -> None:
    """Remove `server_id` from the file (raises EditRefused when it is not there).
    `before_write` runs once the removal is known to be valid, before the file changes; if it
    raises, nothing is written."""
    document = _read(path)
    if server_id not in document["servers"]:
        raise EditRefused("mcp_server_not_found", f"there is no server {server_id!r} in {path.name} - at `$.server`")
    del document["servers"][server_id]
    _check(path, document)
    if before_write is not None:
        before_write()
    _write(path, document)
