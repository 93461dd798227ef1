"""`EngineStore`: the engine's rows in the host's SQLite file.

Writes take the caller's connection (`with store.transaction() as conn:`) so that a command's
domain change and its receipt, or a tool call, its approval and the run's waiting state, commit
together or not at all. Reads without a connection see committed state.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import msgspec

from protocol.errors import TabwardenError

from host.engine import runs
from host.engine.records import AttachmentRow, NodeRow, PendingTool, RunRow, ThreadRow, WaitRow, decode_body, encode
from host.engine.schema import COMPONENT, MIGRATIONS
from host.store.db import Store, StoreError

EPOCH_META = "engine.stream_epoch"
NODE_CACHE_THREADS = 32
DEFAULT_TITLE = "New task"
FENCE_KEY_META = "engine.fence_key"


def new_id() -> str:
    """A random id (32 hex characters)."""
    return uuid.uuid4().hex


class NotFound(TabwardenError, LookupError):
    """A thread, run, node or request that does not exist."""

    code = "not_found"


class EngineStore:
    def __init__(self, db: Store, clock: Callable[[], float] = time.time):
        self.db = db
        self.clock = clock
        # Decoded committed nodes per thread (the tree is append-only, so a cache only grows).
        self._node_cache: OrderedDict[str, list[NodeRow]] = OrderedDict()
        db.migrate(COMPONENT, MIGRATIONS)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (see `Store.transaction`)."""
        with self.db.transaction() as conn:
            yield conn

    def _rows(self, sql: str, args: tuple = (), conn: sqlite3.Connection | None = None) -> list[sqlite3.Row]:
        if conn is None:
            return self.db.query(sql, args)
        try:
            return conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"query failed: {exc}") from exc

    # -- meta -------------------------------------------------------------------------------

    def next_epoch(self) -> int:
        """Increase and return the persisted stream epoch (one per engine start)."""
        with self.transaction() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (EPOCH_META,)).fetchone()
            epoch = (int(row["value"]) if row else 0) + 1
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                         "excluded.value", (EPOCH_META, str(epoch)))
        return epoch

    def fence_key(self) -> bytes:
        """The secret that derives stable fence nonces for persisted nodes (made once)."""
        import secrets

        value = self.db.get_meta(FENCE_KEY_META)
        if value is None:
            value = secrets.token_hex(32)
            with self.transaction() as conn:
                conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (FENCE_KEY_META, value))
            value = self.db.get_meta(FENCE_KEY_META) or value
        return bytes.fromhex(value)

    # -- threads ----------------------------------------------------------------------------

    def create_thread(self, conn: sqlite3.Connection, *, title: str = "", policy: str | None = None,
                      parent_thread_id: str | None = None, thread_id: str | None = None) -> ThreadRow:
        """Insert a thread (inside the caller's transaction)."""
        now = self.clock()
        row = ThreadRow(id=thread_id or new_id(), title=title or DEFAULT_TITLE, created_at=now, updated_at=now,
                        revision=1, policy=policy, parent_thread_id=parent_thread_id)
        conn.execute("INSERT INTO eng_threads (id, title, created_at, updated_at, revision, leaf_id, parent_thread_id, "
                     "policy, next_seq) VALUES (?, ?, ?, ?, ?, NULL, ?, ?, 1)",
                     (row.id, row.title, now, now, 1, parent_thread_id, policy))
        return row

    def thread(self, thread_id: str, conn: sqlite3.Connection | None = None) -> ThreadRow:
        """A thread row; NotFound when there is none."""
        rows = self._rows("SELECT * FROM eng_threads WHERE id = ?", (thread_id,), conn)
        if not rows:
            raise NotFound(f"no thread {thread_id!r}")
        return _thread(rows[0])

    def has_thread(self, thread_id: str) -> bool:
        """Whether the thread exists."""
        return bool(self.db.query("SELECT 1 FROM eng_threads WHERE id = ?", (thread_id,)))

    def threads(self, limit: int = 200) -> list[ThreadRow]:
        """The most recently updated threads."""
        rows = self.db.query("SELECT * FROM eng_threads ORDER BY updated_at DESC LIMIT ?", (limit,))
        return [_thread(r) for r in rows]

    def delete_thread(self, conn: sqlite3.Connection, thread_id: str) -> None:
        """Delete a thread with its nodes, runs, approvals, questions and attachments."""
        self._node_cache.pop(thread_id, None)
        for table in ("eng_nodes", "eng_runs", "eng_approvals", "eng_interactions", "eng_attachments",
                      "eng_consent_removed"):
            conn.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))
        conn.execute("DELETE FROM eng_threads WHERE id = ?", (thread_id,))

    def set_leaf(self, conn: sqlite3.Connection, thread_id: str, leaf_id: str | None) -> int:
        """Move the thread's current leaf; returns the new revision."""
        conn.execute("UPDATE eng_threads SET leaf_id = ?, revision = revision + 1, updated_at = ? WHERE id = ?",
                     (leaf_id, self.clock(), thread_id))
        return self.thread(thread_id, conn).revision

    def set_title(self, conn: sqlite3.Connection, thread_id: str, title: str) -> int:
        """Rename a thread; returns its new revision."""
        conn.execute("UPDATE eng_threads SET title = ?, revision = revision + 1, updated_at = ? WHERE id = ?",
                     (title, self.clock(), thread_id))
        return self.thread(thread_id, conn).revision

    # -- nodes ------------------------------------------------------------------------------

    def append_node(self, conn: sqlite3.Connection, thread_id: str, kind: str, body: Any, *,
                    turn_id: str | None = None, node_id: str | None = None, parent_id: Any = ...,
                    move_leaf: bool = True) -> NodeRow:
        """Append a node under the thread's leaf (or `parent_id`) and make it the leaf.

        With a `node_id` that already exists the existing node is returned unchanged, so a
        stable id (a tool call's) is written once however often its step is retried."""
        if node_id is not None:
            existing = self._rows("SELECT * FROM eng_nodes WHERE id = ?", (node_id,), conn)
            if existing:
                return _node(existing[0])
        thread = self.thread(thread_id, conn)
        parent = thread.leaf_id if parent_id is ... else parent_id
        now = self.clock()
        row = NodeRow(id=node_id or new_id(), thread_id=thread_id, seq=thread.next_seq, kind=kind, created_at=now,
                      body=body, parent_id=parent, turn_id=turn_id)
        conn.execute("INSERT INTO eng_nodes (id, thread_id, seq, parent_id, kind, turn_id, created_at, body) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (row.id, thread_id, row.seq, parent, kind, turn_id, now, encode(body)))
        leaf_sql = ", leaf_id = ?, revision = revision + 1" if move_leaf else ""
        args: tuple = (row.seq + 1, now, row.id, thread_id) if move_leaf else (row.seq + 1, now, thread_id)
        conn.execute(f"UPDATE eng_threads SET next_seq = ?, updated_at = ?{leaf_sql} WHERE id = ?", args)
        return row

    def node(self, node_id: str, conn: sqlite3.Connection | None = None) -> NodeRow:
        """A node row; NotFound when there is none."""
        rows = self._rows("SELECT * FROM eng_nodes WHERE id = ?", (node_id,), conn)
        if not rows:
            raise NotFound(f"no node {node_id!r}")
        return _node(rows[0])

    def nodes(self, thread_id: str, conn: sqlite3.Connection | None = None) -> list[NodeRow]:
        """Every node of a thread, in append order. Committed nodes are decoded once and kept
        (bounded per thread count); inside a transaction the rows are read as they are."""
        if conn is not None:
            return [_node(r) for r in self._rows("SELECT * FROM eng_nodes WHERE thread_id = ? ORDER BY seq",
                                                 (thread_id,), conn)]
        cached = self._node_cache.pop(thread_id, None) or []
        after = cached[-1].seq if cached else 0
        fresh = self.db.query("SELECT * FROM eng_nodes WHERE thread_id = ? AND seq > ? ORDER BY seq",
                              (thread_id, after))
        cached = cached + [_node(r) for r in fresh] if fresh else cached
        self._node_cache[thread_id] = cached
        while len(self._node_cache) > NODE_CACHE_THREADS:
            self._node_cache.popitem(last=False)
        return list(cached)

    def path(self, thread_id: str, leaf_id: str | None = ..., conn: sqlite3.Connection | None = None  # type: ignore[assignment]
             ) -> list[NodeRow]:
        """The branch from the root to `leaf_id` (the thread's leaf by default), root first."""
        if leaf_id is ...:
            leaf_id = self.thread(thread_id, conn).leaf_id
        if leaf_id is None:
            return []
        by_id = {n.id: n for n in self.nodes(thread_id, conn)}
        out: list[NodeRow] = []
        current: str | None = leaf_id
        while current is not None:
            node = by_id.get(current)
            if node is None or len(out) > len(by_id):
                raise StoreError(f"thread {thread_id}: broken node chain at {current!r}")
            out.append(node)
            current = node.parent_id
        out.reverse()
        return out

    def newest_leaf_under(self, thread_id: str, node_id: str) -> str:
        """The most recently appended leaf in the subtree of `node_id` (itself if it has none)."""
        nodes = self.nodes(thread_id)
        children: dict[str | None, list[NodeRow]] = {}
        for node in nodes:
            children.setdefault(node.parent_id, []).append(node)
        best, stack = node_id, [node_id]
        best_seq = -1
        while stack:
            current = stack.pop()
            kids = children.get(current, [])
            if not kids:
                seq = next(n.seq for n in nodes if n.id == current)
                if seq > best_seq:
                    best, best_seq = current, seq
            stack.extend(k.id for k in kids)
        return best

    # -- runs -------------------------------------------------------------------------------

    def insert_run(self, conn: sqlite3.Connection, thread_id: str, *, state: str, input: dict[str, Any],
                   overrides: dict[str, Any] | None = None, anchor_id: str | None = None) -> RunRow:
        """Insert a run at the end of the thread's order."""
        now = self.clock()
        order = conn.execute("SELECT COALESCE(MAX(queue_order), 0) + 1 AS n FROM eng_runs WHERE thread_id = ?",
                             (thread_id,)).fetchone()["n"]
        row = RunRow(id=new_id(), thread_id=thread_id, state=state, revision=1, queue_order=order, input=input,
                     created_at=now, updated_at=now, overrides=overrides, anchor_id=anchor_id)
        conn.execute("INSERT INTO eng_runs (id, thread_id, state, revision, queue_order, input, overrides, anchor_id, "
                     "created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)",
                     (row.id, thread_id, state, order, encode(input), encode(overrides) if overrides else None,
                      anchor_id, now, now))
        return row

    def run(self, run_id: str, conn: sqlite3.Connection | None = None) -> RunRow:
        """A run row; NotFound when there is none."""
        rows = self._rows("SELECT * FROM eng_runs WHERE id = ?", (run_id,), conn)
        if not rows:
            raise NotFound(f"no run {run_id!r}")
        return _run(rows[0])

    def runs(self, thread_id: str, states: frozenset[str] | None = None,
             conn: sqlite3.Connection | None = None) -> list[RunRow]:
        """The thread's runs in order (optionally only some states)."""
        rows = self._rows("SELECT * FROM eng_runs WHERE thread_id = ? ORDER BY queue_order", (thread_id,), conn)
        out = [_run(r) for r in rows]
        return [r for r in out if states is None or r.state in states]

    def live_runs(self) -> list[RunRow]:
        """Every run that is not finished (for recovery), oldest first."""
        marks = ",".join("?" * len(runs.TERMINAL))
        rows = self.db.query(f"SELECT * FROM eng_runs WHERE state NOT IN ({marks}) ORDER BY created_at",
                             tuple(runs.TERMINAL))
        return [_run(r) for r in rows]

    def update_run(self, conn: sqlite3.Connection, run_id: str, *, state: str | None = None,
                   expected_revision: int | None = None, **fields: Any) -> RunRow:
        """Change a run (its state only along the transition table); returns it updated.

        `fields` may set turn_id, input, overrides, pending_tool (a PendingTool or None), step,
        tokens_used, stop_reason, error. A stale `expected_revision` raises InvalidTransition."""
        current = self.run(run_id, conn)
        if expected_revision is not None and current.revision != expected_revision:
            raise runs.InvalidTransition(run_id, f"{current.state}@{current.revision}",
                                         f"{state or current.state}@{expected_revision}")
        if state is not None:
            runs.check_transition(run_id, current.state, state)
        columns = {"revision": current.revision + 1, "updated_at": self.clock()}
        if state is not None:
            columns["state"] = state
        for name, value in fields.items():
            if name in ("input", "overrides"):
                columns[name] = encode(value) if value is not None else None
            elif name == "pending_tool":
                columns[name] = encode(value) if value is not None else None
            elif name in ("turn_id", "step", "tokens_used", "stop_reason", "error", "queue_order"):
                columns[name] = value
            else:
                raise ValueError(f"unknown run field {name!r}")
        assignments = ", ".join(f"{name} = ?" for name in columns)
        conn.execute(f"UPDATE eng_runs SET {assignments} WHERE id = ?", (*columns.values(), run_id))
        return self.run(run_id, conn)

    def delete_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        """Delete a run row."""
        conn.execute("DELETE FROM eng_runs WHERE id = ?", (run_id,))

    # -- waits (approvals and interactions) -------------------------------------------------

    def insert_wait(self, conn: sqlite3.Connection, table: "WaitTable", row: WaitRow) -> None:
        """Insert a pending request."""
        conn.execute(f"INSERT INTO {table.name} (id, thread_id, run_id, turn_id, item_id, request, status, "
                     "requested_at, deadline_at) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                     (row.id, row.thread_id, row.run_id, row.turn_id, row.item_id, encode(row.request),
                      row.requested_at, row.deadline_at))

    def wait(self, table: "WaitTable", wait_id: str, conn: sqlite3.Connection | None = None) -> WaitRow:
        """A request row; NotFound when there is none."""
        rows = self._rows(f"SELECT * FROM {table.name} WHERE id = ?", (wait_id,), conn)
        if not rows:
            raise NotFound(f"no {table.noun} {wait_id!r}")
        return table.row(rows[0])

    def latest_wait(self, table: "WaitTable", run_id: str, conn: sqlite3.Connection | None = None) -> WaitRow | None:
        """The run's newest request, if any."""
        rows = self._rows(f"SELECT * FROM {table.name} WHERE run_id = ? ORDER BY requested_at DESC, rowid DESC "
                          "LIMIT 1", (run_id,), conn)
        return table.row(rows[0]) if rows else None

    def pending_waits(self, table: "WaitTable", thread_id: str | None = None) -> list[WaitRow]:
        """Requests without an answer (of one thread, or all)."""
        if thread_id is None:
            rows = self.db.query(f"SELECT * FROM {table.name} WHERE status = 'pending' ORDER BY requested_at")
        else:
            rows = self.db.query(f"SELECT * FROM {table.name} WHERE status = 'pending' AND thread_id = ? "
                                 "ORDER BY requested_at", (thread_id,))
        return [table.row(r) for r in rows]

    def settle_wait(self, conn: sqlite3.Connection, table: "WaitTable", wait_id: str, answer: dict[str, Any],
                    by: str) -> None:
        """Store an answer unless one is stored already."""
        conn.execute(f"UPDATE {table.name} SET status = ?, {table.answer} = ?, {table.by} = ?, {table.at} = ? "
                     "WHERE id = ? AND status = 'pending'", (table.settled, encode(answer), by, self.clock(), wait_id))

    # -- attachments ------------------------------------------------------------------------

    def add_attachment(self, *, thread_id: str, item_id: str | None, name: str, mime: str, content: bytes,
                       source: str, now: float) -> AttachmentRow:
        """Keep a file with its thread, in a transaction of its own; returns its row."""
        row = AttachmentRow(id=new_id(), thread_id=thread_id, item_id=item_id, name=name, mime=mime, size=len(content),
                            source=source, created_at=now, content=content)
        with self.transaction() as conn:
            conn.execute("INSERT INTO eng_attachments (id, thread_id, item_id, name, mime, content, size, source, "
                         "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (row.id, row.thread_id, row.item_id, row.name, row.mime, row.content, row.size, row.source,
                          row.created_at))
        return row

    def attachment(self, attachment_id: str, *, content: bool = False) -> AttachmentRow:
        """An attachment (with its bytes when `content`); NotFound when there is none."""
        columns = "*" if content else _ATTACHMENT_META
        rows = self.db.query(f"SELECT {columns} FROM eng_attachments WHERE id = ?", (attachment_id,))
        if not rows:
            raise NotFound(f"no attachment {attachment_id!r}")
        return _attachment(rows[0])

    def attachments(self, thread_id: str) -> list[AttachmentRow]:
        """The thread's attachments, oldest first, without their bytes."""
        rows = self.db.query(f"SELECT {_ATTACHMENT_META} FROM eng_attachments WHERE thread_id = ? "
                             "ORDER BY created_at, rowid", (thread_id,))
        return [_attachment(r) for r in rows]

    # -- provenance of memories -------------------------------------------------------------

    def put_memory_trust(self, memory_key: str, value_keys: list[str], written_at: float) -> None:
        """Record which values of a memory the model wrote were the user's when it was written
        (an older write, read again after a restart, never replaces a newer one)."""
        with self.transaction() as conn:
            conn.execute("INSERT INTO eng_memory_trust (memory_key, value_keys, written_at) VALUES (?, ?, ?) "
                         "ON CONFLICT(memory_key) DO UPDATE SET value_keys = excluded.value_keys, "
                         "written_at = excluded.written_at WHERE excluded.written_at >= eng_memory_trust.written_at",
                         (memory_key, encode(sorted(value_keys)), written_at))

    def memory_trust(self) -> dict[str, list[str]]:
        """{memory key: the value keys that were the user's when the model wrote it}."""
        rows = self.db.query("SELECT memory_key, value_keys FROM eng_memory_trust")
        return {r["memory_key"]: list(msgspec.json.decode(r["value_keys"])) for r in rows}

    # -- the task's consent -------------------------------------------------------------------

    def remove_consent(self, thread_id: str, item_id: str) -> None:
        """Record that the user took one commit of the thread's consent back."""
        with self.transaction() as conn:
            conn.execute("INSERT INTO eng_consent_removed (thread_id, item_id, removed_at) VALUES (?, ?, ?) "
                         "ON CONFLICT DO NOTHING", (thread_id, item_id, self.clock()))

    def removed_consent(self, thread_id: str) -> set[str]:
        """The consent items the user took back in this thread."""
        rows = self.db.query("SELECT item_id FROM eng_consent_removed WHERE thread_id = ?", (thread_id,))
        return {r["item_id"] for r in rows}

    # -- receipts ---------------------------------------------------------------------------

    def receipt(self, client_id: str, submission_id: str) -> sqlite3.Row | None:
        """The unexpired receipt of (client, submission), if any."""
        rows = self.db.query("SELECT * FROM eng_receipts WHERE client_id = ? AND submission_id = ? AND expires_at > ?",
                             (client_id, submission_id, self.clock()))
        return rows[0] if rows else None

    def put_receipt(self, conn: sqlite3.Connection, client_id: str, submission_id: str, op_type: str,
                    fingerprint: str, response: dict[str, Any], ttl_s: float) -> None:
        """Store (or replace) a command receipt with its answer."""
        now = self.clock()
        conn.execute("INSERT INTO eng_receipts (client_id, submission_id, op_type, fingerprint, response, created_at, "
                     "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(client_id, submission_id) DO UPDATE SET "
                     "op_type = excluded.op_type, fingerprint = excluded.fingerprint, response = excluded.response, "
                     "created_at = excluded.created_at, expires_at = excluded.expires_at",
                     (client_id, submission_id, op_type, fingerprint, encode(response), now, now + ttl_s))

    def prune_receipts(self) -> int:
        """Delete expired receipts; returns how many."""
        with self.transaction() as conn:
            return conn.execute("DELETE FROM eng_receipts WHERE expires_at <= ?", (self.clock(),)).rowcount


def _thread(row: sqlite3.Row) -> ThreadRow:
    return ThreadRow(id=row["id"], title=row["title"], created_at=row["created_at"], updated_at=row["updated_at"],
                     revision=row["revision"], leaf_id=row["leaf_id"], parent_thread_id=row["parent_thread_id"],
                     policy=row["policy"], next_seq=row["next_seq"])


def _node(row: sqlite3.Row) -> NodeRow:
    return NodeRow(id=row["id"], thread_id=row["thread_id"], seq=row["seq"], kind=row["kind"],
                   created_at=row["created_at"], body=decode_body(row["kind"], row["body"]),
                   parent_id=row["parent_id"], turn_id=row["turn_id"])


def _run(row: sqlite3.Row) -> RunRow:
    pending = msgspec.json.decode(row["pending_tool"], type=PendingTool) if row["pending_tool"] else None
    return RunRow(id=row["id"], thread_id=row["thread_id"], state=row["state"], revision=row["revision"],
                  queue_order=row["queue_order"], input=msgspec.json.decode(row["input"]),
                  created_at=row["created_at"], updated_at=row["updated_at"], turn_id=row["turn_id"],
                  overrides=msgspec.json.decode(row["overrides"]) if row["overrides"] else None,
                  anchor_id=row["anchor_id"], pending_tool=pending, step=row["step"], tokens_used=row["tokens_used"],
                  stop_reason=row["stop_reason"], error=row["error"])


@dataclass(frozen=True)
class WaitTable:
    """Where one kind of request is kept: its table, and the names its columns and settled
    status have there."""

    name: str
    noun: str
    settled: str
    answer: str
    by: str
    at: str

    def row(self, row: sqlite3.Row) -> WaitRow:
        """A stored request (its status as `pending` or `settled`)."""
        return WaitRow(id=row["id"], thread_id=row["thread_id"], run_id=row["run_id"], turn_id=row["turn_id"],
                       item_id=row["item_id"], request=msgspec.json.decode(row["request"]),
                       status="pending" if row["status"] == "pending" else "settled",
                       requested_at=row["requested_at"], deadline_at=row["deadline_at"],
                       answer=msgspec.json.decode(row[self.answer]) if row[self.answer] else None,
                       answered_by=row[self.by], answered_at=row[self.at])


APPROVALS = WaitTable("eng_approvals", "approval", "decided", "decision", "decided_by", "decided_at")
INTERACTIONS = WaitTable("eng_interactions", "interaction", "answered", "response", "answered_by", "answered_at")


_ATTACHMENT_META = "id, thread_id, item_id, name, mime, size, source, created_at"


def _attachment(row: sqlite3.Row) -> AttachmentRow:
    keys = row.keys()
    return AttachmentRow(id=row["id"], thread_id=row["thread_id"], item_id=row["item_id"], name=row["name"],
                         mime=row["mime"], size=row["size"], source=row["source"], created_at=row["created_at"],
                         content=bytes(row["content"]) if "content" in keys else None)
