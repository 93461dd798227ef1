import sqlite3
import threading

import pytest

from host.store import Migration, Store, StoreError, default_path


def test_wal_foreign_keys_and_meta(store):
    assert store.query("PRAGMA journal_mode")[0][0] == "wal"
    assert store.query("PRAGMA foreign_keys")[0][0] == 1
    store.set_meta("k", "v")
    store.set_meta("k", "w")
    assert store.get_meta("k") == "w" and store.get_meta("missing") is None


def test_migrations_apply_once_and_in_order(store):
    steps = [Migration(1, "a", sql="CREATE TABLE a (x INTEGER); CREATE INDEX a_x ON a (x)"),
             Migration(2, "b", apply=lambda c: c.execute("INSERT INTO a VALUES (1)"))]
    assert store.migrate("demo", steps[:1]) == 1
    assert store.migrate("demo", steps) == 2
    assert store.migrate("demo", steps) == 2
    assert store.query("SELECT COUNT(*) FROM a")[0][0] == 1
    assert store.schema_version("demo") == 2 and store.schema_version("other") == 0
    with pytest.raises(StoreError, match="newer"):
        store.migrate("demo", steps[:1])
    with pytest.raises(ValueError):
        store.migrate("bad", [Migration(2, "skips one", sql="SELECT 1")])


def test_failed_migration_rolls_back(store):
    bad = [Migration(1, "half", sql="CREATE TABLE h (x INTEGER); INSERT INTO nowhere VALUES (1)")]
    with pytest.raises(StoreError):
        store.migrate("half", bad)
    assert store.schema_version("half") == 0
    assert not store.query("SELECT name FROM sqlite_master WHERE name = 'h'")


def test_errors_are_typed(store):
    with pytest.raises(StoreError):
        store.query("SELECT * FROM no_such_table")
    with pytest.raises(StoreError):
        store.execute("INSERT INTO no_such_table VALUES (1)")


def test_unopenable_path_raises_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError):
        Store(blocker / "sub" / "db.sqlite3")


def test_one_connection_per_thread(store):
    store.migrate("t", [Migration(1, "t", sql="CREATE TABLE t (x INTEGER)")])
    def work(n):
        for i in range(20):
            store.execute("INSERT INTO t VALUES (?)", (n * 100 + i,))
    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.query("SELECT COUNT(*) FROM t")[0][0] == 80


def test_default_path_is_under_the_data_dir(tmp_path):
    assert default_path() == tmp_path / "home" / "data" / "tabwarden.sqlite3"


def test_closed_store_refuses(tmp_path):
    s = Store(tmp_path / "x.sqlite3")
    s.close()
    with pytest.raises(StoreError):
        s.query("SELECT 1")
    assert isinstance(StoreError("x"), RuntimeError) and not isinstance(StoreError("x"), sqlite3.Error)
