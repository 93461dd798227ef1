"""`@modelcontextprotocol/server-everything` from npm (the reference MCP server), run with `npx`
over Streamable HTTP on a free 127.0.0.1 port, for tests against a server we did not write. It
can be stopped and started again on the same port (a server restart: sessions forgotten)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator

from tests.support.mcp_server import free_port

# Pinned: the tests check this version's tools and answers.
PACKAGE = "@modelcontextprotocol/server-everything@2026.8.31"
START_TIMEOUT_S = 180.0  # the first run downloads the package


class EverythingUnavailable(RuntimeError):
    """npx is missing, or the package could not be fetched or started."""


class EverythingServer:
    """`srv.start()`, `srv.url`, `srv.stop()`, `srv.restart()`; the process is ours alone."""

    package = PACKAGE

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log: list[str] = []

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/mcp"

    def arguments(self) -> list[str]:
        """What npx runs (after `-y`): the package and its options."""
        return [self.package, "streamableHttp"]

    def start(self) -> None:
        npx = shutil.which("npx")
        if npx is None:
            raise EverythingUnavailable("npx is not installed")
        env = {**os.environ, "PORT": str(self.port), "npm_config_yes": "true", "npm_config_update_notifier": "false"}
        # Its own process group, so stopping it ends the node child of npx too.
        self.process = subprocess.Popen([npx, "-y", *self.arguments()], env=env, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.stderr else ""
                raise EverythingUnavailable(f"npx {self.package} exited with {self.process.returncode}: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise EverythingUnavailable(f"npx {self.package} did not listen on port {self.port} within {START_TIMEOUT_S:g} s")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)  # the group we created for it, nothing else
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        if process.stderr:
            process.stderr.close()

    def restart(self) -> None:
        """Stop and start again on the same port: every session is forgotten."""
        self.stop()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the old listener is gone before the new one binds
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    time.sleep(0.1)
            except OSError:
                break
        self.start()


def running_from_npm(server: EverythingServer, what: str) -> Iterator[EverythingServer]:
    """For a module fixture: `server` started, then stopped; the module is skipped with the reason
    when npx cannot fetch or start it."""
    import pytest

    try:
        server.start()
    except EverythingUnavailable as exc:
        pytest.skip(f"{what} cannot be started from npm: {exc}")
    try:
        yield server
    finally:
        server.stop()
