"""Where a running host publishes its control endpoint, and how clients find it.

Each host process gets `<runtime dir>/hosts/<pid>/` (mode 0700) holding `info.json` (transport,
address, pid, start time) and `token` (mode 0600). Only the user can read either. On Windows the
modes mean nothing; the folder lies in the user's profile, whose ACL already keeps others out, and
the address is a named pipe with a random suffix.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from host.control.liveness import pid_alive
from host.paths import dirs, ensure

# sun_path holds 104-108 bytes depending on the OS; keep a margin.
MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class HostEntry:
    """One running host's published control endpoint."""

    pid: int
    folder: Path
    socket_path: Path  # the socket file, or the pipe name when `transport` is "pipe"
    started_at: float
    transport: str = "unix"

    def token(self) -> str:
        return (self.folder / "token").read_text(encoding="ascii").strip()


def hosts_dir() -> Path:
    return dirs().runtime / "hosts"


def publish(pid: int, transport: str = "unix") -> tuple[Path, Path, str]:
    """Create this host's folder and token; return (folder, endpoint address, token)."""
    folder = ensure(hosts_dir() / str(pid))
    os.chmod(folder, 0o700)
    token = secrets.token_urlsafe(32)
    _write_private(folder / "token", token)
    if transport == "pipe":
        return folder, Path(rf"\\.\pipe\tabwarden-{pid}-{secrets.token_hex(8)}"), token
    socket_path = folder / "control.sock"
    if len(str(socket_path)) > MAX_SOCKET_PATH:
        short = Path(tempfile.gettempdir()) / f"tw-{os.getuid() if hasattr(os, 'getuid') else 'u'}"
        ensure(short)
        os.chmod(short, 0o700)
        socket_path = short / f"{pid}.sock"
    return folder, socket_path, token


def write_info(folder: Path, socket_path: Path, pid: int, transport: str = "unix") -> None:
    """Announce the endpoint (after it listens)."""
    _write_private(folder / "info.json", json.dumps({"pid": pid, "socket": str(socket_path), "started_at": time.time(),
                                                     "transport": transport}))


def _write_private(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def unpublish(folder: Path, socket_path: Path) -> None:
    """Remove this host's files."""
    paths = [folder / "info.json", folder / "token"]
    if not str(socket_path).startswith("\\\\"):  # a pipe name is not a file
        paths.insert(0, socket_path)
    for path in paths:
        try:
            path.unlink()
        except OSError:
            pass
    try:
        folder.rmdir()
    except OSError:
        pass


def running_hosts() -> list[HostEntry]:
    """Hosts whose process is alive, newest first."""
    found = []
    root = hosts_dir()
    if not root.is_dir():
        return []
    for folder in root.iterdir():
        try:
            info = json.loads((folder / "info.json").read_text(encoding="utf-8"))
            entry = HostEntry(int(info["pid"]), folder, Path(info["socket"]), float(info["started_at"]),
                              str(info.get("transport", "unix")))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if pid_alive(entry.pid):
            found.append(entry)
    return sorted(found, key=lambda e: e.started_at, reverse=True)
