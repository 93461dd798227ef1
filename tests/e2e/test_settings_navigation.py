"""The settings page as a person finds their way around it, in headless Chromium (Playwright)
against the real host, a fake OpenAI-compatible model and a real local MCP server with 90 tools.

The section index moves to each section (a sidebar at 1280 px, a sticky strip at 360 px); at
360 px nothing scrolls sideways (table rows stack, the administrator's policy path is shortened
with the full path kept in its title). After one task from the side panel whose tool call was
asked about and allowed for the session, the audit log shows that call as one readable line that
opens to its recorded rows, the hash chain verifies, and Export saves the rows shown as JSON
Lines; the provider lists the tools its last request left out (OpenAI's 128-tool limit).
Screenshots go to test-output/settings-navigation/.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from install.extension_id import default_extension_id
from tests.support.browser import BrowserRun
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.hosts import write_settings
from tests.support.mcp_server import McpTestServer
from tests.support.playwright_run import extension_context
from tests.support.screenshots import save_shots
from tests.support.sidepanel_site import allow_for_the_task

pytestmark = pytest.mark.browser

WAIT_MS = 30_000
SHOTS = "settings-navigation"
MANY = 90  # with the built-in tools, more than OpenAI's 128


class ManyToolsServer(McpTestServer):
    """A real MCP server offering `MANY` small tools, t00 … t89."""

    def _app(self) -> Any:
        from mcp.server.mcpserver import MCPServer

        server = MCPServer("many")
        for n in range(MANY):
            def tool(text: str = "", n: int = n) -> str:
                return f"tool {n} got {text!r}"

            server.add_tool(tool, name=f"t{n:02}", description=f"Tool number {n}.")
        return server.streamable_http_app()


@dataclass
class Site:
    run: BrowserRun
    model: FakeOpenAI
    server: ManyToolsServer
    context: Any
    page: Any

    def extension_page(self, path: str) -> Any:
        page = self.context.new_page()
        page.goto(f"chrome-extension://{default_extension_id()}/ui/{path}")
        return page

    def no_sideways_scroll(self) -> bool:
        return self.page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=WAIT_MS)
    folder = tmp_path_factory.mktemp("settings-navigation")
    with FakeOpenAI() as model, ManyToolsServer() as server:
        run = BrowserRun(folder / "run")
        run.prepare()
        write_settings(run.tw_home, model.url)
        (run.tw_home / "config" / "mcp.json").write_text(json.dumps({"servers": {"many": {"url": server.url}}}))
        managed = run.tw_home / "managed" / "policy.json"
        managed.parent.mkdir(parents=True)
        managed.write_text(json.dumps({"version": 1, "rules": [{"tool": "download", "origin": "*", "verdict": "deny"}]}))
        with sync_playwright() as playwright, \
                extension_context(playwright, run, {"width": 1280, "height": 900}) as context:
            site = Site(run, model, server, context, None)
            site.page = site.extension_page("settings.html")
            site.page.wait_for_selector("#rules tbody tr[data-rule-id]", timeout=WAIT_MS)
            yield site


def test_the_index_moves_to_each_section_at_1280px(site):
    from playwright.sync_api import expect

    page = site.page
    index = page.get_by_role("navigation", name="Settings sections")
    links = index.get_by_role("link")
    expect(links).to_have_text(["Default policy", "Permission rules", "Sites", "Scope lock", "Test a call",
                                "Model providers", "Your details", "Memory", "MCP servers", "Skills", "Plugins", "Audit log"])
    # A sidebar: beside the sections, not above them.
    assert index.bounding_box()["x"] + index.bounding_box()["width"] <= page.locator("main").bounding_box()["x"]
    save_shots(page, SHOTS, "wide-1280")

    index.get_by_role("link", name="Audit log").click()
    expect(page.locator("#audit")).to_be_focused()
    expect(page.locator("#audit")).to_be_in_viewport()
    expect(index.get_by_role("link", name="Audit log")).to_have_attribute("aria-current", "true")
    expect(index).to_be_in_viewport()  # it stays on screen while the page scrolls
    page.keyboard.press("Tab")  # the keyboard continues inside the section
    assert page.evaluate("document.activeElement.closest('section')?.id") == "audit"

    index.get_by_role("link", name="Test a call").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#explain")).to_be_focused()
    # "Test a call": every label in one column, each beside its own field.
    for field in ("explain-tool", "explain-url", "explain-params", "explain-thread"):
        label, control = page.locator(f"label[for={field}]"), page.locator(f"#{field}")
        expect(label).to_be_visible()
        assert label.bounding_box()["x"] == page.locator("label[for=explain-tool]").bounding_box()["x"]
        assert abs(control.bounding_box()["x"] - page.locator("#explain-tool").bounding_box()["x"]) < 1
    save_shots(page, SHOTS, "wide-1280-explain")


def test_nothing_scrolls_sideways_at_360px_and_the_strip_navigates(site):
    from playwright.sync_api import expect

    page = site.page
    page.set_viewport_size({"width": 360, "height": 780})
    try:
        page.goto(page.url.split("#")[0])
        page.wait_for_selector("#rules tbody tr[data-rule-id]")
        page.fill("#rule-tool", "click")
        page.fill("#rule-origin", "https://a-rather-long-shop-name.example")
        page.locator("#rules").get_by_role("button", name="Add rule").click()
        delete = page.get_by_role("button", name="Delete click @ https://a-rather-long-shop-name.example")
        expect(delete).to_be_visible()
        page.fill("#memory-key", "shipping-address-for-the-office-in-the-north-wing")
        page.fill("#memory-value", "Building 7, 3rd floor, " + "Long Street " * 12)
        page.get_by_role("button", name="Add to memory").click()
        expect(page.locator("#memory tr[data-key]")).to_have_count(1)
        assert site.no_sideways_scroll(), page.evaluate("document.documentElement.scrollWidth")
        assert delete.bounding_box()["x"] + delete.bounding_box()["width"] <= 360

        managed = page.locator("#rules tr[data-source=managed] .path code")
        full = str(site.run.tw_home / "managed" / "policy.json")
        expect(managed).to_have_text("…/managed/policy.json")
        expect(managed).to_have_attribute("title", full)
        expect(page.get_by_role("button", name=f"Copy the full path {full}")).to_be_visible()
        save_shots(page, SHOTS, "narrow-360")

        strip = page.get_by_role("navigation", name="Settings sections")
        strip.get_by_role("link", name="MCP servers").click()
        expect(page.locator("#mcp")).to_be_focused()
        heading = page.locator("#mcp-title").bounding_box()
        assert heading["y"] >= strip.bounding_box()["y"] + strip.bounding_box()["height"] - 1  # not under the strip
        expect(strip.get_by_role("link", name="MCP servers")).to_have_attribute("aria-current", "true")
        assert site.no_sideways_scroll()
        save_shots(page, SHOTS, "narrow-360-mcp")
        save_shots(page, SHOTS, "narrow-360-full", full_page=True)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_a_call_reads_as_one_line_the_chain_verifies_and_export_saves_the_rows(site):
    from playwright.sync_api import expect

    site.model.add(Reply(text="Using the tool.", tool_calls=[("mcp__many__t00", {"text": "hello"})]),
                   Reply(text="The tool answered."))
    panel = site.extension_page("sidepanel.html")
    panel.wait_for_selector("body[data-engine=ready]")
    panel.fill("#message", "Run the first tool.")
    panel.press("#message", "Enter")
    expect(panel.locator(".approval")).to_have_count(1)
    card = panel.locator(".approval")  # a card's keys work from its buttons, once they show their keys
    allow_for_the_task(panel, card)
    expect(panel.locator(".item.assistant .text").last).to_have_text("The tool answered.")
    sent = site.model.requests[0]["body"]["tools"]
    assert len(sent) == 128
    panel.close()

    page = site.page
    page.goto(page.url.split("#")[0] + "#audit")
    page.reload()  # a new hash alone does not load the page again
    calls = page.locator("#audit .audit-call")
    call = calls.filter(has_text="mcp__many__t00")
    expect(call).to_have_count(1)
    line = call.locator("summary .audit-line")
    expect(line).to_have_text(f"mcp__many__t00 on {site.server.origin}: asked you (the policy), "
                              "you allowed it for this task, done.")
    rows = call.locator("table.audit tbody tr")
    expect(rows.first).to_be_hidden()  # folded until opened
    call.locator("summary").click()
    kinds = [c.split()[0] for c in rows.evaluate_all("rows => rows.map(r => r.className)")]
    assert kinds[0] == "kind-decision" and "kind-approval" in kinds and kinds[-1] == "kind-outcome"
    expect(rows.filter(has_text="acceptForSession")).to_have_count(1)
    save_shots(page, SHOTS, "wide-1280-audit", target=page.locator("#audit"))

    page.get_by_role("button", name="Verify chain").click()
    status = page.locator("#audit p.status")
    expect(status).to_contain_text("The chain is intact:")
    verified = int(status.inner_text().split(": ")[1].split(" ")[0])
    assert verified >= len(kinds)

    with page.expect_download() as download:
        page.get_by_role("button", name="Export").click()
    saved = download.value
    assert saved.suggested_filename.startswith("tabwarden-audit-") and saved.suggested_filename.endswith(".jsonl")
    lines = [json.loads(text) for text in open(saved.path(), encoding="utf-8").read().splitlines()]
    shown = page.locator("#audit table.audit tbody tr").count()
    assert len(lines) == shown == verified  # every row, each call's rows included
    assert [row["seq"] for row in lines] == sorted(row["seq"] for row in lines)
    assert {row["callId"] for row in lines if row["tool"] == "mcp__many__t00"} != {None}
    expect(status).to_have_text(f"Saved {shown} entries as JSON Lines.")

    # Opened, at 360 px: the rows stack, and nothing scrolls sideways.
    page.set_viewport_size({"width": 360, "height": 780})
    try:
        expect(rows.first).to_be_visible()
        assert site.no_sideways_scroll()
        save_shots(page, SHOTS, "narrow-360-audit", target=page.locator("#audit"))
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_the_provider_lists_the_tools_its_last_request_left_out(site):
    from playwright.sync_api import expect

    page = site.page
    page.goto(page.url.split("#")[0] + "#providers")
    page.reload()
    expect(page.locator("#providers")).to_be_focused()  # the address named it: the page went there
    left = page.locator("#providers tr[data-left-out-of=fake] details.left-out")
    sent = {tool["function"]["name"] for tool in site.model.requests[-1]["body"]["tools"]}
    cut = MANY - len([name for name in sent if name.startswith("mcp__many__")])
    assert cut > 0
    expect(left.locator("summary")).to_have_text(f"{cut} tools were left out of the last request")
    left.locator("summary").click()
    items = left.locator("li")
    expect(items).to_have_count(cut)
    expect(items.first).to_have_text(f"mcp__many__t{MANY - cut:02} — over the provider's limit of 128 tools")
    assert not sent & {name.split(" ")[0] for name in items.all_inner_texts()}  # the model never saw them
    save_shots(page, SHOTS, "wide-1280-left-out", target=page.locator("#providers"))
