"""`tabwarden launch --keep --load-via pipe`: the extension loaded over the debugging pipe (the
route branded Chrome needs, exercised here with Chromium), and a browser that outlives the
launch, holds its profile against a second launch, and still serves its host."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time

import pytest

from host.control.client import ControlClient
from tests.support.browser import require_chromium
from tests.support.hosts import tabwarden_home
from tests.support.launch_session import alive, announced_pids, processes_naming, run_folder, start_launch

pytestmark = pytest.mark.browser


def test_a_kept_browser_outlives_the_launch_and_keeps_its_profile(tmp_path):
    chromium = require_chromium()
    session = start_launch(tmp_path, "--headless", "--browser", chromium, "--load-via", "pipe", "--keep")
    run_dir = None
    try:
        session.expect("tw> ", timeout=60)
        out = session.output.decode()
        assert "loaded over the debugging pipe" in out and "stays running after Ctrl-D (--keep)" in out
        browser_pid, host_pid = announced_pids(out)
        run_dir = run_folder(out)
        session.settle("tw> ")
        session.end_of_input()
        assert session.wait() == 0
        assert f"left chromium pid {browser_pid} running (--keep)" in session.output.decode()
        assert alive(browser_pid) and alive(host_pid)  # even though our end of the pipe is closed

        with tabwarden_home(tmp_path / "tw"):
            info = asyncio.run(_host_info(host_pid))
        assert info["connected"] is True

        second = start_launch(tmp_path, "--headless", "--browser", chromium)
        try:
            assert second.wait() == 1
            assert f"browser pid {browser_pid} already uses" in second.output.decode()
        finally:
            second.close()
        assert alive(browser_pid)
    finally:
        session.close()
        if run_dir is not None:
            _stop_kept(run_dir)
    assert processes_naming(run_dir) == []


async def _host_info(pid: int) -> dict:
    client = await ControlClient.connect(pid=pid, client="test")
    try:
        return await client.call("host.info")
    finally:
        await client.close()


def _stop_kept(run_dir: str) -> None:
    """What a user does with a kept browser: ask it to quit; then make sure nothing is left."""
    pids = processes_naming(run_dir)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    while processes_naming(run_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in processes_naming(run_dir):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(run_dir, ignore_errors=True)
