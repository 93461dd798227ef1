"""Where a running host publishes its control endpoint, and how clients find it.

Each host process gets `<runtime dir>/hosts/<pid>/` (mode 0700) holding `info.json` (socket
path, pid, start time) and `token` (mode 0600). Only the user can read either.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from host.paths import dirs, ensure

# sun_path holds 104-108 bytes depending on the OS; keep a margin.
MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class HostEntry:
    pid: int
    folder: Path
    socket_path: Path
    started_at: float

    def token(self) -> str:
        return (self.folder / "token").read_text(encoding="ascii").strip()


def hosts_dir() -> Path:
    return dirs().runtime / "hosts"


def publish(pid: int) -> tuple[Path, Path, str]:
    """Create this host's folder; return (folder, socket path, token)."""
    folder = ensure(hosts_dir() / str(pid))
    os.chmod(folder, 0o700)
    socket_path = folder / "control.sock"
    if len(str(socket_path)) > MAX_SOCKET_PATH:
        short = Path(tempfile.gettempdir()) / f"tw-{os.getuid() if hasattr(os, 'getuid') else 'u'}"
        ensure(short)
        os.chmod(short, 0o700)
        socket_path = short / f"{pid}.sock"
    token = secrets.token_urlsafe(32)
    _write_private(folder / "token", token)
    return folder, socket_path, token


def write_info(folder: Path, socket_path: Path, pid: int) -> None:
    """Announce the endpoint (after the socket exists)."""
    _write_private(folder / "info.json", json.dumps({"pid": pid, "socket": str(socket_path), "started_at": time.time()}))


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def unpublish(folder: Path, socket_path: Path) -> None:
    """Remove this host's files."""
    for path in (socket_path, folder / "info.json", folder / "token"):
        try:
            path.unlink()
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_hosts() -> list[HostEntry]:
    """Hosts whose process is alive, newest first."""
    found = []
    root = hosts_dir()
    if not root.is_dir():
        return []
    for folder in root.iterdir():
        try:
            info = json.loads((folder / "info.json").read_text(encoding="utf-8"))
            entry = HostEntry(int(info["pid"]), folder, Path(info["socket"]), float(info["started_at"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _alive(entry.pid):
            found.append(entry)
    return sorted(found, key=lambda e: e.started_at, reverse=True)
