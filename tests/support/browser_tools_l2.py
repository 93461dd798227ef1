"""Helpers for the real-browser L2 tests: one browser per test module with the L2 fixture pages
on two ports (127.0.0.1 and, for cross-site frames, localhost), a driver that calls tools and
looks at pages over the test's own CDP connection, and a hook into the service worker to end
the debugger session the way the browser would."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from tests.support.browser_tools import Driver, Site, browser_site
from tests.support.cdp import evaluate_in_worker, evaluate_target
from tests.support.hosts import attach

DEEP_REF = re.compile(r"\[ref=(c[0-9a-z]+_\d+_\d+_\d+)\]")
L1_REF = re.compile(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]")


def l2_site(run_dir: Path) -> Iterator[Site]:
    """Two page servers and one browser with the extension (site access to both hosts)."""
    return browser_site(run_dir, ["http://127.0.0.1/*", "http://localhost/*"])


class L2Driver(Driver):
    """A Driver for the L2 fixture pages."""

    def l2_url(self, page: str, *, cross_site: bool = False, **query: str) -> str:
        """URL of an L2 fixture page with a fresh visit number, on localhost when `cross_site`."""
        Driver._visits += 1
        query = {**query, "visit": str(Driver._visits)}
        base = f"http://localhost:{self.site.other.port}" if cross_site else f"http://127.0.0.1:{self.site.main.port}"
        from urllib.parse import urlencode

        return f"{base}/l2/{page}?{urlencode(query)}"

    async def open_l2(self, page: str, **query: str) -> int:
        """Open an L2 fixture page in a fresh background tab; it becomes this thread's tab."""
        self.last_url = self.l2_url(page, **query)
        result = self.last_result = await self.ok("tab_open", url=self.last_url)
        tab_id = result["tabId"]
        await self.control.call("browser.bind_target", thread_id=self.thread_id, tab_id=tab_id)
        return tab_id

    async def open_fixture(self, path: str) -> int:
        """Open a fixture page (`path` under the fixture pages, e.g. `a11y/tree.html`) in a new
        background tab; it becomes this thread's tab."""
        result = await self.ok("tab_open", url=self.site.main.url(path))
        tab_id = result["tabId"]
        await self.control.call("browser.bind_target", thread_id=self.thread_id, tab_id=tab_id)
        return tab_id

    def other_site(self) -> str:
        """The base URL of the cross-site origin."""
        return f"http://localhost:{self.site.other.port}"

    async def deep(self, **params: Any) -> dict:
        """`read_page_deep`, which must succeed."""
        return await self.ok("read_page_deep", **params)

    last_url = ""
    last_result: dict = {}  # what the last open_l2's tab_open answered

    @property
    def visit(self) -> str:
        """The visit number of the page opened last (its frames carry it as `tag`)."""
        return self.last_url.rsplit("visit=", 1)[1]

    async def on_page(self, expression: str) -> Any:
        """Evaluate in the page opened last."""
        return await self.evaluate_in(self.last_url, expression)

    async def in_frame(self, name: str, expression: str) -> Any:
        """Evaluate in the out-of-process inner.html frame `name` (cross, nested) of the page opened last."""
        return await self.evaluate_in(f"tag={self.visit}&name={name}", expression)

    async def evaluate_in(self, url_part: str, expression: str) -> Any:
        """The JSON value of `expression` in the page or out-of-process frame whose URL contains
        `url_part` (the test's own CDP connection, independent of the tools)."""
        def pick(target: dict) -> bool:
            url = target.get("url", "")
            exact = url_part.startswith("http")  # a whole URL names one page; a part may match several
            return target.get("type") in ("page", "iframe") and (url == url_part if exact else url_part in url)

        return await evaluate_target(self._port, pick, expression)

    async def worker(self, expression: str) -> Any:
        """Evaluate `expression` in the extension's service worker (a test hook)."""
        return await evaluate_in_worker(self._port, expression)


def deep_ref(text: str, line_part: str) -> str:
    """The deep ref on the first line containing `line_part`."""
    for line in text.split("\n"):
        if line_part in line:
            match = DEEP_REF.search(line)
            if match:
                return match.group(1)
    raise AssertionError(f"no deep ref on a line containing {line_part!r} in:\n{text}")


async def new_l2_driver(site: Site, thread_id: str, policy: str | None = "auto") -> L2Driver:
    """An L2Driver with a fresh control client attached to the site's host."""
    control = await attach(timeout=30)
    return L2Driver(site, control, thread_id, policy)
