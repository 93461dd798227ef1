"""The README's REPL lines, typed as written right after its `make launch` line on a machine
without a display (the launch goes headless by itself), against a real Chromium. Only the site
changes: https://example.com becomes a local page server, so the test needs no network."""

from __future__ import annotations

import os
import re
import shlex
import signal

import pytest

from tests.support.browser import ROOT, require_chromium
from tests.support.launch_session import processes_naming, run_folder, start_launch
from tests.support.pages import PageServer

pytestmark = pytest.mark.browser

SITE = "https://example.com"


def readme_blocks() -> tuple[list[str], list[str]]:
    """(the launch arguments of the README's `make launch LAUNCH_ARGS=...` line, its REPL lines)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    launch = re.search(r'^\s*make launch LAUNCH_ARGS="([^"]*)"\s*$', text, re.M)
    assert launch, "the README shows no `make launch LAUNCH_ARGS=...` line"
    block = re.search(r"Then, at the `tw>` prompt:\s*```python\n(.*?)```", text, re.S)
    assert block, "the README shows no REPL lines after its launch line"
    lines = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    return shlex.split(launch.group(1)), lines


def test_the_readme_lines_work_as_written(tmp_path, monkeypatch):
    chromium = require_chromium()
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    args, lines = readme_blocks()
    with PageServer() as pages:
        origin = pages.url("").rstrip("/")
        session = start_launch(tmp_path, "--browser", chromium, *[a.replace(SITE, origin) for a in args])
        try:
            banner = session.expect("tw> ", timeout=60)
            assert "starting headless instead" in banner
            session.settle("tw> ")
            seen = {}
            for line in lines:
                session.line(line.replace(SITE, origin))
                out = session.expect("tw> ", timeout=60)
                assert "Traceback" not in out and not re.search(r"^(error|failed) ", out, re.M), out
                seen[line.split("(")[0]] = out
            assert re.search(r"    tw\.approve\('run-\d+-\d+'\)", seen["tw.run"])
            assert "ok navigate" in seen["tw.approve"] and f"the tab now shows {origin}/" in seen["tw.approve"]
            assert "# Page Snapshot (" in seen["tw.snapshot"]
            assert f"Tabwarden already has access to {origin}" in seen["tw.grant_site"]
            granted = seen["tw.site_access"]
            assert "Granted Tabwarden access to https://example.org (https://example.org/*)" in granted, granted
            assert "Took back Tabwarden's access to https://example.org" in granted, granted
        finally:
            session.close()
            output = session.output.decode()
            if "run folder: " in output:
                for pid in processes_naming(run_folder(output)):
                    os.kill(pid, signal.SIGKILL)
