"""`tabwarden launch` as a person runs it, on a pseudo-terminal, for the real-browser tests: its
own Tabwarden home and HOME, colours off, and a way to find every process it left behind."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from tests.support.browser import ROOT
from tests.support.pty_session import PtySession


def launch_env(base: Path) -> dict[str, str]:
    """The environment of a launch under `base`: its own Tabwarden home and HOME, colours off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    for name in ("tw", "home"):
        (base / name).mkdir(parents=True, exist_ok=True)
    env.update(TABWARDEN_HOME=str(base / "tw"), HOME=str(base / "home"), NO_COLOR="1", TERM="dumb")
    return env


def start_launch(base: Path, *args: str) -> PtySession:
    """`python -m host launch ARGS` on a pty."""
    return PtySession([sys.executable, "-m", "host", "launch", *args], launch_env(base), ROOT)


def announced_pids(output: str) -> tuple[int, int]:
    """(browser pid, host pid) from launch's own announcements."""
    browser = re.search(r"started \S+(?: \S+)? pid (\d+) ", output)
    host = re.search(r"host pid (\d+) connected", output)
    assert browser and host, output
    return int(browser.group(1)), int(host.group(1))


def run_folder(output: str) -> str:
    """The run folder launch announced (every process it starts names it)."""
    found = re.search(r"run folder: (\S+) ", output)
    assert found, output
    return found.group(1)


def processes_naming(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line or environment contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
            if stat[stat.rfind(")") + 2:].startswith("Z"):
                continue
            if text.encode() in (entry / "cmdline").read_bytes() + (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat[stat.rfind(")") + 2:].startswith("Z")
