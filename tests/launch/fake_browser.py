"""A stand-in browser process for launch's process handling (run as a script).

    fake_browser.py pipe      answer DevTools commands on fd 3/4 until fd 3 closes, then exit 0
    fake_browser.py group     start a "host" in its process group and a "helper" that leaves the
                              group (both sleep), print their pids, then wait for a signal
    fake_browser.py stubborn  like group, but ignore SIGTERM
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def serve_pipe() -> int:
    buffer = b""
    while True:
        chunk = os.read(3, 65536)
        if not chunk:
            return 0  # the launcher closed the pipe: a real browser exits here too
        buffer += chunk
        while b"\0" in buffer:
            raw, buffer = buffer.split(b"\0", 1)
            command = json.loads(raw)
            os.write(4, json.dumps({"method": "Target.noise", "params": {}}).encode() + b"\0")  # an event first
            if command["method"] == "Extensions.loadUnpacked":
                reply = {"id": command["id"], "result": {"id": "fake" + str(len(command["params"]["path"]))}}
            elif command["method"] == "Test.fds":
                keep = os.fstat(5) if _open(5) else None
                reply = {"id": command["id"], "result": {
                    "samePipe": keep is not None and keep.st_ino == os.fstat(3).st_ino,
                    "keepWritable": keep is not None and bool(os.get_blocking(5) is not None
                                                              and (os.O_WRONLY & _flags(5)))}}
            else:
                reply = {"id": command["id"], "error": {"code": -32601, "message": "nope"}}
            os.write(4, json.dumps(reply).encode() + b"\0")


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _flags(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_GETFL)


def serve_group(stubborn: bool) -> int:
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    host = subprocess.Popen(SLEEPER)
    helper = subprocess.Popen(SLEEPER, start_new_session=True)  # escapes the group: only the marker finds it
    print(json.dumps({"host": host.pid, "helper": helper.pid}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    mode = sys.argv[1]
    sys.exit(serve_pipe() if mode == "pipe" else serve_group(mode == "stubborn"))
