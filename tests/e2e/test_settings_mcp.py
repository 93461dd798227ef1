"""The settings page's MCP servers section in headless Chromium (Playwright) against the real host
and a real local MCP server (uvicorn on 127.0.0.1, one that demands a bearer token).

A server added from the page lands in the host's mcp.json and connects; without its token it
fails with the server's 401 shown as `mcp_auth_failed`; the token set from the page goes to the
host's key store (the page only learns "Token stored") and the server then connects and lists
its tools as the model sees them. An edit (an allow-list) reconnects with fewer tools; a bad URL
is refused beside the form with the field's path, the typed text kept and the file unchanged.
The "add a rule" hint fills the Permission rules form. A token set from the REPL appears without
a reload. Removing asks first, then the server and its stored token are gone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pytest

from install.extension_id import default_extension_id
from tests.support.browser import ROOT, BrowserRun
from tests.support.fake_model import FakeOpenAI
from tests.support.hosts import control_call, tabwarden_home, write_settings
from tests.support.mcp_server import McpTestServer
from tests.support.playwright_run import extension_context

pytestmark = pytest.mark.browser

SHOTS = ROOT / "test-output" / "settings-mcp"
WAIT_MS = 30_000
TOKEN = "mcp-t0ken-e2e"


@dataclass
class Site:
    run: BrowserRun
    server: McpTestServer
    page: Any

    def control(self, method: str, **params: Any) -> Any:
        """One control-socket call, as the REPL makes it."""
        return control_call(self.run.tw_home, method, **params)

    def file(self) -> dict[str, Any] | None:
        """The host's mcp.json (None while there is none)."""
        path = self.run.tw_home / "config" / "mcp.json"
        return json.loads(path.read_text()) if path.exists() else None

    def stored_token(self, server: str) -> str | None:
        """What the host's key store holds for the server (the file store of a TABWARDEN_HOME)."""
        from host.providers.secrets import default_key_store

        with tabwarden_home(self.run.tw_home):
            return default_key_store().get(f"mcp:{server}:bearer")

    def card(self, server: str) -> Any:
        return self.page.locator(f"#mcp article[data-server='{server}']")

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        section = self.page.locator("#mcp")
        section.scroll_into_view_if_needed()
        for scheme in ("light", "dark"):
            self.page.emulate_media(color_scheme=scheme)
            section.screenshot(path=str(SHOTS / f"{name}-{scheme}.png"))
        self.page.emulate_media(color_scheme="light")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    folder = tmp_path_factory.mktemp("settings-mcp")
    with FakeOpenAI() as model, McpTestServer(token=TOKEN) as server:
        run = BrowserRun(folder / "run")
        run.prepare()
        write_settings(run.tw_home, model.url)
        with sync_playwright() as playwright, \
                extension_context(playwright, run, {"width": 1100, "height": 1000}) as context:
            page = context.new_page()
            page.goto(f"chrome-extension://{default_extension_id()}/ui/settings.html")
            page.wait_for_selector("#mcp[aria-busy=false]", timeout=WAIT_MS)
            yield Site(run, server, page)


def test_a_server_is_added_connected_edited_and_removed_from_the_page(site):
    from playwright.sync_api import expect

    page, server = site.page, site.server
    section = page.locator("#mcp")
    expect(section).to_contain_text("No MCP server yet.")
    expect(page.locator("#mcp-judged")).to_contain_text("treated as a change (a write)")

    # Added: written to mcp.json, then connected in the background: the server wants a token.
    page.fill("#mcp-id", "local")
    page.fill("#mcp-url", server.url)
    section.get_by_role("button", name="Add server").click()
    card = site.card("local")
    expect(card.locator(".mcp-state")).to_have_text("Failed")
    expect(card.locator(".mcp-error")).to_contain_text("mcp_auth_failed")
    expect(card.locator("strong").first).to_have_text(server.origin)  # the origin stands out
    expect(card.locator(".mcp-url")).to_have_text(server.url)
    expect(card.locator(".mcp-facts")).to_contain_text("0 tools · No token")
    expect(page.locator("#mcp-id")).to_have_value("")
    assert site.file() == {"servers": {"local": {"url": server.url, "enabled": True}}}

    # The token: typed, stored by the host, never shown; the server then connects.
    token = card.get_by_label("Bearer token for “local”")
    token.fill(TOKEN)
    card.get_by_role("button", name="Save token").click()
    expect(section.locator(".status").first).to_have_text("Token for “local” stored.")
    expect(token).to_have_value("")
    expect(card.locator(".mcp-state")).to_have_text("Connected")
    expect(card.locator(".mcp-facts")).to_contain_text("5 tools · Token stored")
    assert site.stored_token("local") == TOKEN
    assert TOKEN not in json.dumps(site.file()) and TOKEN not in page.content()
    assert server.authorizations[-1] == f"Bearer {TOKEN}"

    # The tools as the model sees them, folded until asked for.
    tools = card.locator("details.mcp-tools")
    expect(tools.locator("summary")).to_have_text("Tools offered to the model (5)")
    tools.locator("summary").click()
    expect(tools).to_contain_text("mcp__local__add")
    expect(tools).to_contain_text("mcp__local__lookup — Look up")
    expect(tools).to_contain_text("Not offered: dotted.name")
    site.shot("connected")

    # Connect / refresh connects afresh.
    before = len(server.authorizations)
    card.get_by_role("button", name="Connect / refresh “local”").click()
    expect(card.get_by_role("button", name="Connect / refresh “local”")).to_be_enabled()
    expect(card.locator(".mcp-state")).to_have_text("Connected")
    assert len(server.authorizations) > before

    # Edited: an allow-list and a timeout; the server reconnects offering only those tools.
    card.get_by_role("button", name="Edit “local”").click()
    expect(page.locator("#mcp-form-title")).to_have_text("Edit “local”")
    expect(page.locator("#mcp-id")).to_have_attribute("readonly", "")
    expect(page.locator("#mcp-url")).to_be_focused()
    page.fill("#mcp-tools", "add\necho")
    page.fill("#mcp-timeout", "30")
    section.get_by_role("button", name="Save changes").click()
    expect(card.locator(".mcp-facts")).to_contain_text("2 tools · Token stored · Only: add, echo · Timeout 30 s")
    expect(tools.locator("summary")).to_have_text("Tools offered to the model (2)")
    assert site.file() == {"servers": {"local": {"url": server.url, "enabled": True, "tools": ["add", "echo"],
                                                 "timeoutSeconds": 30}}}

    # A bad URL is refused beside the form: the field path, the field marked, the text kept.
    card.get_by_role("button", name="Edit “local”").click()
    page.fill("#mcp-url", "ftp://files.example/mcp")
    section.get_by_role("button", name="Save changes").click()
    error = page.locator("#mcp-error")
    expect(error).to_have_text(re.compile(r"^Not saved: must be an http:// or https:// URL with a host "
                                          r"- at `\$\.servers\.local\.url`"))
    expect(page.locator("#mcp-url")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#mcp-url")).to_be_focused()
    expect(page.locator("#mcp-url")).to_have_value("ftp://files.example/mcp")
    expect(page.locator("#mcp-tools")).to_have_value("add\necho")
    site.shot("refused")
    assert site.file()["servers"]["local"]["url"] == server.url
    page.fill("#mcp-url", server.url)
    expect(error).to_have_text("")  # typing clears it
    section.get_by_role("button", name="Cancel").click()

    # A new server under a taken id is refused, not replaced.
    page.fill("#mcp-id", "local")
    page.fill("#mcp-url", "https://elsewhere.example/mcp")
    section.get_by_role("button", name="Add server").click()
    expect(error).to_contain_text("there is already a server 'local'")
    expect(page.locator("#mcp-id")).to_have_attribute("aria-invalid", "true")
    page.fill("#mcp-id", "")
    page.fill("#mcp-url", "")

    # The rule hint fills the Permission rules form for this server's tools at its origin.
    card.get_by_role("button", name="Add an allow rule for “local” in Permission rules").click()
    expect(page.locator("#rule-tool")).to_have_value("mcp__local__*")
    expect(page.locator("#rule-origin")).to_have_value(server.origin)
    expect(page.locator("#rule-verdict")).to_have_value("allow")
    expect(page.locator("#rule-tool")).to_be_focused()

    # Cleared from the page, then set again from the REPL: the page follows without a reload.
    card.get_by_role("button", name="Clear token").click()
    expect(card.locator(".mcp-facts")).to_contain_text("No token")
    expect(card.get_by_role("button", name="Clear token")).to_be_disabled()
    assert site.stored_token("local") is None
    site.control("mcp.set_token", server="local", token=TOKEN)
    expect(card.locator(".mcp-facts")).to_contain_text("Token stored")

    # Removing asks first; "Keep it" keeps it.
    card.get_by_role("button", name="Remove “local”").click()
    confirm = card.get_by_role("group", name="Remove “local” from mcp.json? Its stored token is forgotten too.")
    expect(confirm.get_by_role("button", name="Keep it")).to_be_focused()
    site.shot("remove-confirm")
    confirm.get_by_role("button", name="Keep it").click()
    expect(confirm).to_have_count(0)
    expect(card.get_by_role("button", name="Remove “local”")).to_be_focused()
    card.get_by_role("button", name="Remove “local”").click()
    confirm.get_by_role("button", name="Remove", exact=True).click()
    expect(site.card("local")).to_have_count(0)
    expect(section).to_contain_text("Removed “local”.")
    expect(section).to_contain_text("No MCP server yet.")
    assert site.file() == {"servers": {}}
    assert site.stored_token("local") is None
