"""The line the pages show while the host is not connected says what to do about Chrome's
native-messaging errors (run under node when it is installed)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

UI = Path(__file__).resolve().parents[2] / "extension" / "ui"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def link_texts(tmp_path, states):
    for name in ("strings.js", "link-text.js"):
        shutil.copy(UI / name, tmp_path / name)
    (tmp_path / "package.json").write_text('{"type": "module"}')
    script = ("import { linkText } from './link-text.js';"
              f"console.log(JSON.stringify({json.dumps(states)}.map(linkText)));")
    (tmp_path / "run.js").write_text(script)
    done = subprocess.run(["node", "run.js"], cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_each_chrome_error_says_what_to_run(tmp_path):
    texts = link_texts(tmp_path, [
        {"lastError": "Specified native messaging host not found."},
        {"lastError": "Invalid native messaging host name specified."},
        {"lastError": "Access to the specified native messaging host is forbidden."},
        {"lastError": "Native host has exited."},
        {"lastError": "Error when communicating with the native messaging host."},
        {"lastError": "something new"},
        {"ready": True},
        {},
        {"fatal": {"message": "wrong protocol"}},
    ])
    assert "`tabwarden install`" in texts[0] and "`tabwarden doctor`" in texts[0] and "not registered" in texts[0]
    assert texts[1] == texts[0]
    texts = texts[:1] + texts[2:]
    assert "`tabwarden install`" in texts[1]
    assert "`tabwarden doctor`" in texts[2] and "stopped" in texts[2]
    assert "`tabwarden doctor`" in texts[3]
    assert "(something new)" in texts[4] and "`tabwarden doctor`" in texts[4]
    assert all("not connected" in text for text in texts[:5])
    assert texts[5] == "" and texts[6].startswith("Connecting")
    assert texts[7] == "The host refused this extension: wrong protocol"
