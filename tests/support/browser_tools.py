"""Helpers for the real-browser tests of the browser tools: one browser per test module with two
fixture origins, a control client, and a driver that calls tools and inspects pages over CDP."""

from __future__ import annotations

import asyncio
import os
import re
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator

from host.builtins.netguard import TEST_HOOKS_ENV
from tests.support.browser import BrowserRun
from tests.support.cdp import PageSession, debugging_port, evaluate_in_content_world, evaluate_in_worker, page_targets
from tests.support.engine_control import open_tab
from tests.support.hosts import attach, tabwarden_home, write_settings
from tests.support.pages import FIXTURES, PageServer
from tests.support.waiting import until

L1_PAGES = FIXTURES / "l1"


@contextmanager
def hooks_enabled() -> Iterator[None]:
    """Let the host serve `test.content_call` (the browser and its host inherit our environment)."""
    old = os.environ.get(TEST_HOOKS_ENV)
    os.environ[TEST_HOOKS_ENV] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(TEST_HOOKS_ENV, None)
        else:
            os.environ[TEST_HOOKS_ENV] = old


class Site:
    """A browser run with two fixture origins (127.0.0.1 on two ports)."""

    def __init__(self, run: BrowserRun, main: PageServer, other: PageServer):
        self.run = run
        self.main = main
        self.other = other

    def url(self, page: str, **query: str) -> str:
        """URL of an L1 fixture page on the main origin (`{OTHER}` in a query value becomes the
        other origin's host and port, without a scheme: a whole URL in a query is judged as a
        destination of its own, and the pages add the scheme)."""
        return self._with_query(self.main.url(f"l1/{page}"), query)

    def other_url(self, page: str, **query: str) -> str:
        """URL of an L1 fixture page on the other origin (query as for `url`)."""
        return self._with_query(self.other.url(f"l1/{page}"), query)

    def _with_query(self, url: str, query: dict[str, str]) -> str:
        if not query:
            return url
        from urllib.parse import urlencode

        other = self.other.url("")[:-1].split("://", 1)[1]
        values = {k: v.replace("{OTHER}", other) for k, v in query.items()}
        return f"{url}?{urlencode(values)}"


def l1_site(run_dir: Path) -> Iterator[Site]:
    """Start the two page servers and one browser (host permission for 127.0.0.1)."""
    return browser_site(run_dir, ["http://127.0.0.1/*"])


@contextmanager
def browser_site(run_dir: Path, host_permissions: list[str], model_url: str | None = None,
                 root: Path = FIXTURES) -> Iterator[Site]:
    """Two page servers of `root` and one browser with the extension, granted `host_permissions`
    (and, with `model_url`, an engine that talks to that fake model); the browser's diagnostics
    are printed when the tests inside fail."""
    with PageServer(root) as main, PageServer(root) as other, hooks_enabled(), \
            running_browser(run_dir, host_permissions, model_url=model_url) as run:
        yield Site(run, main, other)


@contextmanager
def running_browser(run_dir: Path, host_permissions: list[str], *, browser_args: list[str] | None = None,
                    model_url: str | None = None, start_url: str = "about:blank") -> Iterator[BrowserRun]:
    """One browser with the extension and its host, granted `host_permissions` (with
    `browser_args`, and with `model_url` an engine that talks to that fake model), the host's home
    this process's for the time inside; its diagnostics are printed when the code inside fails."""
    run = BrowserRun(run_dir, host_permissions=host_permissions, start_url=start_url, browser_args=browser_args)
    run.prepare()
    if model_url is not None:
        write_settings(run.tw_home, model_url)
    run.start()
    with tabwarden_home(run.tw_home):
        try:
            yield run
        except BaseException:
            print(run.diagnostics())
            raise
        finally:
            run.stop()


class Driver:
    """Calls tools on the running host (as one thread) and looks at pages over CDP."""

    _visits = 0

    def __init__(self, site: Site, control: Any, thread_id: str = "t1", policy: str | None = "auto"):
        self.site = site
        self.control = control
        self.thread_id = thread_id
        self.policy = policy
        self._port = debugging_port(site.run.profile)

    async def call(self, tool: str, *, thread_id: str | None = None, policy: str | None = "", **params: Any) -> dict:
        """Run a tool; returns the ToolResult as a dict (ok, text, error, details...)."""
        chosen = self.policy if policy == "" else policy
        args: dict[str, Any] = {"tool": tool, "params": params, "thread_id": thread_id or self.thread_id}
        if chosen is not None:
            args["policy"] = chosen
        return await self.control.call("tools.call", **args)

    async def ok(self, tool: str, **params: Any) -> dict:
        """Run a tool that must succeed."""
        result = await self.call(tool, **params)
        assert result["ok"], result
        return result

    async def open(self, page: str, *, on_other_origin: bool = False, **query: str) -> int:
        """Open a fixture page in a new background tab (a fresh one: the URL carries a unique
        `visit` number) and make it this thread's tab."""
        Driver._visits += 1
        query = {**query, "visit": str(Driver._visits)}
        url = self.site.other_url(page, **query) if on_other_origin else self.site.url(page, **query)
        result = await self.ok("tab_open", url=url)
        tab_id = result["tabId"]
        await self.control.call("browser.bind_target", thread_id=self.thread_id, tab_id=tab_id)
        return tab_id

    async def page(self, url_part: str) -> PageSession:
        """A CDP session on the page whose URL contains `url_part`."""
        return await PageSession.open(self._port, url_part)

    async def evaluate(self, url_part: str, expression: str) -> Any:
        """The JSON value of `expression` in the page whose URL contains `url_part`."""
        session = await self.page(url_part)
        try:
            return await session.evaluate(expression)
        finally:
            await session.close()

    async def read(self, **params: Any) -> dict:
        """`read_page`, which must succeed."""
        return await self.ok("read_page", **params)


def ref_of(text: str, line_part: str) -> str:
    """The ref on the first snapshot line containing `line_part`."""
    for line in text.split("\n"):
        if line_part in line:
            match = re.search(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]", line)
            if match:
                return match.group(1)
    raise AssertionError(f"no ref on a line containing {line_part!r} in:\n{text}")


async def new_driver(site: Site, thread_id: str = "t1", policy: str | None = "auto") -> Driver:
    """A Driver with a fresh control client attached to the site's host."""
    control = await attach(timeout=30)
    return Driver(site, control, thread_id, policy)


def module_fixtures(start_site: Any, new_driver: Any, folder: str) -> tuple[Any, Any]:
    """A test module's fixtures: `site` (one browser and its page servers for the whole module,
    started by `start_site` in a fresh `folder`) and `driver` (a control client per test, acting
    as a thread named after the test). Use as `site, driver = module_fixtures(...)`."""
    import pytest

    @pytest.fixture(scope="module")
    def site(tmp_path_factory):
        with start_site(tmp_path_factory.mktemp(folder)) as running:
            yield running

    @pytest.fixture
    async def driver(site, request):
        made = await new_driver(site, thread_id=request.node.name[:100])
        yield made
        await made.control.close()

    return site, driver


# Whether the page's isolated world holds the executor, and whether its takeover watcher reports.
EXECUTOR_AND_WATCH = """[!!(globalThis.__tabwarden && globalThis.__tabwarden.parts.has("executor")),
  !!(globalThis.__tabwardenWatch && globalThis.__tabwardenWatch.armed())]"""


async def a_person_opens(driver: Driver, url_part: str, url: str) -> list[bool]:
    """Open `url` in a new tab as a person would (not through the agent); once it has loaded and
    the browser had its moment to add scripts at idle, `EXECUTOR_AND_WATCH` there."""
    port = debugging_port(driver.site.run.profile)
    open_tab(port, url)

    async def loaded() -> bool:
        return any(url_part in t.get("url", "") for t in page_targets(port)) \
            and await driver.evaluate(url_part, "document.readyState") == "complete"

    await until(loaded, 5, f"the page {url_part} loaded", interval=0.05)
    await asyncio.sleep(0.5)
    return await evaluate_in_content_world(port, url_part, EXECUTOR_AND_WATCH)


async def named_driver(env: Any, request: Any) -> AsyncIterator[Driver]:
    """A Driver for a test of a module whose fixture `env` has the browser `run` (only that is
    used), acting as a thread named after the test. Use as `driver = pytest.fixture(named_driver)`."""
    control = await attach(timeout=30)
    yield Driver(env, control, request.node.name[:100])
    await control.close()


# Records every `chrome.scripting.executeScript` of the worker: the files it injects, the
# documents it targets, whether it goes in at once.
RECORD_INJECTIONS = """(() => {
  const scripting = chrome.scripting;
  if (!scripting.__plain) {
    scripting.__plain = scripting.executeScript;
    scripting.executeScript = (options) => {
      const target = options.target || {};
      globalThis.__injections.push({ files: options.files || [], documentIds: target.documentIds || [],
                                     immediately: !!options.injectImmediately });
      return scripting.__plain.call(scripting, options);
    };
  }
  globalThis.__injections = [];
  return true;
})()"""
STOP_RECORDING_INJECTIONS = """(() => {
  const scripting = chrome.scripting;
  if (scripting.__plain) { scripting.executeScript = scripting.__plain; delete scripting.__plain; }
  return true;
})()"""


@asynccontextmanager
async def worker_injections(port: int) -> AsyncIterator[Callable[[], Awaitable[list[dict[str, Any]]]]]:
    """While inside, the worker's injections are recorded; what this yields returns them so far
    (each `{files, documentIds, immediately}`)."""
    await evaluate_in_worker(port, RECORD_INJECTIONS)
    try:
        yield lambda: evaluate_in_worker(port, "globalThis.__injections")
    finally:
        await evaluate_in_worker(port, STOP_RECORDING_INJECTIONS)
