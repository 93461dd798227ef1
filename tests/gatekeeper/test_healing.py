"""Fail closed, then heal, on a real SQLite file: a write lock held past the busy timeout, a full
disk on a small tmpfs, a folder remounted read-only. Each fault closes the gatekeeper (every call
refused, with the cause), and once it passes the gatekeeper opens again by itself, keeping what
was decided before and leaving nothing half-written."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

import host.store.db as db
from host.gatekeeper.errors import GatekeeperUnavailable
from host.gatekeeper.service import CheckRequest
from host.store import Store

CLICK = CheckRequest(thread_id="t", tool="click", params={"ref": "a"}, origin="https://a.com")


def opened_again(gk, within: float = 20.0):
    """Call checks as a user's agent would until one is answered (the healer spaces its attempts)."""
    deadline = time.monotonic() + within
    while True:
        try:
            return gk.check(CLICK)
        except GatekeeperUnavailable:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def granted_before_the_fault(gk):
    gk.bind_browser_session("b")
    gk.apply_decision(thread_id="t", approval_id="a0", tool="click", target_origin="https://a.com",
                      kind="acceptForSession")
    assert gk.check(CLICK).code == "session_grant"


def refused_with_storage_cause(gk) -> str:
    with pytest.raises(GatekeeperUnavailable) as err:
        gk.check(CLICK)
    assert err.value.code == "storage_unavailable"
    return gk.closed_because


def test_a_write_lock_held_past_the_busy_timeout_closes_then_heals(tmp_path, make_gatekeeper, monkeypatch):
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)  # the host waits 5 s; the fault is the same
    store = Store(tmp_path / "gk.sqlite3")
    gk = make_gatekeeper(store)
    granted_before_the_fault(gk)
    rows = gk.audit.verify().rows
    locker = sqlite3.connect(str(store.path), isolation_level=None)  # a backup tool, a sync client
    locker.execute("BEGIN EXCLUSIVE")
    try:
        for _ in range(3):
            assert "database is locked" in refused_with_storage_cause(gk)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert opened_again(gk).code == "session_grant"
    verified = gk.audit.verify()
    assert verified.ok and gk.closed_because is None
    # Nothing was half-written, and the refusals are in the log, written once storage answered.
    late = [e for e in gk.audit.entries() if e.tool_outcome == "storage_unavailable"]
    assert len(late) >= 3 and all("written when storage answered again" in e.detail for e in late)
    assert all("database is locked" in e.detail for e in late)
    assert verified.rows == rows + len(late) + 1  # each refused call once, then the check that ran


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 2 MB tmpfs of its own (a disk that fills up, a folder that turns read-only); the test
    is skipped where this process may not mount one."""
    where = tmp_path / "disk"
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode(errors='replace').strip()}")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(where: Path) -> Path:
    """Take every free byte of the file system."""
    filler = where / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_closes_then_heals_once_space_is_freed(small_tmpfs, make_gatekeeper):
    store = Store(small_tmpfs / "gk.sqlite3")
    gk = make_gatekeeper(store)
    granted_before_the_fault(gk)
    filler = fill(small_tmpfs)
    refused = 0
    for n in range(200):  # enough audit rows to need a new page on a disk with none left
        try:
            gk.check(CheckRequest(thread_id="t", tool="click", params={"ref": "a", "text": "x" * 2000},
                                  origin="https://a.com"))
        except GatekeeperUnavailable as exc:
            assert exc.code == "storage_unavailable"
            refused += 1
            break
    assert refused, "the disk never filled up"
    assert "full" in refused_with_storage_cause(gk)
    filler.unlink()
    assert opened_again(gk).code == "session_grant"
    assert gk.audit.verify().ok


def as_user_who_may_not_write(scenario) -> None:
    """Run `scenario(folder, gatekeeper)` where file permissions bind: in this process when it is
    not root, else in a forked child that gave up root's right to write through a read-only
    mode (CAP_DAC_OVERRIDE). The child's failure fails the test with its traceback."""
    import traceback

    from host.gatekeeper.service import Gatekeeper

    folder = Path(os.environ["TABWARDEN_HOME"]).parent / "data"
    folder.mkdir()

    def run() -> None:
        gk = Gatekeeper(Store(folder / "gk.sqlite3"), user_policy=folder / "user.json",
                        managed_policy=folder / "managed.json")
        scenario(folder, gk)

    if os.geteuid() != 0:
        run()
        return
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: give up the override, run, report
        status = 0
        try:
            _drop_dac_override()
            run()
        except BaseException:
            os.write(write_end, traceback.format_exc().encode()[-8000:])
            status = 1
        os._exit(status)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    report = b""
    while chunk := os.read(read_end, 65536):
        report += chunk
    os.close(read_end)
    assert os.waitstatus_to_exitcode(status) == 0, report.decode(errors="replace")


def _drop_dac_override() -> None:
    """Remove CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from this process's effective set."""
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    libc = ctypes.CDLL(None, use_errno=True)
    header, data = Header(0x20080522, 0), (Data * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    data[0].effective &= ~((1 << 1) | (1 << 2))
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def in_a_new_thread(fn):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn).result()


def test_a_folder_made_read_only_closes_then_heals_once_writable():
    def scenario(folder: Path, gk) -> None:
        granted_before_the_fault(gk)
        for path in (folder, *folder.glob("gk.sqlite3*")):
            os.chmod(path, 0o500 if path.is_dir() else 0o400)
        try:
            # Permissions bind when a file is opened: a thread that starts now meets them, as the
            # host's next worker thread would.
            cause = in_a_new_thread(lambda: refused_with_storage_cause(gk))
            assert "readonly" in cause or "read-only" in cause or "unable to open" in cause, cause
            with pytest.raises(GatekeeperUnavailable):  # still closed on the next call, whoever makes it
                gk.check(CheckRequest(thread_id="other", tool="read_page", origin="https://a.com"))
        finally:
            for path in (folder, *folder.glob("gk.sqlite3*")):
                os.chmod(path, 0o700 if path.is_dir() else 0o600)
        assert opened_again(gk).code == "session_grant"
        assert gk.audit.verify().ok

    as_user_who_may_not_write(scenario)


def test_a_broken_audit_chain_does_not_heal(tmp_path, make_gatekeeper):
    store = Store(tmp_path / "gk.sqlite3")
    gk = make_gatekeeper(store)
    granted_before_the_fault(gk)
    locker = sqlite3.connect(str(store.path), isolation_level=None)
    locker.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
    for name, in locker.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        locker.execute(f"DROP TRIGGER {name}")
    locker.execute("UPDATE audit_log SET detail = 'edited' WHERE seq = (SELECT MAX(seq) FROM audit_log)")
    locker.close()
    gk._availability.fail(db.StoreError("disk I/O error (a fault that passed)"))
    with pytest.raises(GatekeeperUnavailable):
        opened_again(gk, within=1.0)
    assert "does not verify" in gk.closed_because
