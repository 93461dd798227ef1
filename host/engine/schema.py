"""The engine's tables, applied through the store's migrations (component `engine`)."""

from __future__ import annotations

from host.store.migrations import Migration

_TABLES = """
CREATE TABLE eng_threads (
    id               TEXT PRIMARY KEY,
    title            TEXT    NOT NULL,
    created_at       REAL    NOT NULL,
    updated_at       REAL    NOT NULL,
    revision         INTEGER NOT NULL,
    leaf_id          TEXT,
    parent_thread_id TEXT,
    policy           TEXT,
    next_seq         INTEGER NOT NULL
);
CREATE INDEX eng_threads_updated ON eng_threads (updated_at);
CREATE TABLE eng_nodes (
    id         TEXT    PRIMARY KEY,
    thread_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    parent_id  TEXT,
    kind       TEXT    NOT NULL,
    turn_id    TEXT,
    created_at REAL    NOT NULL,
    body       TEXT    NOT NULL,
    UNIQUE (thread_id, seq)
);
CREATE INDEX eng_nodes_parent ON eng_nodes (thread_id, parent_id);
CREATE TABLE eng_runs (
    id           TEXT    PRIMARY KEY,
    thread_id    TEXT    NOT NULL,
    turn_id      TEXT,
    state        TEXT    NOT NULL,
    revision     INTEGER NOT NULL,
    queue_order  INTEGER NOT NULL,
    input        TEXT    NOT NULL,
    overrides    TEXT,
    anchor_id    TEXT,
    pending_tool TEXT,
    step         INTEGER NOT NULL DEFAULT 0,
    tokens_used  INTEGER NOT NULL DEFAULT 0,
    stop_reason  TEXT,
    error        TEXT,
    created_at   REAL    NOT NULL,
    updated_at   REAL    NOT NULL
);
CREATE INDEX eng_runs_thread ON eng_runs (thread_id, state);
CREATE TABLE eng_approvals (
    id           TEXT PRIMARY KEY,
    thread_id    TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    turn_id      TEXT NOT NULL,
    item_id      TEXT NOT NULL,
    request      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'decided')),
    decision     TEXT,
    decided_by   TEXT,
    requested_at REAL NOT NULL,
    deadline_at  REAL NOT NULL,
    decided_at   REAL
);
CREATE INDEX eng_approvals_run ON eng_approvals (run_id, requested_at);
CREATE INDEX eng_approvals_status ON eng_approvals (status);
CREATE TABLE eng_receipts (
    client_id     TEXT NOT NULL,
    submission_id TEXT NOT NULL,
    op_type       TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    response      TEXT NOT NULL,
    created_at    REAL NOT NULL,
    expires_at    REAL NOT NULL,
    PRIMARY KEY (client_id, submission_id)
);
CREATE INDEX eng_receipts_expiry ON eng_receipts (expires_at)
"""

_INTERACTIONS = """
CREATE TABLE eng_interactions (
    id           TEXT PRIMARY KEY,
    thread_id    TEXT NOT NULL,
    run_id       TEXT NOT NULL,
    turn_id      TEXT NOT NULL,
    item_id      TEXT NOT NULL,
    request      TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('pending', 'answered')),
    response     TEXT,
    answered_by  TEXT,
    requested_at REAL NOT NULL,
    deadline_at  REAL NOT NULL,
    answered_at  REAL
);
CREATE INDEX eng_interactions_run ON eng_interactions (run_id, requested_at);
CREATE INDEX eng_interactions_status ON eng_interactions (status)
"""

_ATTACHMENTS = """
CREATE TABLE eng_attachments (
    id         TEXT    PRIMARY KEY,
    thread_id  TEXT    NOT NULL,
    item_id    TEXT,
    name       TEXT    NOT NULL,
    mime       TEXT    NOT NULL,
    content    BLOB    NOT NULL,
    size       INTEGER NOT NULL,
    source     TEXT    NOT NULL,
    created_at REAL    NOT NULL
);
CREATE INDEX eng_attachments_thread ON eng_attachments (thread_id, created_at)
"""

_MEMORY_TRUST = """
CREATE TABLE eng_memory_trust (
    memory_key TEXT PRIMARY KEY,
    value_keys TEXT NOT NULL,
    written_at REAL NOT NULL
)
"""

_CONSENT_REMOVED = """
CREATE TABLE eng_consent_removed (
    thread_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    removed_at REAL NOT NULL,
    PRIMARY KEY (thread_id, item_id)
)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "engine threads, nodes, runs, approvals and command receipts", sql=_TABLES),
    Migration(2, "questions to the user (interactions)", sql=_INTERACTIONS),
    Migration(3, "thread attachments (artifacts the model wrote)", sql=_ATTACHMENTS),
    Migration(4, "which values of a memory the model wrote were the user's (provenance across threads)",
              sql=_MEMORY_TRUST),
    Migration(5, "commits of a task's consent the user took back", sql=_CONSENT_REMOVED),
)
COMPONENT = "engine"
