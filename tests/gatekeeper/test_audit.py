import sqlite3

import pytest

from host.gatekeeper.storage.audit import AuditLog
from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
from host.store import StoreError


@pytest.fixture
def log(store):
    store.migrate(COMPONENT, MIGRATIONS)
    audit = AuditLog(store, clock=iter(range(1000, 2000)).__next__)
    for i in range(5):
        audit.append(kind="decision", thread_id=f"t{i % 2}", tool="click", target_origin="https://a.com",
                     params={"ref": f"s{i}"}, verdict="ask" if i % 2 else "deny", code="policy_default")
    return audit


def raw(store):
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TRIGGER audit_log_no_update")
    conn.execute("DROP TRIGGER audit_log_no_delete")
    return conn


def test_chain_verifies(log):
    result = log.verify()
    assert result.ok and result.rows == 5 and len(result.head) == 64


def test_rows_cannot_be_updated_or_deleted_through_sql(log, store):
    with pytest.raises(StoreError, match="append-only"):
        store.execute("UPDATE audit_log SET verdict = 'allow'")
    with pytest.raises(StoreError, match="append-only"):
        store.execute("DELETE FROM audit_log")


def test_edit_behind_the_triggers_is_found(log, store):
    conn = raw(store)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 3")
    conn.commit()
    result = log.verify()
    assert (result.ok, result.broken_seq) == (False, 3) and "changed" in result.problem


def test_removed_row_is_found(log, store):
    conn = raw(store)
    conn.execute("DELETE FROM audit_log WHERE seq = 2")
    conn.commit()
    result = log.verify()
    assert (result.ok, result.broken_seq) == (False, 3) and "removed" in result.problem


def test_rehashing_one_row_without_the_key_is_found_at_that_row(log, store):
    from host.gatekeeper.storage.audit import _COLUMNS, _row_hash

    conn = raw(store)
    conn.row_factory = sqlite3.Row
    row = conn.execute("SELECT * FROM audit_log WHERE seq = 2").fetchone()
    values = list(row[c] for c in _COLUMNS)
    values[_COLUMNS.index("verdict")] = "allow"
    conn.execute("UPDATE audit_log SET verdict = 'allow', hash = ? WHERE seq = 2",
                 (_row_hash(row["prev_hash"], tuple(values)),))
    conn.commit()
    result = log.verify()
    assert (result.broken_seq, result.failure) == (2, "rehashed") and "without the audit key" in result.problem


def test_filters(log):
    assert len(log.entries(thread="t0")) == 3
    assert [e.seq for e in log.entries(verdict="ask")] == [2, 4]
    assert [e.seq for e in log.entries(since=1003)] == [4, 5]
    assert log.entries(tool="type") == []
    assert len(log.entries(limit=2)) == 2


def test_digest_is_keyed_and_stable(log, store):
    a = log.params_digest({"b": 1, "a": 2})
    assert a == log.params_digest({"a": 2, "b": 1})
    other = AuditLog(store)
    assert other.params_digest({"a": 2, "b": 1}) == a  # the key persists outside the store
    assert store.get_meta("audit.params_digest_key") is None  # and the database holds no secret
    import hashlib
    import json as j

    assert a != hashlib.sha256(j.dumps({"a": 2, "b": 1}, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
