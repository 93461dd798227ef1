"""The settings page's providers section in headless Chromium (Playwright) against the real host:
Remove… asks in the row (keeping comes first), removing the default says that none is the
default now, the provider and its stored key are gone from the host (read back over the control
socket, as the REPL does), and a removal the host refuses is shown with its reason."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from install.extension_id import default_extension_id
from tests.support.browser import ROOT, BrowserRun
from tests.support.hosts import control_call
from tests.support.playwright_run import extension_context

pytestmark = pytest.mark.browser

SHOTS = ROOT / "test-output" / "settings-providers"
WAIT_MS = 30_000
PROVIDERS = ("home", "spare", "work")


@dataclass
class Site:
    run: BrowserRun
    page: Any

    def control(self, method: str, **params: Any) -> Any:
        """One control-socket call, as the REPL makes it."""
        return control_call(self.run.tw_home, method, **params)

    def row(self, name: str) -> Any:
        return self.page.locator(f"#providers tbody tr[data-provider='{name}']")

    def keys(self) -> dict[str, str]:
        path = self.run.tw_home / "data" / "secrets" / "provider-keys.json"
        return json.loads(path.read_text()) if path.exists() else {}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    run = BrowserRun(tmp_path_factory.mktemp("settings-providers") / "run")
    run.prepare()
    with sync_playwright() as playwright, \
            extension_context(playwright, run, {"width": 1100, "height": 900}) as context:
        page = context.new_page()
        page.goto(f"chrome-extension://{default_extension_id()}/ui/settings.html")
        page.wait_for_selector("#providers", timeout=WAIT_MS)
        yield Site(run, page)


def test_removing_the_default_provider_asks_first_and_takes_its_key(site):
    from playwright.sync_api import expect

    page = site.page
    for name in PROVIDERS:
        site.control("engine.set_provider", name=name, kind="openai", base_url="http://127.0.0.1:9/v1", model="m-1",
                     api_key=f"sk-{name}", default=name == "work")
    page.reload()
    expect(site.row("work").locator(".badge")).to_have_text("default")
    assert set(site.keys()) == set(PROVIDERS)

    remove = site.row("work").get_by_role("button", name="Remove the provider “work”…")
    confirm = site.row("work").get_by_role("group", name="Remove “work” and its stored API key? This cannot be undone.")
    remove.click()
    expect(confirm).to_be_visible()
    keep = confirm.get_by_role("button", name="Keep it")
    expect(keep).to_be_focused()
    SHOTS.mkdir(parents=True, exist_ok=True)
    site.row("work").screenshot(path=str(SHOTS / "remove-confirm.png"))
    keep.click()
    expect(confirm).to_have_count(0)
    expect(remove).to_be_focused()
    assert set(site.keys()) == set(PROVIDERS)  # keeping it changed nothing

    remove.click()
    confirm.get_by_role("button", name="Remove", exact=True).click()
    expect(page.locator("#providers p.status")).to_have_text(
        "Removed “work” and its stored API key. It was the default: no provider is the default now; choose one "
        "with Make default before the next task.")
    expect(site.row("work")).to_have_count(0)
    expect(page.locator("#providers .badge")).to_have_count(0)
    status = site.control("engine.configure")
    assert status["providers"] == ["home", "spare"] and status["defaultProvider"] is None
    assert set(site.keys()) == {"home", "spare"}


def test_a_removal_the_host_refuses_is_shown_with_its_reason(site):
    from playwright.sync_api import expect

    page = site.page
    site.control("engine.set_provider", name="gone", kind="openai", base_url="http://127.0.0.1:9/v1", model="m-1",
                 default=False)
    page.reload()
    site.row("gone").get_by_role("button", name="Remove the provider “gone”…").click()
    # Removed behind the page's back (an edit of engine.json) while it asks: its removal names nothing.
    engine_json = site.run.tw_home / "config" / "engine.json"
    data = json.loads(engine_json.read_text())
    del data["providers"]["gone"]
    engine_json.write_text(json.dumps(data))
    site.row("gone").get_by_role("button", name="Remove", exact=True).click()
    expect(page.locator("#providers p.status")).to_have_text(
        "Not removed: there is no provider named 'gone' (providers: home, spare) - at `$.name`")
    expect(page.locator("#providers p.status")).to_have_class("status small bad")
    expect(site.row("gone")).to_be_visible()  # still listed until the page learns otherwise: nothing was lost
