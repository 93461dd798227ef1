"""The side panel against the real host in headless Chromium (Playwright), for the test modules
that drive it: `open_site` starts one browser with the unpacked extension, a fixture web form,
a second page server for pages a test writes, a fake OpenAI-compatible model and the panel
page; `read_then` and `Act` script the model's turn. Screenshots go to test-output/<name>/ at
the repository root (ignored by git)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from install.extension_id import default_extension_id
from tests.support.browser import ROOT, BrowserRun
from tests.support.fake_model import FakeOpenAI, Reply, tool_results
from tests.support.hosts import write_settings
from tests.support.pages import PageServer
from tests.support.playwright_run import extension_context

REF = r"\[ref=(s[0-9a-z]+_\d+_\d+)\]"
WAIT_MS = 30_000


def latest_ref(results: list[str], line_part: str) -> str:
    """The ref of the element on a line containing `line_part`, from the newest answer that shows
    one (a write's answer lists only the refs that are new; the others stay valid)."""
    for text in reversed(results):
        for line in text.split("\n"):
            found = re.search(REF, line) if line_part in line else None
            if found:
                return found.group(1)
    raise AssertionError(f"no ref for {line_part!r}")


def allow_for_the_task(panel: Any, card: Any) -> None:
    """Answer `card` "Allow for this task" by keyboard, as a person must (no letter grants):
    the focus on that button, its keys live (the card shows its key letters), then Enter."""
    from playwright.sync_api import expect

    card.locator("button[data-kind=acceptForSession]").focus()
    expect(card).to_have_class(re.compile(r"\bkeys-live\b"))
    panel.keyboard.press("Enter")


@dataclass(frozen=True)
class Act:
    """One scripted model step after the read: say `say` and call `tool` on the element whose line
    in the newest snapshot contains `line`, with `params` besides `element` and `ref`."""

    say: str
    tool: str
    element: str
    line: str
    params: dict[str, Any] = field(default_factory=dict)


def read_then(read_text: str, *acts: Act, done: Any) -> tuple:
    """The model's replies for a whole turn: read the page, do each act in turn, then answer `done`
    (a text, or a function of the last tool result)."""

    def script(body):
        results = tool_results(body)
        if not results:
            return Reply(text=read_text, tool_calls=[("read_page", {})])
        if len(results) <= len(acts):
            act = acts[len(results) - 1]
            return Reply(text=act.say, tool_calls=[(act.tool, {"element": act.element, "ref": latest_ref(results, act.line),
                                                                **act.params})])
        return Reply(text=done(results[-1]) if callable(done) else done)

    return (script,) * (len(acts) + 2)


@dataclass
class Site:
    run: BrowserRun
    pages: PageServer
    web: PageServer
    web_dir: Path
    model: FakeOpenAI
    context: Any
    panel: Any
    form: Any
    shots: Path  # where this module's screenshots go

    @property
    def origin(self) -> str:
        return self.pages.url("")[:-1]

    def shot(self, page: Any, name: str, *, dark: bool = False, full: bool = False) -> Path:
        self.shots.mkdir(parents=True, exist_ok=True)
        path = self.shots / f"{name}-{'dark' if dark else 'light'}.png"
        page.emulate_media(color_scheme="dark" if dark else "light")
        page.screenshot(path=str(path), full_page=full)
        page.emulate_media(color_scheme="light")
        return path

    def extension_page(self, path: str) -> Any:
        page = self.context.new_page()
        page.goto(f"chrome-extension://{default_extension_id()}/ui/{path}")
        page.wait_for_selector("body[data-engine=ready]" if path.startswith("sidepanel") else "#rules tbody tr",
                               timeout=WAIT_MS)
        return page

    def new_task(self, text: str, tab: Any = None) -> None:
        # The task's tab is the web page the user looked at last (the panel is a tab here).
        (tab or self.form).bring_to_front()
        panel = self.panel
        panel.bring_to_front()
        panel.click("#new-thread")
        from playwright.sync_api import expect

        expect(panel.locator("#policy")).to_have_value("untrusted")  # a new thread starts from the default
        panel.fill("#message", text)
        panel.press("#message", "Enter")

    def notifications(self) -> list[str]:
        from playwright.sync_api import Error

        for worker in reversed(self.context.service_workers):  # a stopped worker is replaced by a new one
            try:
                ids = worker.evaluate("chrome.notifications.getAll().then(Object.keys)")
            except Error:
                continue
            return [n for n in ids if n.startswith("tabwarden-approval|")]
        return []


@contextmanager
def open_site(folder: Path, shots: str, viewport: dict[str, int] | None = None,
              mcp: dict[str, Any] | None = None) -> Iterator[Site]:
    """One browser for a test module: the form page open in a tab, the panel in another (as a
    page of its own, `viewport` sized), screenshots under test-output/`shots`/; `mcp`: the
    servers of the host's mcp.json."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    (folder / "web").mkdir()
    with PageServer() as pages, PageServer(folder / "web") as web, FakeOpenAI() as model:
        run = BrowserRun(folder / "run", host_permissions=["http://127.0.0.1/*"])
        run.prepare()
        write_settings(run.tw_home, model.url)
        # An administrator's rule: shown in settings, locked.
        managed = run.tw_home / "managed" / "policy.json"
        managed.parent.mkdir(parents=True)
        managed.write_text(json.dumps({"version": 1, "rules": [{"tool": "download", "origin": "*", "verdict": "deny"}]}))
        if mcp is not None:
            (run.tw_home / "config").mkdir(parents=True, exist_ok=True)
            (run.tw_home / "config" / "mcp.json").write_text(json.dumps({"servers": mcp}))
        with sync_playwright() as playwright, \
                extension_context(playwright, run, viewport or {"width": 460, "height": 900}) as context:
            form = context.new_page()
            form.goto(pages.url("l1/form.html"))
            site = Site(run, pages, web, folder / "web", model, context, None, form, ROOT / "test-output" / shots)
            site.panel = site.extension_page("sidepanel.html")
            yield site
