"""`tabwarden audit`: newest first for people, oldest first for programs, and a non-zero exit
with one line when there is no log to read; `tabwarden --version`."""

import json

import pytest

from tests.gatekeeper.test_cli import _seed_audit, tabwarden


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


def _seqs(table: str) -> list[int]:
    return [int(line.split()[0]) for line in table.splitlines()[1:]]


def test_list_is_newest_first_and_limit_keeps_the_newest(home):
    _seed_audit(home)
    listed = tabwarden("audit", "list", home=home)
    assert listed.returncode == 0 and _seqs(listed.stdout) == [3, 2, 1]
    assert _seqs(tabwarden("audit", "list", "--limit", "2", home=home).stdout) == [3, 2]
    exported = tabwarden("audit", "export", "--limit", "2", home=home)
    assert [json.loads(line)["seq"] for line in exported.stdout.splitlines()] == [1, 2]  # chain order
    window = tabwarden("audit", "list", "--until", "2999-01-01T00:00:00", "--limit", "1", home=home)
    assert _seqs(window.stdout) == [3]
    bad = tabwarden("audit", "list", "--limit", "-1", home=home)
    assert bad.returncode == 2 and "not a count" in bad.stderr


@pytest.mark.parametrize("action", ["list", "export", "verify"])
def test_no_audit_log_is_a_failure_a_script_notices(home, action):
    result = tabwarden("audit", action, home=home)
    assert result.returncode == 1 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "no audit log" in result.stderr
    assert not home.exists()


def test_version_is_in_the_help_and_works(home):
    from host import __version__

    helped = tabwarden("--help", home=home)
    assert helped.returncode == 0 and "--version" in helped.stdout
    version = tabwarden("--version", home=home)
    assert version.returncode == 0 and version.stdout.strip() == f"tabwarden {__version__}"
    unknown = tabwarden("polcy", home=home)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "tabwarden --help" in unknown.stderr


def test_a_reader_that_goes_away_is_no_traceback(home):
    import os
    import subprocess
    import sys

    from tests.gatekeeper.test_cli import ROOT

    env = {**os.environ, "TABWARDEN_HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")}
    case = '{"tool": "type", "origin": "https://a.example", "params": {"ref": "a", "text": "x"}}\n' * 2000
    proc = subprocess.Popen([sys.executable, "-m", "host", "policy", "explain", "--bare"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    _, err = proc.communicate(case.encode(), timeout=60)
    assert b"Traceback" not in err and proc.returncode == 141
