"""`tabwarden launch --headless` end to end: a real Chromium with the extension in a dedicated
profile, its host connects, the REPL snapshots a page through the gatekeeper, and Ctrl-D stops
every process the launch started. One browser for the module; the tests run in file order."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.support.browser import require_chromium
from tests.support.launch_session import alive, announced_pids, processes_naming, run_folder, start_launch
from tests.support.pages import PageServer

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    chromium = require_chromium()
    base = tmp_path_factory.mktemp("launch")
    with PageServer() as pages:
        session = start_launch(base, "--headless", "--browser", chromium, "--site-access", "http://127.0.0.1/*",
                               "--url", pages.url("l1/form.html"))
        session.base, session.pages = base, pages
        try:
            session.expect("tw> ", timeout=60)
            session.settle("tw> ")
            yield session
        finally:
            session.close()
            output = session.output.decode()
            if "run folder: " in output:  # a test failed before launch could clean up: do it here
                for pid in processes_naming(run_folder(output)):
                    os.kill(pid, signal.SIGKILL)


def test_the_browser_and_its_host_are_announced(launched):
    out = launched.output.decode()
    browser_pid, host_pid = announced_pids(out)
    assert alive(browser_pid) and alive(host_pid)
    profile = launched.base / "tw" / "data" / "profiles" / "chromium"
    assert f"profile: {profile}" in out
    assert (profile / "NativeMessagingHosts" / "com.tabwarden.host.json").is_file()
    assert f"attached to host pid {host_pid}" in out


def test_the_repl_snapshots_the_page_through_the_gatekeeper(launched):
    launched.line("tabs = await tw.tabs(); tab = [t for t in tabs.details['tabs'] if 'form.html' in t['url']][0]['id']")
    launched.expect("tw> ")
    launched.line("tw.snapshot(tab=tab)")
    out = launched.expect("tw> ")
    assert "gatekeeper ALLOW (read_allowed)" in out
    assert "# Page Snapshot (" in out and "[ref=" in out
    launched.line("tw.audit(5, tool='read_page')")
    assert "read_page @ http://127.0.0.1:" in launched.expect("tw> ")


def test_ctrl_d_stops_everything_the_launch_started(launched):
    browser_pid, host_pid = announced_pids(launched.output.decode())
    run_dir = run_folder(launched.output.decode())
    assert set(processes_naming(run_dir)) >= {browser_pid, host_pid}  # both carry the run folder
    launched.end_of_input()
    out = launched.expect("stopped browser pid")
    assert launched.wait() == 0
    assert f"stopped browser pid {browser_pid} (quit when asked)" in out + launched.output.decode()
    assert not alive(browser_pid) and not alive(host_pid)
    assert processes_naming(run_dir) == []
    assert not Path(run_dir).exists()  # the run folder itself is gone
    log = (launched.base / "tw" / "log" / "host.log").read_text()
    assert f"{host_pid} INFO tabwarden.host: host exits with 0" in log  # it shut down by itself
