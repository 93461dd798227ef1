"""Faults and load against the real host a real browser started: another process holds the
database's write lock past the busy timeout (as a backup or sync tool does), then lets go; a
client pipelines 10,000 requests on one control connection. The host refuses what it cannot
judge with the call's own result (`storage_unavailable`), says so to its clients while it lasts,
serves again without a restart once the lock is gone, and answers every request it was sent."""

from __future__ import annotations

import sqlite3

import msgspec
import pytest

from tests.support.browser_tools import running_browser
from tests.support.hosts import attach
from tests.support.pages import PageServer
from tests.support.waiting import until

pytestmark = pytest.mark.browser

THREAD = "storage-faults"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with PageServer() as pages, running_browser(tmp_path_factory.mktemp("storage-faults"), ["http://127.0.0.1/*"],
                                                start_url=pages.url("hello.html")) as browser:
        yield browser


async def read_page(control) -> dict:
    return await control.call("tools.call", timeout=30, tool="read_page", params={}, thread_id=THREAD)


async def test_a_lock_held_past_the_busy_timeout_refuses_calls_then_the_host_serves_again(run):
    control = await attach(timeout=30)
    statuses: list[dict] = []
    control.listen(lambda event: event.topic == "storage" and statuses.append(msgspec.to_builtins(event.data)))
    await control.subscribe("storage")
    try:
        assert (await read_page(control))["ok"] is True
        locker = sqlite3.connect(str(run.tw_home / "data" / "tabwarden.sqlite3"), isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")
        try:
            refused = await read_page(control)  # waits out the host's 5 s busy timeout
            assert refused["ok"] is False and refused["error"]["code"] == "storage_unavailable"
            assert "database is locked" in refused["error"]["message"]
            assert refused["error"]["details"]["dispatched"] is False  # nothing reached the page
            await until(lambda: statuses and statuses[-1]["available"] is False, 10, "the host to say storage is down")
            assert "database is locked" in statuses[-1]["cause"]
            again = await read_page(control)  # still refused while the lock is held
            assert again["error"]["code"] == "storage_unavailable"
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        await until(lambda: statuses[-1]["available"] is True, 20, "the host to open again by itself")
        assert (await read_page(control))["ok"] is True  # no restart: the same host process
        verified = await control.call("gatekeeper.verify_audit", timeout=30)
        assert verified["ok"] is True
    finally:
        await control.close()


async def test_ten_thousand_pipelined_requests_each_get_a_result_or_a_refusal(run):
    from protocol.messages import Failure

    from host.control.discovery import running_hosts
    from tests.support.hosts import pipelined_answers

    entry = running_hosts()[0]
    total = 10_000
    answered = await pipelined_answers(str(entry.socket_path), entry.token(), "host.info", total, 300)
    assert sorted(answered) == list(range(1, total + 1))
    refused = [m for m in answered.values() if isinstance(m, Failure)]
    assert all(m.error.code == "overloaded" and m.error.details["retryAfterMs"] > 0 for m in refused)
    control = await attach(timeout=30)  # and it still serves
    try:
        assert (await control.call("host.info"))["connected"] is True
    finally:
        await control.close()


async def test_a_damaged_database_at_start_fails_closed_and_a_restored_backup_is_used_without_a_restart(run):
    import shutil

    from host.control.discovery import running_hosts

    control = await attach(timeout=30)
    try:
        await control.call("gatekeeper.add_rule", tool="navigate", origin="127.0.0.1", verdict="deny")
    finally:
        await control.close()
    run.stop()
    await until(lambda: not run.host_pids(), 20, "the host to exit")  # its last writes are done
    data = run.tw_home / "data"
    database = data / "tabwarden.sqlite3"
    conn = sqlite3.connect(str(database))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()  # a connection left open would write the database back when it closes
    backup = run.run_dir / "backup.sqlite3"
    shutil.copy(database, backup)
    for leftover in data.glob("tabwarden.sqlite3-*"):
        leftover.unlink()
    database.write_bytes(b"this is not a database, a sync tool wrote half a file here " * 200)

    run.start()
    control = await attach(timeout=30)
    statuses: list[dict] = []
    control.listen(lambda event: event.topic == "storage" and statuses.append(msgspec.to_builtins(event.data)))
    await control.subscribe("storage")
    try:
        pid = control.pid
        refused = await read_page(control)
        assert refused["ok"] is False and refused["error"]["code"] == "storage_unavailable"
        assert "not a database" in refused["error"]["message"]
        shutil.copy(backup, database)  # the user restores the backup
        await until(lambda: statuses and statuses[-1]["available"] is True, 40, "the host to open the restored file")
        assert [h.pid for h in running_hosts()] == [pid]  # the same process: no restart
        assert (await read_page(control))["ok"] is True
        denied = await control.call("tools.call", timeout=30, tool="navigate", params={"url": run.start_url},
                                    thread_id=THREAD)
        assert denied["ok"] is False and denied["error"]["code"] == "denied"  # the rule from before the damage
        assert "rule_deny" in denied["error"]["message"], denied
    finally:
        await control.close()
