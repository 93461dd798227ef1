"""Starting and stopping what a launch starts, with a stand-in browser: the debugging pipe, the
three-step stop, and leftovers found by the run folder they carry."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from host.control.liveness import pid_alive
from host.launch import leftovers
from host.launch.browser_process import BrowserProcess
from host.launch.cdp_pipe import DebugPipe, PipeError, load_unpacked
from tests.support.waiting import wait_until

FAKE = str(Path(__file__).with_name("fake_browser.py"))

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds leftovers through /proc")


def start(tmp_path: Path, mode: str, pipe: DebugPipe | None = None) -> BrowserProcess:
    marker = tmp_path / "run"
    (marker / "tmp").mkdir(parents=True)
    env = dict(os.environ, TMPDIR=str(marker / "tmp"))
    browser = BrowserProcess([sys.executable, FAKE, mode], env, tmp_path / "browser.log", str(marker), pipe)
    browser.start(cwd=tmp_path)
    return browser


def children(tmp_path: Path) -> dict[str, int]:
    log = tmp_path / "browser.log"

    def report() -> dict[str, int] | None:
        text = log.read_text() if log.exists() else ""
        return json.loads(text.splitlines()[0]) if text.strip() else None

    return wait_until(report, 20, "the fake browser to report its children", interval=0.02)


def gone(pid: int, within: float = 5.0) -> bool:
    """True once `pid` has exited (a zombie counts). A SIGKILL is delivered asynchronously, so a
    loaded machine may still show the process for a moment after the kill was sent."""
    deadline = time.monotonic() + within
    while not _exited(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _exited(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return state[state.rfind(")") + 2:].startswith("Z")  # dead, not yet reaped by its parent


def test_the_extension_is_loaded_over_the_pipe_and_closing_it_ends_the_browser(tmp_path):
    pipe = DebugPipe()
    browser = start(tmp_path, "pipe", pipe)
    try:
        assert load_unpacked(pipe, "/some/ext") == "fake9"  # after skipping an event on the way
        with pytest.raises(PipeError, match="Other.thing failed: nope"):
            pipe.call("Other.thing", {})
        pipe.close()
        assert browser.proc.wait(10) == 0  # it saw end-of-file on its command pipe
    finally:
        browser.stop(grace=1)


def test_a_kept_browser_holds_its_own_command_pipe_open(tmp_path):
    pipe = DebugPipe(keep_open_after_exit=True)
    browser = start(tmp_path, "pipe", pipe)
    try:
        assert pipe.call("Test.fds", {}) == {"samePipe": True, "keepWritable": True}
    finally:
        browser.stop(grace=1)


def test_stop_asks_then_kills_the_group_then_the_stragglers_by_run_folder(tmp_path):
    browser = start(tmp_path, "group")
    kids = children(tmp_path)
    assert set(leftovers.processes_naming(str(tmp_path / "run"))) >= {browser.pid, kids["host"], kids["helper"]}
    browser_pid = browser.pid
    report = browser.stop(grace=2)
    assert report.quit_when_asked is True
    assert report.killed_leftovers == [kids["helper"]]  # the group kill already ended the host
    assert all(gone(pid) for pid in (browser_pid, kids["host"], kids["helper"]))
    assert leftovers.processes_naming(str(tmp_path / "run")) == []


def test_a_browser_that_ignores_the_request_to_quit_is_killed(tmp_path):
    browser = start(tmp_path, "stubborn")
    kids = children(tmp_path)
    report = browser.stop(grace=0.5)
    assert report.quit_when_asked is False
    assert all(gone(pid) for pid in (kids["host"], kids["helper"])) and not browser.alive()


def test_liveness_never_signals_the_process():
    assert pid_alive(os.getpid()) and not pid_alive(0) and not pid_alive(2**22 + 12345)
