"""Bringing a skill or plugin in: a folder or `.zip` path on this computer, or the bytes of a
`.zip` a page read, copied into a private staging folder and checked there. Nothing is installed
from the original: what is checked and hashed is the copy that will be used."""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from host.skills.archive import extract_zip
from host.skills.bundle import NOT_PART, check_folder
from host.skills.errors import BAD_ARCHIVE, UNREADABLE_SOURCE, SkillError
from host.skills.limits import SkillLimits

MAX_ZIP_BYTES = 32 * 1024 * 1024  # the archive itself, before anything is unpacked


@dataclass(frozen=True)
class Source:
    """Where a bundle comes from: `path` (a folder or a .zip), or `data` (a .zip's bytes) named
    `name` in messages."""

    path: str | None = None
    data: bytes | None = None
    name: str = ""

    @property
    def label(self) -> str:
        """How the source is shown: its path, or the picked file's name."""
        return self.path or self.name or "(uploaded zip)"

    @classmethod
    def from_wire(cls, path: str | None, zip_name: str | None, zip_data: str | None) -> "Source":
        """A source from a page's fields (exactly one of a path and zip data); raises SkillError."""
        if (path is None) == (zip_data is None):
            raise SkillError(UNREADABLE_SOURCE, "give either a folder or .zip path, or the bytes of a .zip")
        if path is not None:
            return cls(path=path)
        try:
            data = base64.b64decode(zip_data or "", validate=True)
        except (binascii.Error, ValueError):
            raise SkillError(BAD_ARCHIVE, "the .zip sent by the page is not valid base64") from None
        return cls(data=data, name=zip_name or "")


@contextmanager
def staged(source: Source, staging_root: Path, limits: SkillLimits) -> Iterator[Path]:
    """A private copy of the source's files, removed when the block ends (unless the caller moved
    it away). Raises SkillError for a source that cannot be read or holds something unsafe."""
    os.makedirs(staging_root, mode=0o700, exist_ok=True)
    folder = staging_root / uuid.uuid4().hex
    try:
        if source.data is not None:
            _check_zip_size(len(source.data), source.label)
            extract_zip(source.data, folder, limits)
        else:
            _copy_path(Path(os.path.expanduser(source.path or "")), folder, limits)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _copy_path(path: Path, folder: Path, limits: SkillLimits) -> None:
    if not path.is_absolute():
        raise SkillError(UNREADABLE_SOURCE, f"give the full path, not {str(path)!r}")
    if os.path.islink(path):
        raise SkillError(UNREADABLE_SOURCE, f"{path} is a symbolic link; give the folder or file it points to")
    if path.is_dir():
        check_folder(path, limits)  # refuse links and oversized trees before copying anything
        shutil.copytree(path, folder, symlinks=True, ignore=lambda _dir, names: [n for n in names if n in NOT_PART])
        return
    if not path.is_file():
        raise SkillError(UNREADABLE_SOURCE, f"there is no folder or .zip file at {path}")
    try:
        size = path.stat().st_size
        _check_zip_size(size, str(path))
        data = path.read_bytes()
    except OSError as exc:
        raise SkillError(UNREADABLE_SOURCE, f"cannot read {path}: {exc.strerror}") from None
    extract_zip(data, folder, limits)


def _check_zip_size(size: int, label: str) -> None:
    if size > MAX_ZIP_BYTES:
        raise SkillError(BAD_ARCHIVE, f"{label} is {size} bytes; a skill or plugin archive may be at most "
                                      f"{MAX_ZIP_BYTES} bytes")
