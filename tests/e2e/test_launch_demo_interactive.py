"""`tabwarden demo` asking on the terminal: the person declines, the form stays untouched, the
trail records the decline, and the demo still exits 0 (the story went as the answers said)."""

from __future__ import annotations

import re
import sys

import pytest

from tests.support.browser import ROOT, require_chromium
from tests.support.launch_session import launch_env
from tests.support.pty_session import PtySession

pytestmark = pytest.mark.browser


def test_the_approval_is_asked_on_the_terminal_and_declined(tmp_path):
    chromium = require_chromium()
    session = PtySession([sys.executable, "-m", "host", "demo", "--browser", chromium], launch_env(tmp_path), ROOT)
    try:
        session.expect("Allow it? [a]ccept / [d]ecline: ", timeout=90)
        session.line("maybe")
        session.expect("please answer a (accept) or d (decline)")
        session.line("d")
        assert session.wait(90) == 0
        out = session.output.decode()
        assert re.search(r"approval \w+: batch_actions @ http://127\.0\.0\.1:\d+  approval decline", out)
        assert "outcome declined" in out and "batch_actions @" in out
        assert "did not fill the sign-up form (it was not approved)" in out
        assert "demo complete: the page was read, the form was left alone" in out
    finally:
        session.close()


def test_without_a_terminal_the_demo_needs_an_answer_up_front(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "host", "demo"], env=launch_env(tmp_path), cwd=ROOT, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "no terminal to ask on; pass --approve accept or --approve decline" in done.stderr
