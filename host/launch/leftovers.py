"""Finding and ending, by PID, processes a launch started that outlived the browser (a native
host whose browser was killed, a helper that left the process group). A process is ours when its
command line or environment names the launch's run folder, which only our children carry."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def processes_naming(marker: str) -> list[int]:
    """PIDs (other than this process) whose command line or environment contains `marker`."""
    if sys.platform.startswith("linux"):
        return _linux(marker.encode())
    if sys.platform == "darwin":
        return _ps_with_environment(marker)
    return []  # Windows: the browser's whole tree is ended through taskkill /T instead


def _linux(marker: bytes) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if _zombie(entry):
                continue  # already dead, waiting to be reaped
            if marker in (entry / "cmdline").read_bytes() or marker in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _zombie(entry: Path) -> bool:
    stat = (entry / "stat").read_text()
    return stat[stat.rfind(")") + 2:].startswith("Z")


def _ps_with_environment(marker: str) -> list[int]:
    # `ps e` appends each process's environment (the user's own processes) to its command.
    try:
        out = subprocess.run(["ps", "-axeww", "-o", "pid=,command="], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for line in out.splitlines():
        pid_text, _, command = line.strip().partition(" ")
        if pid_text.isdigit() and int(pid_text) != os.getpid() and marker in command:
            found.append(int(pid_text))
    return found


def wait_gone(marker: str, timeout: float) -> list[int]:
    """Wait up to `timeout` seconds for the processes naming `marker` to end (a killed process
    group takes a moment to die); returns those still there."""
    deadline = time.monotonic() + timeout
    while True:
        remaining = processes_naming(marker)
        if not remaining or time.monotonic() >= deadline:
            return remaining
        time.sleep(0.05)


def kill_pids(pids: list[int]) -> list[int]:
    """SIGKILL each PID; returns those that existed."""
    ended = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            ended.append(pid)
        except (ProcessLookupError, PermissionError):
            pass
    return ended
