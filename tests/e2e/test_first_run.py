"""The side panel's first run in headless Chromium (Playwright) with the real host.

The browser starts before the host is registered: the banner says to run `tabwarden install`
(then `tabwarden doctor`), and a message sent meanwhile stays on screen marked queued; once the
host is registered it is sent, and with no model set up the panel says once what to do. The
empty thread shows the model in use (or "Add a model", which opens Settings → Model providers),
the current site's access with a button that asks Chrome for it, and example tasks that fill the
composer. Screenshots of the empty panel at 360 px go to test-output/first-run/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from install.extension_id import default_extension_id
from tests.support.browser import BrowserRun
from tests.support.hosts import control_call
from tests.support.pages import PageServer
from tests.support.playwright_run import extension_context
from tests.support.screenshots import save_shots

pytestmark = pytest.mark.browser

WAIT_MS = 45_000  # the worker retries a missing host with a growing backoff


@dataclass
class Site:
    run: BrowserRun
    granted: PageServer  # a site the extension may act on
    other: PageServer  # a site it has no access to yet
    context: Any
    panel: Any
    web: Any

    def show(self, page: Any) -> None:
        """Make `page` the web page the user looked at last, then come back to the panel."""
        page.bring_to_front()
        self.panel.bring_to_front()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    folder = tmp_path_factory.mktemp("first-run")
    with PageServer() as granted, PageServer(host="127.0.0.2") as other:
        run = BrowserRun(folder / "run", host_permissions=["http://127.0.0.1/*"])
        run.prepare()
        run.cli("uninstall", "--user-data-dir", str(run.profile))  # as on a machine where it never ran
        with sync_playwright() as playwright, \
                extension_context(playwright, run, {"width": 360, "height": 720}) as context:
            web = context.new_page()
            web.goto(granted.url("l1/form.html"))
            panel = context.new_page()
            panel.goto(f"chrome-extension://{default_extension_id()}/ui/sidepanel.html")
            yield Site(run, granted, other, context, panel, web)


@pytest.fixture
def registered(site):
    """The site with the host registered: the first test registers it as a user would, and a
    test run without it registers it here."""
    from playwright.sync_api import expect

    if site.panel.locator("body").get_attribute("data-engine") != "ready":
        site.run.cli("install", "--user-data-dir", str(site.run.profile))
        expect(site.panel.locator("body")).to_have_attribute("data-engine", "ready")
    return site


def test_without_a_registered_host_the_banner_says_to_install_and_a_message_waits_queued(site):
    from playwright.sync_api import expect

    panel = site.panel
    banner = panel.locator("#link")
    expect(banner).to_contain_text("not registered with this browser")
    expect(banner).to_contain_text("`tabwarden install`")
    expect(banner).to_contain_text("`tabwarden doctor`")
    expect(banner).not_to_contain_text("Specified native messaging host not found")
    save_shots(panel, "first-run", "host-not-registered-360")

    panel.fill("#message", "Summarize this page.")
    panel.press("#message", "Enter")
    queued = panel.locator(".item.user.pending")
    expect(queued).to_have_count(1)
    expect(queued.locator(".text")).to_have_text("Summarize this page.")
    expect(queued.locator(".pending-marker")).to_have_text("queued: sent when the host connects")
    expect(panel.locator("#message")).to_have_value("")
    save_shots(panel, "first-run", "queued-360")

    site.run.cli("install", "--user-data-dir", str(site.run.profile))
    expect(panel.locator("body")).to_have_attribute("data-engine", "ready")
    expect(banner).to_be_hidden()
    expect(queued).to_have_count(0)
    expect(panel.locator(".item.user:not(.pending) .text")).to_have_text(["Summarize this page."])

    # No model is set up: one message says what to do (not the error, its notice and a stop line).
    missing = panel.locator(".model-missing")
    expect(missing).to_have_count(1)
    expect(missing).to_contain_text("Add a model in Settings → Model providers")
    expect(panel.locator(".item.notice")).to_have_count(1)
    expect(panel.locator("#log")).not_to_contain_text("engine.json")
    save_shots(panel, "first-run", "no-model-message-360")


def test_an_empty_thread_without_a_model_offers_to_add_one(registered):
    from playwright.sync_api import expect

    site = registered
    panel = site.panel
    panel.click("#new-thread")
    model = panel.locator(".first-run .first-model")
    expect(model).to_have_attribute("data-state", "missing")
    expect(model).to_contain_text("No model is set up yet.")
    save_shots(panel, "first-run", "empty-no-model-360")
    with site.context.expect_page() as opened:
        model.get_by_role("button", name="Add a model").click()
    settings = opened.value
    settings.wait_for_load_state()
    assert settings.url.endswith("/ui/settings.html#providers")
    settings.close()


def test_the_empty_thread_shows_the_sites_access_and_asks_chrome_for_it(registered):
    from playwright.sync_api import expect

    site = registered
    panel = site.panel
    site.show(site.web)
    chip = panel.locator(".first-run .first-site")
    host = site.granted.url("")[len("http://"):-1]
    expect(chip).to_have_attribute("data-state", "granted")
    expect(chip).to_have_text(f"Tabwarden can act on {host}")

    other = site.context.new_page()
    other.goto(site.other.url("l1/form.html"))
    site.show(other)
    other_host = site.other.url("")[len("http://"):-1]
    expect(chip).to_have_attribute("data-state", "missing")
    expect(chip.locator(".chip")).to_have_text(f"No access to {other_host} yet")
    # The button asks Chrome, whose own prompt (which a test cannot answer) decides.
    chip.get_by_role("button", name=f"Allow on {other_host}").click()
    expect(panel.locator(".first-site-row [role=status]")).to_have_text(
        f"Chrome asks you to allow access to http://{other_host}: answer its prompt.")
    save_shots(panel, "first-run", "empty-site-missing-360")
    other.close()
    site.show(site.web)
    expect(chip).to_have_attribute("data-state", "granted")


def test_the_empty_thread_shows_the_model_in_use_and_examples_fill_the_composer(registered):
    from playwright.sync_api import expect

    site = registered
    panel = site.panel
    control_call(site.run.tw_home, "engine.op", op={
        "type": "providers.save", "submissionId": "first-run-provider", "name": "work", "kind": "openai",
        "baseUrl": "http://127.0.0.1:9/v1", "model": "gpt-test", "makeDefault": True})
    model = panel.locator(".first-run .first-model")
    expect(model).to_have_attribute("data-state", "ready")
    expect(model.locator(".chip")).to_have_text("Model: work · gpt-test")

    examples = panel.locator(".first-run .examples button")
    expect(examples).to_have_count(3)
    first = examples.first.inner_text()
    examples.first.click()
    expect(panel.locator("#message")).to_have_value(first)
    expect(panel.locator("#message")).to_be_focused()
    panel.fill("#message", "")
    save_shots(panel, "first-run", "empty-360")
