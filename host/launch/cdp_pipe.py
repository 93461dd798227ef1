"""Loading the unpacked extension over the browser's debugging pipe, for browsers that ignore
`--load-extension` (branded Chrome): `--remote-debugging-pipe` makes the browser read DevTools
commands on fd 3 and answer on fd 4, NUL-terminated JSON each; `Extensions.loadUnpacked`
(allowed by `--enable-unsafe-extension-debugging`) loads the folder with its usual id.

The browser exits when the command pipe closes. A launch that leaves the browser running
(`--keep`) therefore also hands the browser a copy of the pipe's write end (fd 5), so the pipe
never reaches end-of-file when we go.

POSIX only: Windows cannot pass extra file descriptors to a child this way.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import time

from host.launch.errors import LaunchError
from typing import Any

BROWSER_IN, BROWSER_OUT, KEEP_OPEN = 3, 4, 5


class PipeError(LaunchError):
    """The debugging pipe failed or the browser refused the command."""


class DebugPipe:
    """Our end of a browser's debugging pipe."""

    def __init__(self, keep_open_after_exit: bool = False):
        self._commands_read, self._commands_write = os.pipe()
        self._replies_read, self._replies_write = os.pipe()
        self._keep = keep_open_after_exit
        self._buffer = b""
        self._ids = 0

    @property
    def child_fds(self) -> tuple[int, ...]:
        """The descriptor numbers the child keeps (for `pass_fds`)."""
        return (BROWSER_IN, BROWSER_OUT, KEEP_OPEN) if self._keep else (BROWSER_IN, BROWSER_OUT)

    def in_child(self) -> None:
        """`preexec_fn`: put the browser's ends on fds 3 and 4 (and 5, see the module doc)."""
        sources = [self._commands_read, self._replies_write] + ([self._commands_write] if self._keep else [])
        # Move everything above the targets first, so no dup2 overwrites a source still needed.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in sources]
        for fd, target in zip(high, self.child_fds):
            os.dup2(fd, target)

    def after_start(self) -> None:
        """Close the browser's ends in this process once the child has them."""
        for fd in (self._commands_read, self._replies_write):
            os.close(fd)

    def call(self, method: str, params: dict[str, Any], timeout: float = 30.0) -> Any:
        """Send one command and wait for its reply; raises PipeError."""
        self._ids += 1
        message_id = self._ids
        data = json.dumps({"id": message_id, "method": method, "params": params}).encode() + b"\0"
        try:
            os.write(self._commands_write, data)
        except OSError as exc:
            raise PipeError(f"the browser's debugging pipe is closed ({exc.strerror})") from None
        deadline = time.monotonic() + timeout
        while True:
            reply = self._next_message(deadline)
            if reply.get("id") != message_id:
                continue  # an event, or a reply to something else
            if "error" in reply:
                error = reply["error"]
                raise PipeError(f"{method} failed: {error.get('message', error)}")
            return reply.get("result")

    def _next_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PipeError("no answer on the debugging pipe in time")
            ready, _, _ = select.select([self._replies_read], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self._replies_read, 65536)
            if not chunk:
                raise PipeError("the browser closed its debugging pipe (did it exit?)")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        try:
            return json.loads(raw)
        except ValueError:
            raise PipeError("the browser sent something that is not JSON on the debugging pipe") from None

    def close(self) -> None:
        """Close our ends (the browser then exits, unless it holds the keep-open copy)."""
        for fd in (self._commands_write, self._replies_read):
            try:
                os.close(fd)
            except OSError:
                pass


def load_unpacked(pipe: DebugPipe, extension: str, timeout: float = 30.0) -> str:
    """Load the unpacked extension folder; returns the id the browser gave it."""
    result = pipe.call("Extensions.loadUnpacked", {"path": extension}, timeout)
    extension_id = result.get("id") if isinstance(result, dict) else None
    if not isinstance(extension_id, str):
        raise PipeError(f"Extensions.loadUnpacked answered {result!r}")
    return extension_id
