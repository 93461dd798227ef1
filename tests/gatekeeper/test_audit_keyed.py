"""The keyed audit chain on a real SQLite file, attacked as someone holding the file would: the
triggers dropped through sqlite3 directly, then a row edited, the chain re-hashed (plain SHA-256,
a guessed key), rows cut from the end, an older copy restored, the key deleted or left readable
by others. Each must fail `verify` (and `tabwarden audit verify`) with its own words and row; an
untouched log verifies, and a log written before links were keyed verifies and goes on keyed."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import secrets
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest

from host.gatekeeper.errors import GatekeeperUnavailable
from host.gatekeeper.service import CheckRequest
from host.gatekeeper.storage.audit import (_COLUMNS, GENESIS, AuditKeyError, AuditKeys, AuditLog, _link, _row_hash,
                                           _signed)
from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
from host.paths import dirs
from host.store import Store, default_path


@pytest.fixture
def db() -> Path:
    """The host's own database (under TABWARDEN_HOME): its key is in the config dir."""
    return default_path()


@pytest.fixture
def opened(db):
    """Open stores on `db` (closed at the end): `opened()` -> (store, log)."""
    stores = []

    def open_(**kw) -> tuple[Store, AuditLog]:
        store = Store(db)
        store.migrate(COMPONENT, MIGRATIONS)
        stores.append(store)
        return store, AuditLog(store, clock=iter(range(1000, 9000)).__next__, **kw)

    yield open_
    for store in stores:
        store.close()


def fill(log: AuditLog, n: int) -> None:
    for i in range(n):
        log.append(kind="decision", thread_id=f"t{i % 2}", tool="click", target_origin="https://a.example",
                   params={"ref": f"s{i}"}, verdict="ask", code="policy_default")


def raw(db: Path) -> sqlite3.Connection:
    """The file as sqlite3 sees it, with the append-only triggers dropped."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.row_factory = sqlite3.Row
    triggers = conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'")
    for (name,) in triggers.fetchall():
        conn.execute(f'DROP TRIGGER "{name}"')
    return conn


def key_path() -> Path:
    return dirs().config / "audit" / "key"


def rehash(conn: sqlite3.Connection, link, start: int, stop: int = 1 << 62) -> str:
    """Recompute the links of rows `start`-`stop` with `link(prev, values)`; the new head."""
    prev = conn.execute("SELECT hash FROM audit_log WHERE seq = ?", (start - 1,)).fetchone()
    prev = prev["hash"] if prev else GENESIS
    for row in conn.execute("SELECT * FROM audit_log WHERE seq BETWEEN ? AND ? ORDER BY seq", (start, stop)).fetchall():
        new = link(prev, tuple(row[c] for c in _COLUMNS))
        conn.execute("UPDATE audit_log SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, new, row["seq"]))
        prev = new
    return prev


def cli_verify(db: Path, capsys, keys: Path | None = None) -> tuple[int, str]:
    from host.cli.audit_cmd import run

    capsys.readouterr()
    code = run(argparse.Namespace(action="verify", db=db, keys=keys))
    return code, capsys.readouterr().out


@pytest.fixture
def written(opened, db):
    """Six rows, anchored at the sixth (the log closed as the host closes it), store closed."""
    store, log = opened()
    fill(log, 6)
    log.close()
    store.close()
    return db


def test_an_untouched_log_verifies_and_its_key_and_anchor_are_private(opened, db, capsys):
    store, log = opened()
    fill(log, 4)
    result = AuditLog(store).verify()
    assert (result.ok, result.rows, result.keyed_from) == (True, 4, 1)
    assert result.anchored == 1  # written after the first append, not after every one
    log.close()
    assert AuditLog(store).verify().anchored == 4
    for path in (key_path(), *key_path().parent.glob("anchor-*.json")):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE(key_path().parent.stat().st_mode) == 0o700
    assert store.get_meta("audit.params_digest_key") is None  # no secret in the database
    code, out = cli_verify(db, capsys)
    assert code == 0 and "4 rows" in out and "every link keyed" in out
    assert "anchored outside the database at row 4" in out


def test_later_anchors_are_written_off_the_appending_thread_and_close_anchors_every_row(opened, db):
    # An anchor syncs two files: only the first is written by the append that came due, so no
    # later call waits for one on its way. Closing anchors the rest.
    import threading

    writers: list[str] = []

    class Watched(AuditKeys):
        def write_anchor(self, db_path, record):
            writers.append(threading.current_thread().name)
            super().write_anchor(db_path, record)

    store, log = opened(keys=Watched(key_path().parent), anchor_every_s=0.0)
    fill(log, 5)
    assert writers[0] == threading.current_thread().name
    log.close()
    assert any(name == "audit-anchor" for name in writers[1:]), writers
    assert AuditLog(store).verify().anchored == 5
    fill(log, 1)  # appended to after its close, the log is in use again
    for thread in threading.enumerate():
        if thread.name == "audit-anchor":
            thread.join(5)
    assert AuditLog(store).verify().anchored == 6


class _HeldAnchors(AuditKeys):
    """Anchors written by the anchor thread wait for `gate`; `entered` says one is waiting."""

    def __init__(self, folder):
        import threading

        super().__init__(folder)
        self.gate, self.entered = threading.Event(), threading.Event()
        self.on_write = None

    def write_anchor(self, db_path, record):
        import threading

        if threading.current_thread().name == "audit-anchor":
            self.entered.set()
            assert self.gate.wait(5)
        if self.on_write is not None:
            self.on_write()
        super().write_anchor(db_path, record)


def test_closing_while_an_anchor_is_written_waits_for_it_and_anchors_the_rows_that_came_meanwhile(opened, db):
    import threading

    keys = _HeldAnchors(key_path().parent)
    store, log = opened(keys=keys, anchor_every_s=0.0)
    fill(log, 2)  # the first anchor by the append itself, the second on its own thread, held
    assert keys.entered.wait(5)
    fill(log, 2)  # due again, but one is being written: these two wait for the close
    closer = threading.Thread(target=log.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # waiting for the anchor being written
    keys.gate.set()
    closer.join(5)
    assert not closer.is_alive()
    assert AuditLog(store).verify().anchored == 4


def test_a_log_closed_on_the_thread_writing_its_anchor_does_not_wait_for_itself(opened, db):
    # The log may be collected (its finalizer closes it) on the thread that is writing its anchor.
    import threading

    keys = _HeldAnchors(key_path().parent)
    keys.gate.set()
    store, log = opened(keys=keys)
    fill(log, 1)
    keys.on_write = lambda: log._anchoring.close()
    writer = threading.Thread(target=log.anchor)
    writer.start()
    writer.join(5)
    assert not writer.is_alive()


def test_a_in_memory_store_keeps_working():
    store = Store(":memory:")
    store.migrate(COMPONENT, MIGRATIONS)
    log = AuditLog(store)
    fill(log, 3)
    assert AuditLog(store).verify().ok and log.verify_tail().ok
    assert not key_path().exists()


def test_an_edited_row(written, opened, capsys):
    conn = raw(written)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 3")
    result = opened()[1].verify()
    assert (result.ok, result.broken_seq, result.failure) == (False, 3, "edited")
    assert result.problem == "its content was changed after it was written"
    code, out = cli_verify(written, capsys)
    assert code == 1 and "BROKEN at row 3: a row was edited after it was written" in out
    assert "\n  its content was changed after it was written\n" in out


def test_an_edit_re_hashed_with_plain_sha256(written, opened, capsys):
    conn = raw(written)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 3")
    rehash(conn, _row_hash, 3)
    result = opened()[1].verify()
    assert (result.broken_seq, result.failure) == (3, "rehashed")
    assert "re-hashed without the audit key (plain SHA-256)" in result.problem
    code, out = cli_verify(written, capsys)
    assert code == 1 and "BROKEN at row 3: the chain was rewritten (re-hashed)" in out


def test_an_edit_re_hashed_with_a_guessed_key_and_a_forged_signed_count(written, opened, capsys):
    guess = secrets.token_bytes(32)
    conn = raw(written)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 3")
    head = rehash(conn, lambda prev, values: _link(guess, prev, values), 3)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'audit.signed_count'", (json.dumps(_signed(guess, 6, head)),))
    result = opened()[1].verify()
    assert (result.broken_seq, result.failure) == (3, "rehashed")
    assert "re-hashed with a key other than this log's audit key" in result.problem
    assert cli_verify(written, capsys)[0] == 1


def test_a_whole_chain_re_hashed_as_plain_rows_is_caught_by_the_anchor(written, opened):
    conn = raw(written)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 2")
    rehash(conn, _row_hash, 1)
    conn.execute("DELETE FROM meta WHERE key IN ('audit.keyed_from', 'audit.signed_count')")  # looks pre-key now
    result = opened()[1].verify()
    assert (result.broken_seq, result.failure) == (6, "rehashed")
    assert "is not the row the last anchor" in result.problem and "rewritten" in result.problem


def test_rows_cut_from_the_end(written, opened, capsys):
    conn = raw(written)
    conn.execute("DELETE FROM audit_log WHERE seq > 4")
    result = opened()[1].verify()
    assert (result.broken_seq, result.failure) == (5, "cut")
    assert result.problem == "rows 5-6 were removed from the end: the signed count says 6 rows, the log ends at row 4"
    code, out = cli_verify(written, capsys)
    assert code == 1 and "BROKEN at row 5: rows were cut from the end" in out


def test_a_cut_with_its_signed_count_put_back_is_older_than_the_anchor(opened, db):
    store, log = opened()
    fill(log, 4)
    at_four = store.get_meta("audit.signed_count")
    fill(log, 2)
    log.close()
    conn = raw(db)
    conn.execute("DELETE FROM audit_log WHERE seq > 4")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'audit.signed_count'", (at_four,))
    result = AuditLog(store).verify()
    assert (result.broken_seq, result.failure) == (5, "rolled_back")
    assert "older than the last anchor" in result.problem


def test_an_older_copy_of_the_file_restored(opened, db, tmp_path, capsys):
    store, log = opened()
    fill(log, 3)
    older = tmp_path / "older.sqlite3"
    src, dst = sqlite3.connect(db), sqlite3.connect(older)
    src.backup(dst)
    src.close()
    dst.close()
    fill(log, 3)
    log.close()
    store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.copy(older, db)

    store, log = opened()
    result = log.verify()
    assert (result.broken_seq, result.failure) == (4, "rolled_back")
    assert result.problem.startswith("the database is older than the last anchor")
    assert "counts 6 rows, the database ends at row 3" in result.problem
    code, out = cli_verify(db, capsys)
    assert code == 1 and "BROKEN at row 4: the database was rolled back to an older copy" in out

    # The host goes on, but writes down what it found first: the next anchor cannot hide it.
    fill(log, 1)
    log.close()
    alert = log.entries()[3]
    assert (alert.seq, alert.kind, alert.code) == (4, "alert", "audit_rolled_back")
    after = AuditLog(store).verify()
    assert (after.broken_seq, after.failure) == (4, "rolled_back") and "older than the last anchor" in after.problem


def test_a_deleted_key_file(written, opened, capsys):
    key_path().unlink()
    store, log = opened()
    result = log.verify()
    assert (result.broken_seq, result.failure) == (1, "no_key")
    assert result.problem.startswith("rows from 1 on cannot be verified: the audit key ")
    assert "is missing; restore it from a backup" in result.problem
    code, out = cli_verify(written, capsys)
    assert code == 3 and "CANNOT BE VERIFIED from row 1" in out
    # No new key that would make the old rows look forged: appends are refused instead.
    with pytest.raises(AuditKeyError, match="No new key is made"):
        fill(log, 1)
    assert not key_path().exists()
    assert not log.verify_tail().ok


def test_a_key_file_others_may_read(written, opened, capsys):
    os.chmod(key_path(), 0o644)
    store, log = opened()
    result = log.verify()
    assert (result.broken_seq, result.failure) == (1, "unsafe_key") and "mode 644" in result.problem
    code, out = cli_verify(written, capsys)
    assert code == 3 and "chmod 600" in out
    with pytest.raises(AuditKeyError, match="can be opened by other users"):
        fill(log, 1)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give the file away")
def test_a_key_file_owned_by_another_user(written, opened):
    os.chown(key_path(), 4242, -1)
    result = opened()[1].verify()
    assert (result.failure, result.broken_seq) == ("unsafe_key", 1) and "belongs to another user" in result.problem


def test_another_key_in_the_key_file(written, opened):
    key_path().write_text(secrets.token_hex(32) + "\n")
    store, log = opened()
    result = log.verify()
    assert result.failure == "wrong_key" and "not the key this log was written with" in result.problem
    with pytest.raises(AuditKeyError, match="was not written with the audit key"):
        fill(log, 1)


def test_another_database_keeps_its_key_beside_it_and_a_copy_verifies_with_the_hosts(written, tmp_path, capsys):
    elsewhere = tmp_path / "scratch" / "other.sqlite3"
    store = Store(elsewhere)
    store.migrate(COMPONENT, MIGRATIONS)
    fill(AuditLog(store), 2)
    store.close()
    assert (tmp_path / "scratch" / "other.sqlite3.audit" / "key").exists()
    assert len(list(key_path().parent.glob("anchor-*.json"))) == 1  # the host's database's only

    copy = tmp_path / "backup.sqlite3"
    src, dst = sqlite3.connect(written), sqlite3.connect(copy)
    src.backup(dst)
    src.close()
    dst.close()
    code, out = cli_verify(copy, capsys)
    assert code == 3 and "backup.sqlite3.audit/key is missing" in out
    code, out = cli_verify(copy, capsys, keys=key_path().parent)
    assert code == 0 and "6 rows" in out and "no anchor outside the database for this file yet" in out


def test_the_key_is_made_once_with_o_excl(tmp_path):
    keys = AuditKeys(tmp_path / "audit")
    made = keys.create()
    assert keys.create() == made == keys.load()  # a second create finds the first key, never replaces it


def old_scheme_log(db: Path, n: int) -> bytes:
    """A database as the host wrote it before links were keyed; returns its parameter digest key."""
    store = Store(db)
    store.migrate(COMPONENT, MIGRATIONS)
    digest_key = secrets.token_bytes(32)
    store.set_meta("audit.params_digest_key", digest_key.hex())
    prev = GENESIS
    with store.transaction() as conn:
        for seq in range(1, n + 1):
            values = (seq, 1000.0 + seq, "decision", "t", None, None, "click", "https://a.example", None, None, "ask",
                      "policy_default", None, None, None, None, None, None)
            link = _row_hash(prev, values)
            conn.execute(f"INSERT INTO audit_log ({', '.join(_COLUMNS)}, prev_hash, hash) "
                         f"VALUES ({', '.join('?' * (len(_COLUMNS) + 2))})", (*values, prev, link))
            prev = link
    store.close()
    return digest_key


def test_an_old_scheme_log_verifies_and_goes_on_keyed(db, opened, capsys):
    digest_key = old_scheme_log(db, 3)
    store, log = opened()
    before = log.verify()
    assert (before.ok, before.rows, before.keyed_from) == (True, 3, None)
    assert not key_path().exists()  # checking plain rows needs no key, and makes none
    assert "no keyed rows yet" in cli_verify(db, capsys)[1]

    fill(log, 2)
    after = AuditLog(store).verify()
    assert (after.ok, after.rows, after.keyed_from) == (True, 5, 4)
    assert [e.kind for e in log.entries()] == ["decision"] * 5  # nothing found wrong, nothing to report
    expected = hmac.new(digest_key, b'{"ref":"x"}', hashlib.sha256).hexdigest()
    assert log.params_digest({"ref": "x"}) == expected  # old digests still match new ones
    code, out = cli_verify(db, capsys)
    assert code == 0 and "keyed links from row 4 (rows before it are plain SHA-256" in out


def test_old_rows_re_hashed_under_the_keyed_rows_are_found(db, opened):
    old_scheme_log(db, 3)
    store, log = opened()
    fill(log, 2)
    conn = raw(db)
    conn.execute("UPDATE audit_log SET verdict = 'allow' WHERE seq = 2")
    head = rehash(conn, _row_hash, 2, 3)
    conn.execute("UPDATE audit_log SET prev_hash = ? WHERE seq = 4", (head,))  # the old rows chain again
    result = AuditLog(store).verify()
    assert (result.broken_seq, result.failure) == (4, "edited")
    assert result.problem == ("the first row with a keyed link no longer matches: it, or a row written before links "
                              "were keyed, was changed")


def test_an_old_scheme_log_whose_last_row_is_not_plain_gets_no_new_key(db, opened):
    old_scheme_log(db, 3)
    conn = raw(db)
    conn.execute("UPDATE audit_log SET hash = ? WHERE seq = 3", ("f" * 64,))  # keyed with a key now lost?
    store, log = opened()
    with pytest.raises(AuditKeyError, match="may have been keyed with the lost key"):
        fill(log, 1)
    assert not key_path().exists()


def test_verify_tail_keeps_working_for_healing(written, opened):
    store, log = opened()
    assert log.verify_tail().ok and log.verify_tail(rows=2).rows == 2
    conn = raw(written)
    conn.execute("UPDATE audit_log SET detail = 'edited' WHERE seq = 6")
    tail = log.verify_tail(rows=3)
    assert (tail.ok, tail.broken_seq, tail.failure) == (False, 6, "edited")


def test_the_gatekeeper_fails_closed_when_the_key_is_missing(written, make_gatekeeper):
    key_path().unlink()
    store = Store(written)
    try:
        gk = make_gatekeeper(store)
        with pytest.raises(GatekeeperUnavailable):
            gk.check(CheckRequest(thread_id="t", tool="click", params={"ref": "a"}, origin="https://a.example"))
        assert "audit key" in gk.closed_because and "is missing" in gk.closed_because
        assert not key_path().exists()
    finally:
        store.close()
