"""Playwright (Python) on a BrowserRun: Debian's Chromium with our unpacked extension, for the
tests that drive the extension's own pages. Playwright supplies its own headless switch; the rest
of the command line is the one `tabwarden launch` uses."""

from __future__ import annotations

import os
import signal
from contextlib import contextmanager
from typing import Any, Iterator

from tests.support.browser import BrowserRun


@contextmanager
def extension_context(playwright: Any, run: BrowserRun, viewport: dict[str, int]) -> Iterator[Any]:
    """A persistent context on `run`'s profile with the extension loaded. On exit the browser is
    closed and any host it started that is still alive is ended by PID (hosts exit on EOF)."""
    from host.launch.flags import ALWAYS, HEADLESS

    args = [f"--load-extension={run.extension}", f"--disable-extensions-except={run.extension}", "--no-sandbox",
            *ALWAYS, *(flag for flag in HEADLESS if not flag.startswith("--headless"))]
    context = playwright.chromium.launch_persistent_context(
        str(run.profile), executable_path=run.binary, headless=True, env=run.env(), viewport=viewport, args=args)
    try:
        yield context
    finally:
        context.close()
        for pid in run.host_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
