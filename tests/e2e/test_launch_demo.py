"""`tabwarden demo --approve accept` end to end: the replay agent reads the bundled shop page,
fills its form after the approval, is refused the sensitive bank, prints the trail, exits 0 and
leaves nothing behind (no process, no run folder, no demo home)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser import ROOT, require_chromium
from tests.support.launch_session import launch_env, processes_naming, run_folder

pytestmark = pytest.mark.browser


def test_the_demo_runs_the_whole_story_and_cleans_up(tmp_path):
    chromium = require_chromium()
    done = subprocess.run([sys.executable, "-m", "host", "demo", "--approve", "accept", "--browser", chromium],
                          env=launch_env(tmp_path), cwd=ROOT, capture_output=True, text=True, timeout=180)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "a REPLAY of a fixed script served on 127.0.0.1, not an AI model" in out
    # The task never gives an address: the one the agent types is asked about as not the user's.
    assert re.search(r"Batch actions @ http://127\.0\.0\.1:\d+ - .* would send values you did not give: "
                     r"the e-mail address \"ada@example\.com\" does not appear in your request", out)
    assert "(answered by --approve accept)" in out
    assert re.search(r"decision \w+: read_page @ http://127\.0\.0\.1:\d+  ALLOW \(read_allowed\)", out)
    assert re.search(r"approval \w+: batch_actions @ http://127\.0\.0\.1:\d+  approval accept", out)
    assert re.search(r"outcome  \w+: batch_actions @ http://127\.0\.0\.1:\d+  outcome ok", out)
    assert re.search(r"decision \w+: navigate @ http://127\.0\.0\.1:\d+  DENY \(sensitive_origin\)", out)
    assert "[replay script, not an AI] I read the shop page, signed you up for the newsletter" in out
    assert "demo complete: the page was read, the form was filled after your approval" in out
    assert "(quit when asked)" in out
    run = run_folder(out)
    assert processes_naming(run) == [] and not Path(run).exists()
    demo_home = re.search(r"profile: (/\S+?)/data/profiles/", out).group(1)
    assert not Path(demo_home).exists()  # the throw-away Tabwarden home is gone too
    assert not (tmp_path / "tw" / "data").exists()  # and the caller's own home was never used
