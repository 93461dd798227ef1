"""The tables of installed skills and plugins, applied through the store's migrations
(component `skills`). Files live in folders next to the database; these rows pin them."""

from __future__ import annotations

from host.store.migrations import Migration

_TABLES = """
CREATE TABLE sk_skills (
    name         TEXT PRIMARY KEY,
    description  TEXT NOT NULL,
    folder       TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    file_hashes  TEXT NOT NULL,
    enabled      INTEGER NOT NULL DEFAULT 1,
    plugin       TEXT,
    source       TEXT NOT NULL DEFAULT '',
    files        INTEGER NOT NULL DEFAULT 0,
    size         INTEGER NOT NULL DEFAULT 0,
    has_scripts  INTEGER NOT NULL DEFAULT 0,
    installed_at REAL NOT NULL,
    updated_at   REAL NOT NULL
);
CREATE TABLE sk_plugins (
    name           TEXT PRIMARY KEY,
    folder         TEXT NOT NULL,
    content_hash   TEXT NOT NULL,
    file_hashes    TEXT NOT NULL,
    manifest       TEXT NOT NULL,
    server_enabled TEXT NOT NULL DEFAULT '{}',
    source         TEXT NOT NULL DEFAULT '',
    installed_at   REAL NOT NULL,
    updated_at     REAL NOT NULL
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "installed skills and plugins, pinned by content hash", sql=_TABLES),
)
COMPONENT = "skills"
