"""Errors a user meets outside the pages say what happened and what to run, and exit non-zero
where a script should notice."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_repl_list_without_a_host_exits_1_with_one_line(tmp_path):
    home = tmp_path / "home"
    env = {"PATH": "/usr/bin:/bin", "TABWARDEN_HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")}
    done = subprocess.run([sys.executable, "-m", "host", "repl", "--list"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "`tabwarden doctor`" in done.stderr


async def test_no_running_host_says_what_starts_one(tmp_path, monkeypatch):
    import pytest

    from host.control.client import ControlClient
    from host.transport.errors import RequestError

    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    with pytest.raises(RequestError) as caught:
        await ControlClient.connect()
    text = str(caught.value)
    assert "no running Tabwarden host found" in text and "`tabwarden doctor`" in text
