"""The launched browser as a process: started in its own session (so its helpers and the native
host share one process group), stopped in three steps, all by PID:

  1. ask the browser to quit (SIGTERM; on Windows a window close through taskkill) and wait up
     to 5 s: it closes the native port, so the host sees end-of-input and shuts down by itself,
     which it is given up to 5 s more to finish (killing the group at once would cut it short);
  2. kill the whole process group (Windows: the process tree);
  3. kill any process that still names this launch's run folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from host.launch import leftovers

GRACE_S = 5.0
LEFTOVER_WAIT_S = 2.0  # for the killed group to disappear before anything counts as a leftover


@dataclass
class StopReport:
    """How the stop went: whether the browser quit when asked, and which stragglers were killed."""

    quit_when_asked: bool = True
    exit_code: int | None = None
    killed_leftovers: list[int] = field(default_factory=list)


class BrowserProcess:
    """One browser process this launch started."""

    def __init__(self, argv: list[str], env: dict[str, str], log_path: Path, marker: str, pipe: Any = None):
        self.argv = argv
        self.env = env
        self.log_path = log_path
        self.marker = marker  # the run folder: every process we start carries it
        self.pipe = pipe  # a cdp_pipe.DebugPipe when the extension is loaded over the debugging pipe
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, cwd: Path) -> None:
        """Start the browser, its output going to the log file."""
        options: dict[str, Any] = {}
        if sys.platform == "win32":
            options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
        else:
            options["start_new_session"] = True
        if self.pipe is not None:
            options.update(preexec_fn=self.pipe.in_child, pass_fds=self.pipe.child_fds)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.argv, env=self.env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=str(cwd), **options)
        if self.pipe is not None:
            self.pipe.after_start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, grace: float = GRACE_S) -> StopReport:
        """Stop the browser and everything it started."""
        report = StopReport()
        if self.proc is None:
            return report
        if self.alive():
            self._ask_to_quit()
            try:
                self.proc.wait(grace)
                leftovers.wait_gone(self.marker, grace)  # the host finishing its own shutdown
            except subprocess.TimeoutExpired:
                report.quit_when_asked = False
        self._kill_group()
        try:
            report.exit_code = self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        if self.pipe is not None:
            self.pipe.close()
        report.killed_leftovers = leftovers.kill_pids(leftovers.wait_gone(self.marker, LEFTOVER_WAIT_S))
        if report.killed_leftovers:
            leftovers.wait_gone(self.marker, LEFTOVER_WAIT_S)  # SIGKILL is delivered, not instant
        return report

    def detach(self) -> None:
        """Leave the browser running (`--keep`): forget it without stopping anything."""
        if self.pipe is not None:
            self.pipe.close()  # the browser holds its own copy of the command pipe (see cdp_pipe)
        self.proc = None

    def _ask_to_quit(self) -> None:
        if sys.platform == "win32":
            subprocess.run(["taskkill", "/PID", str(self.pid), "/T"], capture_output=True)
        else:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def _kill_group(self) -> None:
        if sys.platform == "win32":
            subprocess.run(["taskkill", "/PID", str(self.pid), "/T", "/F"], capture_output=True)
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
