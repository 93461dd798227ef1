"""A skill folder on disk: its files, their content hash, and reading its resources without ever
following a symlink out of it."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from host.skills.errors import (ARCHIVE_TOO_LARGE, FILE_TOO_LARGE, NOT_A_RESOURCE, NOT_A_SKILL, NOT_FOUND,
                                NOT_TEXT, SYMLINK, TOO_MANY_FILES, UNSAFE_PATH, SkillError)
from host.skills.front_matter import SkillDoc, parse_skill_md
from host.skills.limits import DEFAULT_LIMITS, SkillLimits

SKILL_MD = "SKILL.md"
RESOURCE_FOLDERS = ("references", "assets")
# Never part of a skill or plugin: version-control folders of a checkout, and what a Mac adds to a
# folder or zip. Left out of scans, hashes and copies alike.
NOT_PART = frozenset({".git", ".hg", ".svn", "__MACOSX", ".DS_Store"})
_HASH_PREFIX = b"tabwarden-skill-files-v1\n"
_DRIVE = re.compile(r"[A-Za-z]:")
_LISTED = 20
# O_NOFOLLOW is missing on Windows, where the lstat walk before opening is the guard. O_NONBLOCK:
# a FIFO swapped in after the check must not hang the host.
_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_BINARY", 0))


@dataclass(frozen=True)
class FileEntry:
    """One file of a skill: its POSIX path relative to the skill root, size and hex sha256."""

    path: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Bundle:
    """A checked skill folder. `content_hash` covers every file's path and content, so renaming,
    editing, adding or removing any file changes it."""

    root: Path
    doc: SkillDoc
    files: tuple[FileEntry, ...]
    content_hash: str
    has_scripts: bool


def find_skill_root(folder: Path) -> Path:
    """The folder holding SKILL.md: `folder` itself, or its only sub-folder (how a zip of a skill
    folder usually unpacks); raises `not_a_skill` otherwise."""
    if os.path.lexists(folder / SKILL_MD):
        return folder
    try:
        entries = [entry for entry in os.scandir(folder) if entry.name not in ("__MACOSX", ".DS_Store")]
    except (FileNotFoundError, NotADirectoryError):
        raise SkillError(NOT_A_SKILL, f"{folder} is not a folder") from None
    if len(entries) == 1 and entries[0].is_symlink():
        raise SkillError(SYMLINK, "the skill folder is a symbolic link", entries[0].name)
    if len(entries) == 1 and entries[0].is_dir(follow_symlinks=False) \
            and os.path.lexists(os.path.join(entries[0].path, SKILL_MD)):
        return Path(entries[0].path)
    near = [entry.name for entry in entries if entry.name.casefold() == "skill.md"]
    hint = f" (found {near[0]}; the name must be exactly SKILL.md)" if near else ""
    raise SkillError(NOT_A_SKILL, f"there is no SKILL.md at the top of the skill or in its only folder{hint}")


def read_bundle(folder: Path, limits: SkillLimits = DEFAULT_LIMITS) -> Bundle:
    """Check and hash every file of the skill in `folder` (see `find_skill_root`) and parse its
    SKILL.md. Symlinks anywhere, too many, too large or too deeply nested files are refused."""
    root = find_skill_root(folder)
    files, skill_md = _scan(root, limits)
    if skill_md is None:
        raise SkillError(NOT_A_SKILL, "SKILL.md is not a regular file", SKILL_MD)
    if len(skill_md) > limits.max_skill_md_bytes:
        raise SkillError(FILE_TOO_LARGE, f"SKILL.md is {len(skill_md)} bytes, over the cap of "
                                         f"{limits.max_skill_md_bytes} bytes", SKILL_MD)
    doc = parse_skill_md(_decode(skill_md, SKILL_MD), limits)
    return Bundle(root=root, doc=doc, files=files, content_hash=_content_hash(files),
                  has_scripts=any(entry.path.startswith("scripts/") for entry in files))


def check_folder(folder: Path, limits: SkillLimits = DEFAULT_LIMITS) -> tuple[tuple[FileEntry, ...], str]:
    """Every file of the tree at `folder` (any folder, a skill's or a plugin's) and their content
    hash; refuses what `read_bundle` would refuse for its shape alone (a symlink anywhere, too
    many, too large or too deeply nested files), so it may run before anything is copied."""
    files, _skill_md = _scan(folder, limits)
    return files, _content_hash(files)


def hash_folder(folder: Path, limits: SkillLimits = DEFAULT_LIMITS) -> str:
    """The content hash of the skill in `folder`, as `read_bundle` computes it, to check an
    installed copy against its pin; raises the same errors."""
    return read_bundle(folder, limits).content_hash


def read_resource(root: Path, resource: str, limits: SkillLimits = DEFAULT_LIMITS) -> str:
    """The text of one file under `references/` or `assets/` of the skill at `root`.

    Raises `unsafe_path`, `not_a_resource`, `symlink` (any component from `root` down),
    `not_found` (listing what exists), `file_too_large` or `not_text`."""
    parts = _resource_parts(resource)
    where = "/".join(parts)
    path = root
    for depth, part in enumerate([None, *parts]):
        path = path if part is None else path / part
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            raise _not_found(root, where) from None
        if stat.S_ISLNK(mode):
            raise SkillError(SYMLINK, "the path goes through a symbolic link, which skills may not hold", where)
        last = depth == len(parts)
        if (not last and not stat.S_ISDIR(mode)) or (last and not stat.S_ISREG(mode)):
            raise _not_found(root, where)
    data = _read_capped(path, limits.max_resource_bytes, where)
    return _decode(data, where).removeprefix("\ufeff")


def list_resources(root: Path) -> list[str]:
    """The POSIX paths of the regular files under `references/` and `assets/`, sorted; links
    are left out, as `read_resource` would refuse them."""
    found = []
    for top in RESOURCE_FOLDERS:
        if os.path.isdir(root / top) and not os.path.islink(root / top):
            for dirpath, dirnames, filenames in os.walk(root / top):
                # os.walk does not descend into linked folders, but lists them: drop them.
                dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
                for name in filenames:
                    full = os.path.join(dirpath, name)
                    if stat.S_ISREG(os.lstat(full).st_mode):
                        found.append(Path(full).relative_to(root).as_posix())
    return sorted(found)


def _scan(root: Path, limits: SkillLimits) -> tuple[tuple[FileEntry, ...], bytes | None]:
    """Every file under `root`, hashed, sorted by path; and the bytes of SKILL.md."""
    entries: list[FileEntry] = []
    skill_md: bytes | None = None
    total = 0
    pending: list[tuple[str, int]] = [("", 0)]
    while pending:
        prefix, depth = pending.pop()
        with os.scandir(root / prefix if prefix else root) as listing:
            children = sorted(listing, key=lambda entry: entry.name)
        for entry in children:
            if entry.name in NOT_PART:
                continue
            rel = prefix + _checked_name(entry.name, prefix)
            if entry.is_symlink():
                raise SkillError(SYMLINK, "skills may not hold symbolic links", rel)
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > limits.max_depth:
                    raise SkillError(UNSAFE_PATH, f"folders are nested more than {limits.max_depth} deep", rel)
                pending.append((rel + "/", depth + 1))
                continue
            if not entry.is_file(follow_symlinks=False):
                raise SkillError(UNSAFE_PATH, "this is neither a regular file nor a folder", rel)
            if len(entries) + 1 > limits.max_files:
                raise SkillError(TOO_MANY_FILES, f"the skill holds more than {limits.max_files} files")
            data = _read_capped(Path(entry.path), limits.max_file_bytes, rel)
            total += len(data)
            if total > limits.max_total_bytes:
                raise SkillError(ARCHIVE_TOO_LARGE, f"the skill's files total more than "
                                                    f"{limits.max_total_bytes} bytes")
            entries.append(FileEntry(rel, len(data), hashlib.sha256(data).hexdigest()))
            if rel == SKILL_MD:
                skill_md = data
    return tuple(sorted(entries, key=lambda entry: entry.path)), skill_md


def _checked_name(name: str, prefix: str) -> str:
    # A name that is not UTF-8 (os gives it back with surrogates) cannot be hashed or requested,
    # and a backslash or control character means something else on another system.
    bad = "\\" in name or any(ord(ch) < 32 or ord(ch) == 127 for ch in name)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        bad = True
    if bad:
        raise SkillError(UNSAFE_PATH, "the file name holds a backslash, a control character or bytes "
                                      "that are not UTF-8", prefix + name.encode("utf-8", "replace").decode())
    return name


def _content_hash(files: tuple[FileEntry, ...]) -> str:
    digest = hashlib.sha256(_HASH_PREFIX)
    for entry in files:
        # Length-prefixed path, then the fixed-size file digest: no two file lists encode alike.
        path = entry.path.encode("utf-8")
        digest.update(len(path).to_bytes(4, "big") + path + bytes.fromhex(entry.sha256))
    return digest.hexdigest()


def _read_capped(path: Path, cap: int, where: str) -> bytes:
    """The bytes of a regular file, opened without following a final symlink, refusing more than
    `cap` bytes whatever the size was when it was listed."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if os.path.islink(path):
            raise SkillError(SYMLINK, "skills may not hold symbolic links", where) from None
        raise SkillError(NOT_FOUND, f"the file cannot be opened ({exc.strerror})", where) from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SkillError(UNSAFE_PATH, "this is not a regular file", where)
        if info.st_size > cap:
            raise SkillError(FILE_TOO_LARGE, f"the file is {info.st_size} bytes, over the cap of {cap} bytes",
                             where)
        data = file.read(cap + 1)
    if len(data) > cap:
        raise SkillError(FILE_TOO_LARGE, f"the file holds more than {cap} bytes, the cap", where)
    return data


def _decode(data: bytes, where: str) -> str:
    if b"\0" in data:
        raise SkillError(NOT_TEXT, "the file holds NUL bytes: it is binary, not text", where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(NOT_TEXT, f"the file is not UTF-8 text (a bad byte at offset {exc.start})",
                         where) from None


def _resource_parts(resource: str) -> list[str]:
    """The parts of a requested resource path, normalised (`./`, doubled `/`), or an error."""
    if not isinstance(resource, str) or not resource.strip():
        raise SkillError(UNSAFE_PATH, "the resource path is empty", None)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in resource) or "\\" in resource:
        raise SkillError(UNSAFE_PATH, "the resource path holds a backslash or a control character; "
                                      "use / between folders", resource)
    if resource.startswith("/") or _DRIVE.match(resource):
        raise SkillError(UNSAFE_PATH, "the resource path must be relative to the skill, like "
                                      "references/guide.md", resource)
    parts = [part for part in resource.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise SkillError(UNSAFE_PATH, "the resource path may not contain `..`", resource)
    if len(parts) < 2 or parts[0] not in RESOURCE_FOLDERS:
        raise SkillError(NOT_A_RESOURCE, "only files under references/ and assets/ can be read",
                         "/".join(parts) or resource)
    return parts


def _not_found(root: Path, where: str) -> SkillError:
    available = list_resources(root)
    if not available:
        return SkillError(NOT_FOUND, "there is no such file; this skill has no resources", where)
    listed = ", ".join(available[:_LISTED])
    more = f" and {len(available) - _LISTED} more" if len(available) > _LISTED else ""
    return SkillError(NOT_FOUND, f"there is no such file; the skill has: {listed}{more}", where)
