"""Whether an installed folder still holds what the user approved: its files hashed and compared
with the pinned content hash. A folder whose files' sizes, times and inodes are as at the last
check is not hashed again, so listing a dozen skills at every turn costs a few stat calls."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Generic, TypeVar

from host.skills.errors import SkillError

T = TypeVar("T")


@dataclass(frozen=True)
class Checked(Generic[T]):
    """A folder as it is now against its pin: `ok`, `changed` (with the paths that differ) or
    `broken` (it cannot be read: `problem`). `current` is what the reader made of it."""

    status: str
    current_hash: str | None = None
    changed_files: tuple[str, ...] = ()
    problem: str | None = None
    current: T | None = None


class PinCheck(Generic[T]):
    """Checks folders with `read(folder) -> (files {path: sha256}, content_hash, value)`,
    remembering the last reading of each folder by its files' stat signature."""

    def __init__(self, read: Callable[[Path], tuple[dict[str, str], str, T]]):
        self._read = read
        self._lock = threading.Lock()
        self._seen: dict[Path, tuple[tuple, tuple[dict[str, str], str, T]]] = {}

    def check(self, folder: Path, pinned_hash: str, pinned_files: dict[str, str], *, fresh: bool = False) -> Checked[T]:
        """The folder against its pin; `fresh` reads it again whatever its stat signature says."""
        try:
            signature = _signature(folder)
            with self._lock:
                seen = self._seen.get(folder)
            if fresh or seen is None or seen[0] != signature:
                reading = self._read(folder)
                with self._lock:
                    self._seen[folder] = (signature, reading)
            else:
                reading = seen[1]
        except SkillError as exc:
            return Checked("broken", problem=f"{exc.code}: {exc}")
        except OSError as exc:
            return Checked("broken", problem=f"cannot read {folder.name}: {exc.strerror or exc}")
        files, content_hash, value = reading
        if content_hash == pinned_hash:
            return Checked("ok", content_hash, (), None, value)
        changed = sorted(p for p in {*files, *pinned_files} if files.get(p) != pinned_files.get(p))
        return Checked("changed", content_hash, tuple(changed), None, value)

    def forget(self, folder: Path) -> None:
        """Drop what was remembered of a folder (it was replaced or removed)."""
        with self._lock:
            self._seen.pop(folder, None)


def _signature(folder: Path) -> tuple:
    if not folder.is_dir() or folder.is_symlink():
        raise OSError(2, "the installed folder is missing")
    entries = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            info = os.lstat(os.path.join(dirpath, name))
            entries.append((dirpath, name, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ino))
    return tuple(entries)
