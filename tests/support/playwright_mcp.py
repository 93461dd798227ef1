"""`@playwright/mcp` from npm, run with `npx` over Streamable HTTP on a free 127.0.0.1 port,
driving its own headless Chromium (the system's, given by path): a real server that loads the
addresses its tools are given."""

from __future__ import annotations

import shutil
import tempfile

from tests.support.everything_server import EverythingServer, EverythingUnavailable

PLAYWRIGHT_MCP = "@playwright/mcp@0.0.86"  # pinned: the tests and benchmarks read its answers
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")

__all__ = ["PlaywrightMcpServer", "EverythingUnavailable"]


class PlaywrightMcpServer(EverythingServer):
    """`srv.start()`, `srv.url`, `srv.stop()`; the server and its browser are ours alone."""

    package = PLAYWRIGHT_MCP

    def __init__(self) -> None:
        super().__init__()
        # Its snapshots and logs go here, not into the folder the tests run from.
        self.output = tempfile.TemporaryDirectory(prefix="tabwarden-playwright-mcp-")

    def stop(self) -> None:
        super().stop()
        self.output.cleanup()

    def arguments(self) -> list[str]:
        browser = next((path for path in map(shutil.which, CHROMIUM) if path), None)
        if browser is None:
            raise EverythingUnavailable("no Chromium to drive")
        # --no-sandbox: Chromium refuses to start its sandbox as root (test containers).
        return [self.package, "--port", str(self.port), "--host", "127.0.0.1", "--headless", "--isolated",
                "--no-sandbox", "--output-dir", self.output.name, "--executable-path", browser]
