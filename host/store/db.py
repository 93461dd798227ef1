"""`Store`: one SQLite file, WAL mode, one connection per thread.

Every sqlite3 failure leaves this module as `StoreError`, so callers (the gatekeeper above all)
can fail closed on one exception type instead of guessing which driver errors may occur.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from protocol.errors import TabwardenError

from host.store.migrations import BOOTSTRAP, Migration, check_order, run_statements

DB_NAME = "tabwarden.sqlite3"
BUSY_TIMEOUT_MS = 5000


class StoreError(TabwardenError, RuntimeError):
    """Storage is unavailable or a statement failed; the cause is chained."""

    code = "storage_unavailable"


def default_path() -> Path:
    """Where the database lives: `<data dir>/tabwarden.sqlite3` (see `host.paths`)."""
    from host.paths import dirs

    return dirs().data / DB_NAME


class Store:
    """A SQLite database shared by the host's threads.

    Connections are per thread (sqlite3 objects must not cross threads); writes are serialised by
    SQLite itself (WAL + busy timeout) and by `transaction()` taking the write lock up front.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        # Bumped when the database answers again after a fault: each thread then opens a fresh
        # connection (one opened during the fault may keep a read-only or broken state).
        self._generation = 0
        try:
            if str(self.path) != ":memory:":
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        with self.transaction() as conn:
            run_statements(conn, BOOTSTRAP)

    # -- connections -----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the store is closed")
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            if getattr(self._local, "generation", 0) == self._generation:
                return conn
            self._forget(conn)
        try:
            conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        self._local.conn = conn
        self._local.generation = self._generation
        with self._lock:
            self._connections.append(conn)
        return conn

    def _forget(self, conn: sqlite3.Connection) -> None:
        self._local.conn = None
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        try:
            conn.close()
        except sqlite3.Error:
            pass

    def probe(self, timeout_s: float = 0.25) -> None:
        """Raise `StoreError` unless the database can be read and written right now: a small
        committed write on a connection of its own that waits at most `timeout_s` for the write
        lock (not the busy timeout). On success every thread opens a fresh connection."""
        if self._closed:
            raise StoreError("the store is closed")
        try:
            conn = sqlite3.connect(str(self.path), timeout=timeout_s, isolation_level=None)
            try:
                conn.execute(f"PRAGMA busy_timeout = {max(1, int(timeout_s * 1000))}")
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO meta (key, value) VALUES ('store.probed_at', ?) "
                             "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (repr(time.time()),))
                conn.execute("COMMIT")
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path} does not answer yet: {exc}") from exc
        self._generation += 1

    def close(self) -> None:
        """Close every connection this store opened (from any thread)."""
        with self._lock:
            self._closed = True
            for conn in self._connections:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._connections.clear()

    # -- statements ------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): committed on success, rolled back on error."""
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot start a transaction on {self.path}: {exc}") from exc
        try:
            yield conn
        except BaseException as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"storage failure on {self.path}: {exc}") from exc
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise StoreError(f"cannot commit to {self.path}: {exc}") from exc

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a read statement and return every row."""
        try:
            return self._connect().execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"query failed on {self.path}: {exc}") from exc

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> int:
        """Run one write statement in its own transaction; return the last row id."""
        with self.transaction() as conn:
            return conn.execute(sql, params).lastrowid or 0

    # -- schema ----------------------------------------------------------------------------

    def migrate(self, component: str, migrations: Sequence[Migration]) -> int:
        """Apply the component's missing migrations, each in its own transaction; return the
        schema version reached. A database newer than the code is refused (never downgraded)."""
        check_order(component, migrations)
        rows = self.query("SELECT MAX(version) AS v FROM schema_migrations WHERE component = ?", (component,))
        current = rows[0]["v"] or 0
        if current > len(migrations):
            raise StoreError(f"{self.path}: {component} schema version {current} is newer than this "
                             f"program knows ({len(migrations)})")
        for migration in migrations[current:]:
            with self.transaction() as conn:
                if migration.sql is not None:
                    run_statements(conn, migration.sql)
                else:
                    assert migration.apply is not None
                    migration.apply(conn)
                conn.execute("INSERT INTO schema_migrations (component, version, name, applied_at) VALUES (?, ?, ?, ?)",
                             (component, migration.version, migration.name, time.time()))
        return len(migrations)

    def schema_version(self, component: str) -> int:
        """The highest applied migration of a component (0 when none)."""
        rows = self.query("SELECT MAX(version) AS v FROM schema_migrations WHERE component = ?", (component,))
        return rows[0]["v"] or 0

    # -- small key/value metadata ------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A value from the `meta` table, or None."""
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0]["value"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a `meta` value (insert or replace)."""
        self.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (key, value))
