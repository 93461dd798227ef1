"""Skill folders, zips and plugins written for tests, and the repository's samples."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_SKILL = ROOT / "install" / "samples" / "skills" / "price-compare"
SAMPLE_PLUGIN = ROOT / "install" / "samples" / "plugins" / "careful-shopper"


def skill_md(name: str, description: str = "Does one thing well.", body: str = "Step one. Step two.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def write_skill(folder: Path, name: str, *, description: str = "Does one thing well.", body: str = "Step one.",
                files: dict[str, str | bytes] | None = None) -> Path:
    """A skill folder `folder/<name>` with SKILL.md and `files`."""
    root = folder / name
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(skill_md(name, description, body))
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def zip_of(folder: Path, *, prefix: str = "") -> bytes:
    """The files of `folder` zipped (under `prefix/` when given)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{prefix}{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def zip_members(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def write_plugin(folder: Path, manifest: dict[str, Any], skills: dict[str, str] | None = None,
                 files: dict[str, str] | None = None, *, place: str = "plugin.json") -> Path:
    """A plugin folder with its manifest, skills (`skills/<name>`) and other files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / place).parent.mkdir(parents=True, exist_ok=True)
    (folder / place).write_text(json.dumps(manifest))
    for name, description in (skills or {}).items():
        write_skill(folder / "skills", name, description=description, body=f"How to {name}.")
    for rel, content in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content)
    return folder
