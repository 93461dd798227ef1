"""Approval and question cards a person reads at a glance and cannot answer by accident, in
headless Chromium against the real host and a fake model.

A card arriving while the user writes takes neither the focus nor a letter; its keys work only
from its own buttons, once it has settled (tests/e2e/test_card_keys.py covers the accidents that
must not answer it); "always allow" needs a second, deliberate step; Esc leaves a card and
declines nothing; the card's first line is one plain sentence (no ref, level or code) and fits a
360 px panel with the agent's latest line still in view, and says what "Allow for this task"
grants; a click that leaves the site says so; tool cards say in one line what was done
(and a stopped call says so once); a question's choices answer to number keys. Screenshots go to
test-output/sidepanel-approvals/.
"""

from __future__ import annotations

import re
import threading

import pytest

from tests.support.fake_model import Reply, tool_results
from tests.support.hosts import control_call
from tests.support.sidepanel_site import Act, open_site, read_then

pytestmark = pytest.mark.browser

TYPE_NAME = Act("I found the sign-up form. Next I type your name into Full name.", "type", "Full name field",
                'textbox "Full name"', {"text": "Grace Hopper"})


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with open_site(tmp_path_factory.mktemp("sidepanel-approvals"), "sidepanel-approvals") as site:
        yield site


def _rules_at(site, tool: str) -> list[dict]:
    """The rules for `tool` at the form's site (an "always allow" answer would add one)."""
    rules = [view["rule"] for view in control_call(site.run.tw_home, "gatekeeper.rules")]
    assert rules, "the host lists no rules at all: the built-in ones are missing"
    return [r for r in rules if r["tool"] == tool and r["origin"] == site.origin]


def _onto_buttons(panel, card) -> None:
    """As a keyboard user reaches a card's keys: its text clicked, Tab onto its first button, and
    a moment until the keys work (their hints show)."""
    from playwright.sync_api import expect

    card.locator("h3").first.click()
    panel.keyboard.press("Tab")
    expect(card.locator("button").first.locator("kbd")).to_be_visible()


def _start(site, text: str, *acts: Act, done: str = "Done.") -> object:
    site.form.evaluate("for (const el of document.querySelectorAll('input, textarea')) el.value = ''")
    site.model.replies.clear()
    site.model.add(*read_then("Reading the form.", *acts, done=done))
    site.new_task(text)
    return site.panel.locator(".approval")


def test_typing_into_the_composer_while_a_card_arrives_changes_no_rule_and_loses_no_text(site):
    from playwright.sync_api import expect

    panel = site.panel
    card = _start(site, "Fill in my name.", TYPE_NAME)
    composer = panel.locator("#message")
    # The user goes on writing in the composer; the card arrives in the middle of it.
    panel.keyboard.type("always ")
    expect(card).to_have_count(1)
    panel.keyboard.type("use my full name, say yes")
    expect(composer).to_be_focused()
    expect(composer).to_have_value("always use my full name, say yes")
    expect(card).to_have_count(1)  # still waiting: no letter answered it
    expect(card.locator(".card-status")).to_have_text("")
    assert _rules_at(site, "type") == []
    assert site.form.evaluate("document.getElementById('name').value") == ""
    composer.fill("")
    _onto_buttons(panel, card)
    panel.keyboard.press("n")
    expect(card).to_have_count(0)
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))


def test_always_allow_needs_a_second_deliberate_step(site):
    from playwright.sync_api import expect

    panel = site.panel
    card = _start(site, "Fill in my name.", TYPE_NAME)
    expect(card).to_have_count(1)
    _onto_buttons(panel, card)
    panel.keyboard.press("a")
    confirm = card.locator(".confirm")
    expect(confirm).to_be_visible()
    expect(confirm).to_be_focused()
    expect(confirm).to_contain_text("This adds a lasting rule")
    expect(card.locator(".card-status")).to_have_text("Confirm the lasting rule with its button, or go back.")
    # Letters and Enter on the confirmation answer nothing: only its button adds the rule.
    for key in ("a", "y", "Enter"):
        panel.keyboard.press(key)
    expect(card).to_have_count(1)
    assert _rules_at(site, "type") == []
    site.shot(panel, "always-confirm")
    panel.keyboard.press("Escape")  # back to the three answers, on the menu's button
    expect(confirm).to_be_hidden()
    expect(card.locator("button.more")).to_be_focused()
    expect(card.locator(".answers").first).to_be_visible()
    assert _rules_at(site, "type") == []
    card.locator("button.more").click()
    card.locator("button[data-kind=confirmSite]").click()
    card.locator(".confirm button[data-kind=acceptForSite]").click()
    expect(card).to_have_count(0)
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    rules = _rules_at(site, "type")
    assert [r["verdict"] for r in rules] == ["allow"]
    control_call(site.run.tw_home, "gatekeeper.remove_rule", id=rules[0]["id"])


def test_escape_leaves_the_card_and_declines_nothing(site):
    from playwright.sync_api import expect

    panel = site.panel
    card = _start(site, "Fill in my name.", TYPE_NAME)
    expect(card).to_have_count(1)
    more = card.locator("button.more")
    more.click()
    expect(card.locator(".menu")).to_be_visible()
    panel.keyboard.press("Escape")  # closes the menu, back on its button
    expect(card.locator(".menu")).to_be_hidden()
    expect(more).to_be_focused()
    panel.keyboard.press("Escape")  # leaves the card
    expect(panel.locator("#message")).to_be_focused()
    expect(card).to_have_count(1)
    expect(card.locator(".card-status")).to_have_text("")
    # Esc from the composer does not stop the task either; Stop is its own control.
    panel.keyboard.press("Escape")
    expect(card).to_have_count(1)
    expect(panel.locator(".item.tool[data-tool=type]").last).to_have_class(re.compile(r"\bstatus-waiting\b"))
    expect(panel.locator(".composer button.danger")).to_have_attribute("aria-keyshortcuts", "Control+Shift+S")
    panel.keyboard.press("F6")  # the keyboard way to the waiting card; its keys are on its buttons
    expect(card).to_be_focused()
    panel.keyboard.press("y")
    panel.wait_for_timeout(800)
    expect(card).to_have_count(1)
    panel.keyboard.press("Tab")
    expect(card.locator("button[data-kind=accept] kbd")).to_be_visible()
    panel.keyboard.press("y")
    expect(card).to_have_count(0)
    # Answered, the focus goes back to the composer, not to the bare page (where a card arriving
    # later would take it, and the next typed letter with it).
    expect(panel.locator("#message")).to_be_focused()
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    assert site.form.evaluate("document.getElementById('name').value") == "Grace Hopper"


@pytest.mark.parametrize("width", [360, 400])
def test_the_card_is_one_plain_sentence_that_fits_a_narrow_panel(site, width):
    from playwright.sync_api import expect

    panel = site.panel
    panel.set_viewport_size({"width": width, "height": 640})
    try:
        card = _start(site, "Fill in my name.", TYPE_NAME)
        expect(card).to_have_count(1)
        sentence = card.locator(".sentence")
        host = site.origin.split("://", 1)[1]
        expect(sentence).to_have_text(f"Type “Grace Hopper” into “Full name” on {host}?")
        first = sentence.inner_text()
        for internal in ("ref", "L1", "type @", "policy_default", "untrusted", "[", "_"):
            assert internal not in first, internal
        expect(card.locator(".why")).to_have_text("“Ask before changes” asks before changes on a site.")
        expect(card.locator(".grant")).to_have_text(f"“Allow for this task” allows typing on {host} until the task ends.")
        for dark in (False, True):
            site.shot(panel, f"approval-{width}", dark=dark)
        # The tool, level, element line and codes are one click away, not on the face of the card.
        details = card.locator("details.details")
        expect(details).not_to_have_attribute("open", "")
        expect(card.locator(".target-line")).to_be_hidden()
        expect(card.locator(".details code.code")).to_have_text("policy_default")
        visible = card.inner_text()
        assert "[ref=" not in visible and "L1" not in visible and "policy_default" not in visible
        # Three answers in one row; the rest in the menu.
        answers = card.locator(".answers").first.locator("button:visible")
        expect(answers).to_have_count(4)
        tops = {round(b["y"]) for b in (answers.nth(i).bounding_box() for i in range(4))}
        assert len(tops) == 1, tops
        expect(card.locator(".menu")).to_be_hidden()
        # The agent's latest line stays in view above the card.
        latest = panel.locator(".item.assistant .text").last
        expect(latest).to_have_text(TYPE_NAME.say)
        scroller = panel.locator(".scroll").bounding_box()
        line = latest.bounding_box()
        assert line["y"] >= scroller["y"] - 1 and line["y"] + line["height"] <= scroller["y"] + scroller["height"] + 1, \
            (line, scroller)
        box = card.bounding_box()
        assert box["height"] < 260, box
        _onto_buttons(panel, card)
        site.shot(panel, f"approval-{width}-focused")
        panel.keyboard.press("y")
        expect(card).to_have_count(0)
        expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    finally:
        panel.set_viewport_size({"width": 460, "height": 900})


PAY = """<!doctype html><html><head><meta charset="utf-8"><title>Basket</title></head><body>
<p><a id="pay" href="https://pay.b.example/checkout">Pay now</a></p></body></html>"""


def test_a_click_that_leaves_the_site_says_it_leaves_it_and_for_where(site):
    from playwright.sync_api import expect

    (site.web_dir / "basket.html").write_text(PAY, encoding="utf-8")
    basket = site.context.new_page()
    basket.goto(site.web.url("basket.html"))
    site.model.replies.clear()
    site.model.add(*read_then("Reading the basket.", Act("Paying.", "click", "Pay now link", 'link "Pay now"'),
                              done="Not paid."))
    panel = site.panel
    site.new_task("Pay for my basket.", tab=basket)
    card = panel.locator(".approval")
    expect(card).to_have_count(1)
    host = site.web.url("")[:-1].split("://", 1)[1]
    expect(card.locator(".sentence")).to_have_text(f"Click “Pay now” on {host}?")
    # Another site: said once, in words, with the sites in bold and the address quoted.
    expect(card.locator(".leaves")).to_have_text("This click leaves 127.0.0.1 for b.example (“https://pay.b.example/checkout”).")
    expect(card.locator(".leaves .site-name")).to_have_text(["127.0.0.1", "b.example"])
    assert "leads to" not in card.inner_text()
    expect(card.locator(".destination")).to_have_text("GET https://pay.b.example/checkout")  # under Details
    site.shot(panel, "approval-leads")
    _onto_buttons(panel, card)
    panel.keyboard.press("n")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Not paid."))
    assert basket.url.endswith("/basket.html")
    basket.close()


def test_tool_cards_say_what_was_done_in_one_line_and_a_stopped_call_once(site):
    from playwright.sync_api import expect

    panel = site.panel
    card = _start(site, "Fill in my name.", TYPE_NAME, done="Your name is in.")
    _onto_buttons(panel, card)
    panel.keyboard.press("y")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Your name is in."))
    done = panel.locator(".item.tool[data-tool=type]").last
    expect(done.locator(".tool-line .what")).to_have_text("Typed “Grace Hopper” into “Full name”")
    _one_line(done)
    shown = done.inner_text()
    for internal in ("{", "ref", "tabId", "You allowed it once."):
        assert internal not in shown, internal
    expect(done.locator(".decision")).to_have_text("You allowed it once.")  # under Details
    expect(panel.locator(".item.tool[data-tool=read_page]").last.locator(".tool-line .what")).to_have_text("Read the page")
    site.shot(panel, "tool-done")
    site.shot(panel, "tool-done", dark=True)
    # Details, one press away: the tool, the parameters with the ref, the element line.
    toggle = done.locator("button.details-toggle")
    toggle.focus()
    panel.keyboard.press("Enter")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(done.locator(".tool-details")).to_be_visible()
    expect(done.locator(".params-summary")).to_contain_text('"ref":')
    expect(done.locator(".target-line")).to_contain_text('textbox "Full name"')
    site.shot(panel, "tool-done-details")

    card = _start(site, "Write my bio.", Act("Typing your bio.", "type", "Bio", 'textbox "Bio"', {"text": "Pioneer."}))
    expect(card).to_have_count(1)
    card.locator("button.more").click()
    card.locator("button[data-kind=cancel]").click()
    expect(card).to_have_count(0)
    stopped = panel.locator(".item.tool[data-tool=type]").last
    expect(stopped).to_have_class(re.compile(r"\bstatus-declined\b"))
    expect(stopped.locator(".tool-line .what")).to_have_text("Type “Pioneer.” into “Bio”")
    expect(stopped.locator(".tool-line .status")).to_have_text("not done: you stopped the task")
    _one_line(stopped)
    expect(panel.locator(".composer button.danger")).to_be_hidden()  # the task stopped
    expect(panel.locator(".item.notice", has_text="The turn was stopped.")).to_have_count(0)
    site.shot(panel, "tool-stopped")
    site.shot(panel, "tool-stopped", dark=True)
    assert site.form.evaluate("document.getElementById('bio').value") == ""


def _one_line(card) -> None:
    """The tool card shows its line only (with its Details toggle on it), one text line high."""
    from playwright.sync_api import expect

    expect(card.locator(":scope > :visible")).to_have_count(1)
    line = card.locator(".tool-line").bounding_box()
    height = card.locator(".tool-line .what").evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert line["height"] < 1.5 * height, (line, height)


def _question(first: Reply):
    def script(body):
        if not tool_results(body):
            return first
        return Reply(text=f"Choosing as told. ({tool_results(body)[-1][:80]})")

    return script


ASK = ("ask_user", {"question": "Which country should I choose?", "options": ["France", "Germany", "Italy"]})


def test_number_keys_answer_a_question_from_its_buttons(site):
    from playwright.sync_api import expect

    panel = site.panel
    site.model.replies.clear()
    site.model.add(*[_question(Reply(text="One question first.", tool_calls=[ASK]))] * 2)
    site.new_task("Pick my country.")
    card = panel.locator(".interaction[data-kind=ask_user]")
    expect(card).to_contain_text("Which country should I choose?")
    expect(panel.locator("#message")).to_be_focused()  # the card takes no focus, even from an idle composer
    expect(card.locator("button.option kbd")).to_have_text(["1", "2", "3"])
    _onto_buttons(panel, card)
    site.shot(panel, "question")
    site.shot(panel, "question", dark=True)
    panel.keyboard.press("2")
    expect(card).to_have_count(0)
    expect(panel.locator(".item.assistant").last).to_contain_text("Choosing as told.")
    assert "Germany" in tool_results(site.model.requests[-1]["body"])[-1]


def test_a_question_does_not_take_the_focus_from_a_message_being_written(site):
    from playwright.sync_api import expect

    panel = site.panel
    gate = threading.Event()
    site.model.replies.clear()
    site.model.add(*[_question(Reply(text="One question first.", tool_calls=[ASK], hold=gate))] * 2)
    try:
        site.new_task("Pick my country.")
        expect(panel.locator(".item.assistant.streaming")).to_have_count(1)
        panel.keyboard.type("3 more things: ")
        gate.set()
        card = panel.locator(".interaction[data-kind=ask_user]")
        expect(card).to_contain_text("Which country should I choose?")
        panel.keyboard.type("pack light")
        expect(panel.locator("#message")).to_be_focused()
        expect(panel.locator("#message")).to_have_value("3 more things: pack light")
        expect(card).to_have_count(1)
    finally:
        gate.set()
    panel.locator("#message").fill("")
    _onto_buttons(panel, card)
    panel.keyboard.press("1")
    expect(card).to_have_count(0)
    expect(panel.locator(".item.assistant").last).to_contain_text("Choosing as told.")
    assert "France" in tool_results(site.model.requests[-1]["body"])[-1]
