"""Host cold start: process start to the first framed reply (a pong), next to the interpreter's
own start and `import msgspec`, all measured in this run. Target: <= 3x the msgspec baseline."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from bench.common import median, table
from install.extension_id import default_extension_id
from protocol.framing import FrameSplitter, browser_encoder

RUNS = 20


def time_command(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - started


def time_first_reply(env: dict[str, str]) -> float:
    ping = b"".join(browser_encoder().encode(__import__("protocol.messages", fromlist=["Ping"]).Ping(id=1)))
    origin = f"chrome-extension://{default_extension_id()}/"
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-I", "-m", "host", "host", origin], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(ping)
    proc.stdin.flush()
    splitter = FrameSplitter()
    while not splitter.feed(proc.stdout.read1(65536)):
        pass
    elapsed = time.perf_counter() - started
    proc.stdin.close()
    proc.wait(10)
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TABWARDEN_HOME=home)
        python = [sys.executable, "-I", "-c"]
        rows = []
        base = [time_command(python + ["pass"], env) for _ in range(RUNS)]
        msgspec_ = [time_command(python + ["import msgspec"], env) for _ in range(RUNS)]
        host = [time_first_reply(env) for _ in range(RUNS)]
        anchor = median(msgspec_)
        for name, samples in (("python -c pass", base), ("python -c 'import msgspec'", msgspec_),
                              ("tabwarden host: start -> first pong", host)):
            rows.append((name, median(samples) * 1000, median(samples) / anchor))
        print(f"Host cold start, median of {RUNS} runs (anchor: import msgspec)")
        print(table(("what", "median ms", "x msgspec"), rows))
        ratio = median(host) / anchor
        print(f"target <= 3.0x msgspec: {'met' if ratio <= 3 else 'NOT met'} ({ratio:.2f}x)")


if __name__ == "__main__":
    main()
