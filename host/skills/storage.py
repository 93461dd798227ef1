"""Rows of the installed skills and plugins (`sk_skills`, `sk_plugins`): what was installed, from
where, and the content hashes the user approved. Storage failures leave as `StoreError`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from host.skills.schema import COMPONENT, MIGRATIONS
from host.store.db import Store


@dataclass(frozen=True)
class SkillRow:
    """One installed skill. `folder` is relative to the library's root; `file_hashes` maps each
    file's path to its sha256 as approved."""

    name: str
    description: str
    folder: str
    content_hash: str
    file_hashes: dict[str, str]
    enabled: bool = True
    plugin: str | None = None
    source: str = ""
    files: int = 0
    size: int = 0
    has_scripts: bool = False
    installed_at: float = 0.0
    updated_at: float = 0.0


@dataclass(frozen=True)
class PluginRow:
    """One installed plugin. `manifest` is what it adds, as reviewed and stored at install (its
    rules, lists and servers come from here, never from the files on disk)."""

    name: str
    folder: str
    content_hash: str
    file_hashes: dict[str, str]
    manifest: dict[str, Any]
    server_enabled: dict[str, bool] = field(default_factory=dict)
    source: str = ""
    installed_at: float = 0.0
    updated_at: float = 0.0


_SKILL_COLUMNS = ("name", "description", "folder", "content_hash", "file_hashes", "enabled", "plugin", "source",
                  "files", "size", "has_scripts", "installed_at", "updated_at")
_PLUGIN_COLUMNS = ("name", "folder", "content_hash", "file_hashes", "manifest", "server_enabled", "source",
                   "installed_at", "updated_at")


class SkillStorage:
    """The two tables of one profile's store."""

    def __init__(self, db: Store):
        self.db = db
        db.migrate(COMPONENT, MIGRATIONS)

    # -- skills --------------------------------------------------------------------------------

    def skills(self) -> list[SkillRow]:
        """Every installed skill, by name."""
        return [_skill(r) for r in self.db.query(f"SELECT {', '.join(_SKILL_COLUMNS)} FROM sk_skills ORDER BY name")]

    def skill(self, name: str) -> SkillRow | None:
        """One skill, or None."""
        rows = self.db.query(f"SELECT {', '.join(_SKILL_COLUMNS)} FROM sk_skills WHERE name = ?", (name,))
        return _skill(rows[0]) if rows else None

    def put_skill(self, conn: Any, row: SkillRow) -> None:
        """Insert or replace a skill inside the caller's transaction."""
        values = (row.name, row.description, row.folder, row.content_hash, json.dumps(row.file_hashes, sort_keys=True),
                  int(row.enabled), row.plugin, row.source, row.files, row.size, int(row.has_scripts),
                  row.installed_at, row.updated_at)
        conn.execute(f"INSERT OR REPLACE INTO sk_skills ({', '.join(_SKILL_COLUMNS)}) VALUES "
                     f"({', '.join('?' * len(_SKILL_COLUMNS))})", values)

    def delete_skill(self, conn: Any, name: str) -> None:
        """Forget one skill's row inside the caller's transaction."""
        conn.execute("DELETE FROM sk_skills WHERE name = ?", (name,))

    # -- plugins -------------------------------------------------------------------------------

    def plugins(self) -> list[PluginRow]:
        """Every installed plugin, by name."""
        return [_plugin(r) for r in self.db.query(f"SELECT {', '.join(_PLUGIN_COLUMNS)} FROM sk_plugins ORDER BY name")]

    def plugin(self, name: str) -> PluginRow | None:
        """One plugin, or None."""
        rows = self.db.query(f"SELECT {', '.join(_PLUGIN_COLUMNS)} FROM sk_plugins WHERE name = ?", (name,))
        return _plugin(rows[0]) if rows else None

    def put_plugin(self, conn: Any, row: PluginRow) -> None:
        """Insert or replace a plugin inside the caller's transaction."""
        values = (row.name, row.folder, row.content_hash, json.dumps(row.file_hashes, sort_keys=True),
                  json.dumps(row.manifest, sort_keys=True), json.dumps(row.server_enabled, sort_keys=True), row.source,
                  row.installed_at, row.updated_at)
        conn.execute(f"INSERT OR REPLACE INTO sk_plugins ({', '.join(_PLUGIN_COLUMNS)}) VALUES "
                     f"({', '.join('?' * len(_PLUGIN_COLUMNS))})", values)

    def delete_plugin(self, conn: Any, name: str) -> None:
        """Forget a plugin and its skills' rows inside the caller's transaction."""
        conn.execute("DELETE FROM sk_skills WHERE plugin = ?", (name,))
        conn.execute("DELETE FROM sk_plugins WHERE name = ?", (name,))


def _skill(r: Any) -> SkillRow:
    return SkillRow(name=r["name"], description=r["description"], folder=r["folder"], content_hash=r["content_hash"],
                    file_hashes=json.loads(r["file_hashes"]), enabled=bool(r["enabled"]), plugin=r["plugin"],
                    source=r["source"], files=r["files"], size=r["size"], has_scripts=bool(r["has_scripts"]),
                    installed_at=r["installed_at"], updated_at=r["updated_at"])


def _plugin(r: Any) -> PluginRow:
    return PluginRow(name=r["name"], folder=r["folder"], content_hash=r["content_hash"],
                     file_hashes=json.loads(r["file_hashes"]), manifest=json.loads(r["manifest"]),
                     server_enabled=json.loads(r["server_enabled"]), source=r["source"],
                     installed_at=r["installed_at"], updated_at=r["updated_at"])
