"""Per-thread scope: the origins the user has accepted writes to, and the optional scope lock.

`scope_origins` grows with every accepted approval and decides whether an e-mail address is going
to a third party. The scope lock (a per-task allowlist of sites) confines a thread's writes
and navigations to a set of origin patterns. Both survive a host restart.
"""

from __future__ import annotations

import json
import threading
import time

from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.patterns import OriginSet, PatternError, parse_origin_pattern
from host.store.db import Store, StoreError

MAX_SCOPE_ORIGINS = 4096


class ThreadScopes:
    """Scope origins and scope locks of every thread, cached in memory, persisted in the store."""

    def __init__(self, store: Store | None) -> None:
        self._store = store
        self._origins: dict[str, set[str]] = {}
        self._locks: dict[str, OriginSet] = {}
        self._lock = threading.Lock()
        self.error: Exception | None = None  # a storage failure: every later use raises
        if store is not None:
            try:
                for row in store.query("SELECT thread_id, origin FROM gk_thread_scope"):
                    self._origins.setdefault(row["thread_id"], set()).add(row["origin"])
                for row in store.query("SELECT thread_id, patterns FROM gk_scope_lock"):
                    self._locks[row["thread_id"]] = OriginSet.parse(json.loads(row["patterns"]))
            except (StoreError, ValueError, PatternError) as exc:
                raise GatekeeperUnavailable(f"thread scope state is unavailable: {exc}") from exc

    def origins(self, thread_id: str) -> frozenset[str]:
        """The normalised origins the user accepted writes to in this thread."""
        return frozenset(self._origins.get(thread_id, ()))

    def origins_view(self, thread_id: str) -> set[str] | frozenset[str]:
        """Like `origins` without copying (read-only use inside one decision)."""
        return self._origins.get(thread_id) or frozenset()

    def add_origin(self, thread_id: str, origin: str) -> None:
        """Add an accepted origin (no-op for the empty origin or one already there)."""
        if not origin or origin in self._origins.get(thread_id, ()):
            return
        with self._lock:
            current = self._origins.setdefault(thread_id, set())
            if len(current) >= MAX_SCOPE_ORIGINS:
                return  # the scope only softens e-mail checks; refusing to grow it is the safe side
            self._write("INSERT OR IGNORE INTO gk_thread_scope (thread_id, origin, added_at) VALUES (?, ?, ?)",
                        (thread_id, origin, time.time()))
            current.add(origin)

    def lock(self, thread_id: str) -> OriginSet | None:
        """The thread's scope lock, or None when it is not locked."""
        return self._locks.get(thread_id)

    def set_lock(self, thread_id: str, patterns: list[str] | None) -> OriginSet | None:
        """Lock a thread to origin patterns (None unlocks). Raises `InvalidInput` for a bad pattern."""
        if patterns is None:
            with self._lock:
                self._write("DELETE FROM gk_scope_lock WHERE thread_id = ?", (thread_id,))
                self._locks.pop(thread_id, None)
            return None
        parsed = []
        for index, text in enumerate(patterns):
            try:
                parsed.append(parse_origin_pattern(text))
            except PatternError as exc:
                raise InvalidInput("invalid_pattern", str(exc), f"$.scope_lock[{index}]") from None
        origin_set = OriginSet(parsed)
        with self._lock:
            self._write("INSERT INTO gk_scope_lock (thread_id, patterns) VALUES (?, ?) "
                        "ON CONFLICT(thread_id) DO UPDATE SET patterns = excluded.patterns",
                        (thread_id, json.dumps([p.text for p in origin_set.patterns])))
            self._locks[thread_id] = origin_set
        return origin_set

    def clear_thread(self, thread_id: str) -> None:
        """Forget a thread's scope and lock."""
        with self._lock:
            if self._store is not None:
                try:
                    with self._store.transaction() as conn:
                        conn.execute("DELETE FROM gk_thread_scope WHERE thread_id = ?", (thread_id,))
                        conn.execute("DELETE FROM gk_scope_lock WHERE thread_id = ?", (thread_id,))
                except StoreError as exc:
                    self.error = exc
                    raise GatekeeperUnavailable(f"thread scope state is unavailable: {exc}") from exc
            self._origins.pop(thread_id, None)
            self._locks.pop(thread_id, None)

    def _write(self, sql: str, params: tuple) -> None:
        self._ensure()
        if self._store is None:
            return
        try:
            self._store.execute(sql, params)
        except StoreError as exc:
            self.error = exc
            raise GatekeeperUnavailable(f"thread scope state is unavailable: {exc}") from exc

    def _ensure(self) -> None:
        if self.error is not None:
            raise GatekeeperUnavailable(f"thread scope state is unavailable: {self.error}")
