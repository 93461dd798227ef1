"""The built-ins' tables, applied through the store's migrations (component `builtins`)."""

from __future__ import annotations

from host.store.migrations import Migration

_MEMORY = """
CREATE TABLE bi_memory (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('model', 'user')),
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "per-profile memory (memory_read / memory_write)", sql=_MEMORY),
)
COMPONENT = "builtins"
