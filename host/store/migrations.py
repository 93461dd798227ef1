"""Schema migrations, per component.

Each component (the gatekeeper, the engine, the built-ins' memory) owns an ordered list of migrations and applies it
with `Store.migrate(component, migrations)`. Applied versions are recorded in `schema_migrations`,
so running the same list again is a no-op and a newer list only applies what is missing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    component  TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    applied_at REAL    NOT NULL,
    PRIMARY KEY (component, version)
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class Migration:
    """One schema step: `sql` (a script) or `apply` (a function given the connection)."""

    version: int
    name: str
    sql: str | None = None
    apply: Callable[[sqlite3.Connection], None] | None = None

    def __post_init__(self) -> None:
        if (self.sql is None) == (self.apply is None):
            raise ValueError(f"migration {self.version} {self.name!r}: give exactly one of sql and apply")


def check_order(component: str, migrations: Sequence[Migration]) -> None:
    """Refuse a list whose versions are not strictly increasing from 1 (a programming error)."""
    for index, migration in enumerate(migrations, start=1):
        if migration.version != index:
            raise ValueError(f"{component}: migration #{index} has version {migration.version}; expected {index}")


def run_statements(conn: sqlite3.Connection, script: str) -> None:
    """Run a multi-statement script inside the caller's transaction.

    `executescript` would commit first, so statements are split and run one by one. Migration
    scripts therefore must not put `;` inside string literals or trigger bodies; triggers go
    through `Migration.apply` instead.
    """
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)
