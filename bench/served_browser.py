"""A headless Chromium with the extension and our host, and a local server for the pages a
benchmark writes: the set-up the browser benchmarks share."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tests.support.browser import BrowserRun
from tests.support.hosts import tabwarden_home
from tests.support.pages import PageServer


@contextmanager
def served_browser(pages: Mapping[str, str]) -> Iterator[tuple[PageServer, BrowserRun]]:
    """Serve `pages` (file name -> HTML) on 127.0.0.1, start the browser with access to it, and
    point this process's host clients at its host; everything is stopped and removed after."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pages"
        root.mkdir()
        for name, html in pages.items():
            (root / name).write_text(html)
        with PageServer(root) as server:
            run = BrowserRun(Path(tmp) / "run", host_permissions=["http://127.0.0.1/*"])
            run.prepare()
            run.start()
            try:
                with tabwarden_home(run.tw_home):
                    yield server, run
            finally:
                run.stop()
