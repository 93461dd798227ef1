"""Memory: a small key-value store per profile that the model consults across threads.

The model reads it (always allowed) and writes it (a write, judged like any other) through the
built-in tools. The user lists, edits and clears it from the REPL (`memory.*` control methods). Every
entry records who wrote it last (`model` or `user`). Limits (entries, value length) come from
builtins.json; a write over a limit is refused with a code and changes nothing.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from host.builtins.refusals import BuiltinRefused
from host.builtins.schema import COMPONENT, MIGRATIONS
from host.store.db import Store

MAX_KEY_CHARS = 100
_KEY = re.compile(r"^[^\x00-\x1f]{1,100}$")


class MemoryRefused(BuiltinRefused, ValueError):
    """A memory change that was refused; `code` is stable (invalid_key, value_too_long, memory_full,
    not_found)."""


@dataclass(frozen=True)
class Entry:
    """One memory."""

    key: str
    value: str
    source: str
    created_at: float
    updated_at: float

    def wire(self) -> dict:
        """As JSON for control clients."""
        return {"key": self.key, "value": self.value, "source": self.source, "createdAt": self.created_at,
                "updatedAt": self.updated_at}


def check_key(key: str) -> str:
    """A key as stored (surrounding spaces dropped); MemoryRefused `invalid_key` if unusable."""
    cleaned = key.strip()
    if not _KEY.match(cleaned):
        raise MemoryRefused("invalid_key", f"a memory key is 1-{MAX_KEY_CHARS} characters without control "
                                           f"characters, not {key[:120]!r}")
    return cleaned


class MemoryStore:
    """The `bi_memory` table of one profile's store."""

    def __init__(self, db: Store, clock: Callable[[], float] = time.time):
        self.db = db
        self.clock = clock
        db.migrate(COMPONENT, MIGRATIONS)

    def entries(self, query: str | None = None) -> list[Entry]:
        """Every memory (or those whose key or value contains `query`, ignoring case), by key."""
        rows = self.db.query("SELECT * FROM bi_memory ORDER BY key")
        found = [_entry(r) for r in rows]
        if query:
            needle = query.casefold()
            found = [e for e in found if needle in e.key.casefold() or needle in e.value.casefold()]
        return found

    def get(self, key: str) -> Entry | None:
        """One memory by key, if it exists."""
        rows = self.db.query("SELECT * FROM bi_memory WHERE key = ?", (check_key(key),))
        return _entry(rows[0]) if rows else None

    def put(self, key: str, value: str, *, source: str, max_entries: int, max_value_chars: int) -> Entry:
        """Create or replace a memory, within the limits (checked in the same transaction)."""
        key = check_key(key)
        if len(value) > max_value_chars:
            raise MemoryRefused("value_too_long", f"a memory holds at most {max_value_chars} characters; this value "
                                                  f"has {len(value)}. Keep only what a later task needs.")
        now = self.clock()
        with self.db.transaction() as conn:
            exists = conn.execute("SELECT created_at FROM bi_memory WHERE key = ?", (key,)).fetchone()
            if exists is None:
                count = conn.execute("SELECT COUNT(*) AS n FROM bi_memory").fetchone()["n"]
                if count >= max_entries:
                    raise MemoryRefused("memory_full", f"memory is full ({count} of {max_entries} entries); forget "
                                                       "an entry first (value null)")
            created = exists["created_at"] if exists is not None else now
            conn.execute("INSERT INTO bi_memory (key, value, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value, source = excluded.source, "
                         "updated_at = excluded.updated_at", (key, value, source, created, now))
        return Entry(key, value, source, created, now)

    def delete(self, key: str) -> bool:
        """Forget a memory; returns whether it existed."""
        key = check_key(key)
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM bi_memory WHERE key = ?", (key,)).rowcount > 0

    def clear(self) -> int:
        """Forget every memory; returns how many there were."""
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM bi_memory").rowcount


def _entry(row) -> Entry:
    return Entry(row["key"], row["value"], row["source"], row["created_at"], row["updated_at"])
