"""Driving an interactive command through a pseudo-terminal (stdlib `pty`, no pexpect): the
child gets the terminal as its controlling tty, so Ctrl-C and Ctrl-D behave as for a person."""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import termios
import time
from pathlib import Path

_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|[\r\x07]")


def _make_controlling_tty() -> None:
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtySession:
    """One child process on a pseudo-terminal; `expect` waits for text in its output."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None = None):
        master, slave = os.openpty()
        self.master = master
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True, preexec_fn=_make_controlling_tty, close_fds=True)
        os.close(slave)
        self.output = b""  # everything read so far (escape sequences and CRs removed)
        self._seen = 0  # how far `expect` has consumed

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        self.output += _ESCAPES.sub(b"", data)
        return bool(data)

    def expect(self, text: str, timeout: float = 30.0) -> str:
        """Wait until `text` appears after what earlier expects consumed; returns the output up to
        and including it. Fails with the output seen so far."""
        needle = text.encode()
        deadline = time.monotonic() + timeout
        while True:
            index = self.output.find(needle, self._seen)
            if index >= 0:
                chunk = self.output[self._seen:index + len(needle)]
                self._seen = index + len(needle)
                return chunk.decode(errors="replace")
            remaining = deadline - time.monotonic()
            exited = not self._read(min(max(remaining, 0), 0.2)) and self.proc.poll() is not None
            if remaining <= 0 or (exited and self.output.find(needle, self._seen) < 0):
                why = "the process exited" if exited else f"not seen within {timeout:g} s"
                raise AssertionError(f"{text!r}: {why}; output so far:\n{self.output.decode(errors='replace')[-4000:]}")

    def settle(self, prompt: str, attempts: int = 20) -> None:
        """Make sure the program reads what we type: readline discards what was typed before it
        first set up the terminal. Press Enter until a fresh prompt answers, then skip past all
        output so far."""
        for _ in range(attempts):
            self.send("\r")
            try:
                self.expect(prompt, timeout=1.0)
            except AssertionError:
                if self.proc.poll() is not None:
                    raise
                continue
            while self._read(0.2):
                pass
            self._seen = len(self.output)
            return
        raise AssertionError(f"no fresh {prompt!r} after {attempts} presses of Enter")

    def send(self, text: str) -> None:
        """Type `text` as it is (no Enter)."""
        os.write(self.master, text.encode())

    def line(self, text: str) -> None:
        """Type a line and press Enter."""
        self.send(text + "\r")

    def interrupt(self) -> None:
        """Ctrl-C."""
        self.send("\x03")

    def interrupt_until(self, text: str, attempts: int = 5) -> str:
        """Ctrl-C until `text` appears. CPython's readline only notices a SIGINT that arrives
        while it waits in select(); one that lands while it is busy echoing typed characters is
        held until the next key, as it would be for a person."""
        for _ in range(attempts - 1):
            self.interrupt()
            try:
                return self.expect(text, timeout=2.0)
            except AssertionError:
                if self.proc.poll() is not None:
                    raise
        self.interrupt()
        return self.expect(text)

    def end_of_input(self) -> None:
        """Ctrl-D at an empty prompt."""
        self.send("\x04")

    def wait(self, timeout: float = 30.0) -> int:
        """Wait for the child to exit (draining its output); returns the exit code."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        while self._read(0.05):
            pass
        return self.proc.wait(max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        """Kill the child if it still runs and close the terminal."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        try:
            os.close(self.master)
        except OSError:
            pass
