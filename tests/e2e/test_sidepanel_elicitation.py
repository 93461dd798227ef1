"""What an MCP server asks while its tool runs, on the side panel, in headless Chromium against the
real host, the SDK's own MCP server and a fake model: the call is approved on its card, then the
server asks. A question (elicitation): the card names the server, shows its message as its words
and a form built from its schema; what the user sends is what the server gets. A request for a
model answer (sampling): the card shows the exact request; allowed, the thread's model answers
it for the server. Screenshots (light and dark, 360 and 460 px) go to test-output/sidepanel-elicitation/."""

from __future__ import annotations

import pytest

from tests.support.fake_model import Reply, tool_results
from tests.support.mcp_server import McpTestServer
from tests.support.sidepanel_site import open_site

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with McpTestServer(sessions=404, extras=True) as server, \
            open_site(tmp_path_factory.mktemp("sidepanel-elicitation"), "sidepanel-elicitation",
                      mcp={"local": {"url": server.url, "elicitation": True, "sampling": True}}) as site:
        yield site


def test_a_servers_question_is_a_card_and_the_answer_reaches_the_server(site):
    from playwright.sync_api import expect

    panel = site.panel
    site.model.replies.clear()
    site.model.add(Reply(text="I will delete it.", tool_calls=[("mcp__local__confirm_delete", {"name": "report.pdf"})]),
                   Reply(text="Deleted."))
    site.new_task("Delete report.pdf on my server.")
    approval = panel.locator(".approval")
    expect(approval).to_have_count(1)
    approval.locator("button[data-kind=accept]").click()
    card = panel.locator(".interaction.elicitation")
    expect(card).to_have_count(1)
    expect(card.locator("h3")).to_have_text("The MCP server “local” asks you")
    expect(card.locator(".server-words")).to_have_text("Delete report.pdf?")
    box = card.locator("input[type=checkbox]")
    expect(box).to_have_count(1)
    expect(card.locator("label")).to_contain_text("Sure")
    for width in (460, 360):
        panel.set_viewport_size({"width": width, "height": 900})
        for dark in (False, True):
            site.shot(panel, f"question-{width}", dark=dark)
    panel.set_viewport_size({"width": 460, "height": 900})
    box.check()
    card.locator("button[type=submit]").click()
    expect(card).to_have_count(0)
    expect(panel.get_by_text("Deleted.", exact=True)).to_have_count(1)
    assert "elicitation answered: accept" in tool_results(site.model.requests[-1]["body"])[-1]


def test_a_servers_request_for_a_model_answer_shows_the_exact_request_and_runs_once_allowed(site):
    from playwright.sync_api import expect

    panel = site.panel
    site.model.replies.clear()
    site.model.add(Reply(text="I will ask the server.", tool_calls=[("mcp__local__ask_model", {"question": "Capital of France?"})]),
                   Reply(text="Paris."), Reply(text="The server says Paris."))
    site.new_task("Ask my server what the capital of France is.")
    approval = panel.locator(".approval")
    expect(approval).to_have_count(1)
    approval.locator("button[data-kind=accept]").click()
    card = panel.locator(".interaction.sampling")
    expect(card).to_have_count(1)
    expect(card.locator("h3")).to_have_text("The MCP server “local” asks to use your model")
    expect(card).to_contain_text("up to 10 tokens")
    expect(card.locator(".server-words")).to_have_text("Capital of France?")
    for width in (460, 360):
        panel.set_viewport_size({"width": width, "height": 900})
        for dark in (False, True):
            site.shot(panel, f"sampling-{width}", dark=dark)
    panel.set_viewport_size({"width": 460, "height": 900})
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_have_count(0)
    expect(panel.get_by_text("The server says Paris.", exact=True)).to_have_count(1)
    sampled = site.model.requests[-2]["body"]
    assert sampled["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "Paris." in tool_results(site.model.requests[-1]["body"])[-1]
