"""Where a running host publishes its control endpoint, and how clients find it.

Each host process gets `<runtime dir>/hosts/<pid>/` (mode 0700) holding `info.json` (transport,
address, pid, start time) and `token` (mode 0600). Only the user can read either. On Windows the
modes mean nothing; the folder lies in the user's profile, whose ACL already keeps others out, and
the address is a named pipe with a random suffix.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from host.control.liveness import pid_alive
from host.paths import dirs, ensure

log = logging.getLogger("tabwarden.control")

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
        socket_path = short_socket_dir() / f"{pid}.sock"
    return folder, socket_path, token


def short_socket_dir() -> Path:
    """A private folder in the temporary directory for a socket whose usual path is too long.

    Its fixed name (`tw-<uid>`) is predictable, so anyone may have made it first: it is used only
    when it is a real folder (no symlink) that this user owns and nobody else may enter; otherwise
    a fresh folder with a random name is made (created 0700 by us, so it cannot be anyone else's).
    """
    base = Path(tempfile.gettempdir())
    if not hasattr(os, "getuid"):
        return Path(tempfile.mkdtemp(prefix="tw-", dir=base))
    fixed = base / f"tw-{os.getuid()}"
    try:
        fixed.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError:
        return Path(tempfile.mkdtemp(prefix="tw-", dir=base))
    if owned_private_dir(fixed):
        return fixed
    log.warning("%s is not a private folder of this user (made by someone else, or a link); the control "
                "socket goes to a fresh folder instead", fixed)
    return Path(tempfile.mkdtemp(prefix="tw-", dir=base))


def owned_private_dir(path: Path) -> bool:
    """True when `path` is a folder (not a link) owned by this user that only they can enter."""
    import stat

    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


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
