"""Session grants (`acceptForSession`): per thread, keyed by (tool, origin).

Grants belong to one browser session (the id the extension reports in its hello): binding to a
session drops every grant of other sessions, and grants are written through to SQLite so that a
host restart within the same browser session keeps them. Bounds: at most 256 threads (the least
recently touched are dropped) and 512 grants per thread (the newest are kept).

Any storage failure clears the grants and makes every later use raise `GatekeeperUnavailable`:
without trustworthy grant state nothing may run (fail closed).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection

from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.store.db import Store, StoreError

MAX_THREADS = 256
MAX_KEYS_PER_THREAD = 512
MAX_THREAD_ID = 512
MAX_KEY_LENGTH = 4096

_EMPTY: frozenset[tuple[str, str]] = frozenset()


class SessionGrants:
    """The grant table of the current browser session."""

    def __init__(self, store: Store | None, *, max_threads: int = MAX_THREADS,
                 max_keys: int = MAX_KEYS_PER_THREAD) -> None:
        self._store = store
        self._max_threads = max_threads
        self._max_keys = max_keys
        self._threads: OrderedDict[str, OrderedDict[tuple[str, str], None]] = OrderedDict()
        self._session: str | None = None
        self._counter = 0
        self._error: Exception | None = None
        self._lock = threading.Lock()

    @property
    def session(self) -> str | None:
        """The bound browser-session id (None before the extension said hello)."""
        return self._session

    @property
    def error(self) -> Exception | None:
        """The storage failure that made grants unavailable, if any."""
        return self._error

    def _fail(self, exc: Exception) -> GatekeeperUnavailable:
        self._error = exc
        self._threads.clear()
        return GatekeeperUnavailable(f"session permission state is unavailable: {exc}")

    def _ensure(self) -> None:
        if self._error is not None:
            raise GatekeeperUnavailable(f"session permission state is unavailable: {self._error}")

    def bind(self, browser_session: str) -> None:
        """Adopt a browser session: load its persisted grants, drop those of any other session."""
        if not isinstance(browser_session, str) or not 0 < len(browser_session) <= MAX_THREAD_ID:
            raise InvalidInput("invalid_session", "a browser-session id is a string of 1..512 characters")
        with self._lock:
            self._ensure()
            if self._store is None:
                if browser_session != self._session:
                    self._threads.clear()
                self._session = browser_session
                return
            try:
                with self._store.transaction() as conn:
                    conn.execute("DELETE FROM gk_session_grants WHERE browser_session != ?", (browser_session,))
                    rows = conn.execute(
                        "SELECT thread_id, tool, origin, touched FROM gk_session_grants "
                        "WHERE browser_session = ? ORDER BY touched", (browser_session,)).fetchall()
            except StoreError as exc:
                raise self._fail(exc) from exc
            threads: OrderedDict[str, OrderedDict[tuple[str, str], None]] = OrderedDict()
            counter = 0
            for row in rows:
                thread_id, tool, origin = row["thread_id"], row["tool"], row["origin"]
                if not _valid(thread_id, tool, origin):
                    raise self._fail(ValueError(f"malformed stored grant for thread {thread_id!r}"))
                keys = threads.setdefault(thread_id, OrderedDict())
                keys[(tool, origin)] = None
                keys.move_to_end((tool, origin))
                threads.move_to_end(thread_id)
                counter = max(counter, int(row["touched"]))
            self._threads = threads
            self._counter = counter
            self._session = browser_session

    def for_thread(self, thread_id: str) -> Collection[tuple[str, str]]:
        """The (tool, origin) grants of a thread (a live view: do not keep it)."""
        self._ensure()
        keys = self._threads.get(thread_id)
        return keys.keys() if keys else _EMPTY

    def has(self, thread_id: str, tool: str, origin: str) -> bool:
        """True when `tool` is granted at `origin` for the thread in this browser session."""
        self._ensure()
        keys = self._threads.get(thread_id)
        return bool(keys) and (tool, origin) in keys  # type: ignore[operator]

    def grant(self, thread_id: str, tool: str, origin: str) -> None:
        """Record an `acceptForSession` and persist it before returning."""
        if not _valid(thread_id, tool, origin):
            raise InvalidInput("invalid_grant", "thread id must be 1..512 characters and tool + origin at most 4096")
        with self._lock:
            self._ensure()
            if self._session is None:
                raise InvalidInput("no_browser_session", "no browser session is bound yet; grants need one")
            keys = self._threads.setdefault(thread_id, OrderedDict())
            keys[(tool, origin)] = None
            keys.move_to_end((tool, origin))
            self._threads.move_to_end(thread_id)
            dropped_keys: list[tuple[str, str]] = []
            while len(keys) > self._max_keys:
                dropped_keys.append(keys.popitem(last=False)[0])
            dropped_threads: list[str] = []
            while len(self._threads) > self._max_threads:
                dropped_threads.append(self._threads.popitem(last=False)[0])
            self._counter += 1
            if self._store is None:
                return
            try:
                with self._store.transaction() as conn:
                    conn.execute(
                        "INSERT INTO gk_session_grants (browser_session, thread_id, tool, origin, touched) "
                        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET touched = excluded.touched",
                        (self._session, thread_id, tool, origin, self._counter))
                    conn.executemany(
                        "DELETE FROM gk_session_grants WHERE browser_session = ? AND thread_id = ? AND tool = ? AND origin = ?",
                        [(self._session, thread_id, t, o) for t, o in dropped_keys])
                    conn.executemany("DELETE FROM gk_session_grants WHERE browser_session = ? AND thread_id = ?",
                                     [(self._session, t) for t in dropped_threads])
            except StoreError as exc:
                raise self._fail(exc) from exc

    def reopen(self) -> None:
        """After a storage fault passed: forget the error and load this session's grants again
        (raises `GatekeeperUnavailable` when they still cannot be read)."""
        with self._lock:
            self._error = None
        if self._session is not None:
            self.bind(self._session)

    def revoke(self, thread_id: str, tool: str, origin: str) -> bool:
        """Drop one grant of a thread (the user took it back); False when there was none."""
        if not self.has(thread_id, tool, origin):
            return False

        def forget() -> None:
            keys = self._threads.get(thread_id)
            if keys is not None:
                keys.pop((tool, origin), None)

        self._delete("thread_id = ? AND tool = ? AND origin = ?", (thread_id, tool, origin), forget)
        return True

    def clear_thread(self, thread_id: str) -> None:
        """Drop a thread's grants (thread deleted or reset)."""
        self._delete("thread_id = ?", (thread_id,), lambda: self._threads.pop(thread_id, None))

    def clear_tool(self, tool: str, origin: str) -> None:
        """Drop every thread's grant of `tool` at `origin` (its definition changed)."""
        def forget() -> None:
            for keys in self._threads.values():
                keys.pop((tool, origin), None)

        self._delete("tool = ? AND origin = ?", (tool, origin), forget)

    def clear_all(self) -> None:
        """Drop every grant (for example when the browser revoked site permissions)."""
        self._delete("1 = 1", (), self._threads.clear)

    def _delete(self, where: str, params: tuple, apply_in_memory) -> None:
        with self._lock:
            self._ensure()
            apply_in_memory()
            if self._store is None:
                return
            try:
                with self._store.transaction() as conn:
                    conn.execute(f"DELETE FROM gk_session_grants WHERE {where}", params)
            except StoreError as exc:
                raise self._fail(exc) from exc

    def snapshot(self) -> dict[str, list[tuple[str, str]]]:
        """Every thread's grants, oldest first (for display and tests)."""
        self._ensure()
        return {thread: list(keys) for thread, keys in self._threads.items()}


def _valid(thread_id: object, tool: object, origin: object) -> bool:
    return (isinstance(thread_id, str) and 0 < len(thread_id) <= MAX_THREAD_ID
            and isinstance(tool, str) and isinstance(origin, str) and 0 < len(tool)
            and len(tool) + 1 + len(origin) <= MAX_KEY_LENGTH)
