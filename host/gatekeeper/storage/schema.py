"""The gatekeeper's tables, applied through the store's migrations (component `gatekeeper`)."""

from __future__ import annotations

import sqlite3

from host.store.migrations import Migration

_TABLES = """
CREATE TABLE gk_session_grants (
    browser_session TEXT    NOT NULL,
    thread_id       TEXT    NOT NULL,
    tool            TEXT    NOT NULL,
    origin          TEXT    NOT NULL,
    touched         INTEGER NOT NULL,
    PRIMARY KEY (browser_session, thread_id, tool, origin)
);
CREATE TABLE gk_rules (
    id                 TEXT PRIMARY KEY,
    body               TEXT NOT NULL,
    created_at         REAL NOT NULL,
    source_approval_id TEXT UNIQUE
);
CREATE TABLE gk_origin_lists (
    list       TEXT NOT NULL CHECK (list IN ('blocked', 'guarded')),
    pattern    TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (list, pattern)
);
CREATE TABLE gk_thread_scope (
    thread_id TEXT NOT NULL,
    origin    TEXT NOT NULL,
    added_at  REAL NOT NULL,
    PRIMARY KEY (thread_id, origin)
);
CREATE TABLE gk_scope_lock (
    thread_id TEXT PRIMARY KEY,
    patterns  TEXT NOT NULL
);
CREATE TABLE audit_log (
    seq               INTEGER PRIMARY KEY,
    at                REAL    NOT NULL,
    kind              TEXT    NOT NULL,
    thread_id         TEXT    NOT NULL,
    turn_id           TEXT,
    call_id           TEXT,
    tool              TEXT    NOT NULL,
    target_origin     TEXT    NOT NULL,
    params_digest     TEXT,
    params_redacted   TEXT,
    verdict           TEXT,
    code              TEXT,
    rule              TEXT,
    flags             TEXT,
    approval_id       TEXT,
    approval_decision TEXT,
    tool_outcome      TEXT,
    detail            TEXT,
    prev_hash         TEXT    NOT NULL,
    hash              TEXT    NOT NULL
);
CREATE INDEX audit_log_thread ON audit_log (thread_id, seq);
CREATE INDEX audit_log_at ON audit_log (at)
"""


def _append_only(conn: sqlite3.Connection) -> None:
    # Triggers contain `;`, so they are created one statement at a time here.
    conn.execute("CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
                 "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END")
    conn.execute("CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log "
                 "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END")


_PINS = """
CREATE TABLE gk_tool_pins (
    tool       TEXT NOT NULL,
    origin     TEXT NOT NULL,
    definition TEXT NOT NULL,
    PRIMARY KEY (tool, origin)
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "gatekeeper tables and audit log", sql=_TABLES),
    Migration(2, "audit log is append-only", apply=_append_only),
    Migration(3, "pinned MCP tool definitions", sql=_PINS),
)
COMPONENT = "gatekeeper"
