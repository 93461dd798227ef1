"""Unpacking a skill zip: every member is checked before anything is written, and a refused or
broken archive leaves the destination empty."""

from __future__ import annotations

import io
import os
import re
import shutil
import stat
import zipfile
import zlib
from pathlib import Path

from host.skills.errors import (ARCHIVE_TOO_LARGE, BAD_ARCHIVE, FILE_TOO_LARGE, SYMLINK, TOO_MANY_FILES,
                                UNSAFE_PATH, SkillError)
from host.skills.limits import DEFAULT_LIMITS, SkillLimits

_RATIO_FLOOR = 64 * 1024  # below this a high compression ratio is normal, not a bomb
_CHUNK = 64 * 1024
_DRIVE = re.compile(r"[A-Za-z]:")
_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})
# What zipfile raises on damaged or unsupported data while reading a member.
_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)


def extract_zip(source: bytes | Path, dest: Path, limits: SkillLimits = DEFAULT_LIMITS) -> None:
    """Unpack the zip `source` (its bytes, or a path to it) into `dest`, an empty or missing folder.

    Raises `SkillError` (`bad_archive`, `unsafe_path`, `symlink`, `too_many_files`,
    `file_too_large`, `archive_too_large`) and then `dest` holds nothing. `__MACOSX/` entries and
    `.DS_Store` files are skipped. File modes in the archive are not applied."""
    if os.path.lexists(dest) and (dest.is_symlink() or not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} must be an empty folder or not exist")
    try:
        archive = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise SkillError(BAD_ARCHIVE, f"this is not a readable zip archive ({exc})") from None
    with archive:
        members = _checked_members(archive, limits)
        created = not dest.exists()
        dest.mkdir(parents=True, exist_ok=True)
        try:
            _write(archive, members, dest, limits)
        except BaseException:
            _empty(dest, remove=created)
            raise


def _checked_members(archive: zipfile.ZipFile, limits: SkillLimits) -> list[tuple[zipfile.ZipInfo, list[str]]]:
    """The members to write, each with its path split into parts, once all of them pass."""
    infos = archive.infolist()
    # Directory entries do not count as files, but a flood of them is still refused.
    if len(infos) > 4 * limits.max_files:
        raise SkillError(TOO_MANY_FILES, f"the archive has {len(infos)} entries; a skill may hold at most "
                                         f"{limits.max_files} files")
    kept: list[tuple[zipfile.ZipInfo, list[str]]] = []
    seen: dict[str, str] = {}
    total = files = 0
    for info in infos:
        parts = _safe_parts(info)
        if parts[0] == "__MACOSX" or parts[-1] == ".DS_Store":
            continue
        name = info.filename
        if stat.S_ISLNK(info.external_attr >> 16):
            raise SkillError(SYMLINK, "the archive holds a symbolic link; skills may not contain links", name)
        if info.flag_bits & 0x1:
            raise SkillError(BAD_ARCHIVE, "the archive member is encrypted", name)
        if len(parts) - (0 if info.is_dir() else 1) > limits.max_depth + 1:
            raise SkillError(UNSAFE_PATH, f"the path is nested more than {limits.max_depth} folders deep", name)
        # Case-insensitive, because the same archive must unpack the same way on macOS and Windows.
        key = "/".join(parts).casefold()
        if key in seen and not info.is_dir():
            raise SkillError(BAD_ARCHIVE, f"the archive holds {seen[key]!r} more than once "
                                          f"(names differing only in case count as the same)", name)
        seen[key] = name
        kept.append((info, parts))
        if info.is_dir():
            continue
        if info.compress_type not in _METHODS:
            raise SkillError(BAD_ARCHIVE, f"the member uses an unsupported compression method "
                                          f"({info.compress_type})", name)
        files += 1
        if files > limits.max_files:
            raise SkillError(TOO_MANY_FILES, f"the archive holds more than {limits.max_files} files")
        if info.file_size > limits.max_file_bytes:
            raise SkillError(FILE_TOO_LARGE, f"the file is {info.file_size} bytes, over the cap of "
                                             f"{limits.max_file_bytes} bytes", name)
        if info.file_size > _RATIO_FLOOR and (
                info.compress_size == 0 or info.file_size / info.compress_size > limits.max_ratio):
            raise SkillError(ARCHIVE_TOO_LARGE, f"the member expands from {info.compress_size} to "
                                                f"{info.file_size} bytes, more than {limits.max_ratio} "
                                                f"times: a zip bomb", name)
        total += info.file_size
        if total > limits.max_total_bytes:
            raise SkillError(ARCHIVE_TOO_LARGE, f"the files total more than {limits.max_total_bytes} "
                                                f"bytes uncompressed")
    _refuse_file_folder_clashes(kept)
    return kept


def _safe_parts(info: zipfile.ZipInfo) -> list[str]:
    # orig_filename: zipfile cuts `filename` at a NUL byte, hiding the trick.
    raw = info.orig_filename
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in raw):
        raise SkillError(UNSAFE_PATH, "the member name holds a control character",
                         raw.encode("unicode_escape").decode("ascii"))
    if "\\" in raw:
        raise SkillError(UNSAFE_PATH, "the member name holds a backslash, which is a folder separator "
                                      "on Windows", raw)
    if raw.startswith("/") or _DRIVE.match(raw):
        raise SkillError(UNSAFE_PATH, "the member name is an absolute path", raw)
    parts = raw.removesuffix("/").split("/") if raw.endswith("/") else raw.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise SkillError(UNSAFE_PATH, "the member name has an empty, `.` or `..` segment", raw)
    return parts


def _refuse_file_folder_clashes(kept: list[tuple[zipfile.ZipInfo, list[str]]]) -> None:
    """A name used both as a file and as a folder cannot be unpacked; say so before writing."""
    folders = {"/".join(parts[:i]).casefold() for _, parts in kept for i in range(1, len(parts))}
    folders |= {"/".join(parts).casefold() for info, parts in kept if info.is_dir()}
    for info, parts in kept:
        if not info.is_dir() and "/".join(parts).casefold() in folders:
            raise SkillError(BAD_ARCHIVE, "the name is used both for a file and for a folder", info.filename)


def _write(archive: zipfile.ZipFile, members: list[tuple[zipfile.ZipInfo, list[str]]], dest: Path,
           limits: SkillLimits) -> None:
    total = 0
    for info, parts in members:
        target = dest.joinpath(*parts)
        if info.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        try:
            # "xb": never write through anything already there.
            with archive.open(info) as reader, open(target, "xb") as writer:
                while chunk := reader.read(_CHUNK):
                    written += len(chunk)
                    total += len(chunk)
                    # The declared sizes were checked, but the bytes are what counts.
                    if written > limits.max_file_bytes:
                        raise SkillError(FILE_TOO_LARGE, f"the file holds more than {limits.max_file_bytes} "
                                                         f"bytes", info.filename)
                    if total > limits.max_total_bytes:
                        raise SkillError(ARCHIVE_TOO_LARGE, f"the files total more than "
                                                            f"{limits.max_total_bytes} bytes uncompressed")
                    writer.write(chunk)
        except _READ_ERRORS as exc:
            raise SkillError(BAD_ARCHIVE, f"the member cannot be read ({exc})", info.filename) from None


def _empty(dest: Path, *, remove: bool) -> None:
    if remove:
        shutil.rmtree(dest, ignore_errors=True)
        return
    for child in dest.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
