"""A card nobody answers by accident, in headless Chromium against the real host and a fake model.

Each test starts from something a person really does while a card arrives (clicks Send and types
on, clicks the card's text and types, has a header button focused, writes in the empty composer,
presses a key the instant a card appears, holds a key down, double-clicks) and checks that no answer reached the
host: the card still waits, silent, and the model was asked nothing more. Then the deliberate
way answers it: Tab onto the card's buttons and, once its keys work (their hints show), one key.
Screenshots of the hints at 360 and 460 px go to test-output/card-keys/.
"""

from __future__ import annotations

import dataclasses
import re
import threading

import pytest

from tests.support.fake_model import Reply, tool_results
from tests.support.sidepanel_site import Act, open_site, read_then

pytestmark = pytest.mark.browser

TYPE_NAME = Act("Next I type your name into Full name.", "type", "Full name field", 'textbox "Full name"',
                {"text": "Grace Hopper"})
ASK = ("ask_user", {"question": "How many people are travelling?", "options": ["Just me", "Two of us", "Three or more"]})
APPROVAL = ".approval"
QUESTION = ".interaction[data-kind=ask_user]"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with open_site(tmp_path_factory.mktemp("card-keys"), "card-keys") as site:
        yield site


def _held(script, gate: threading.Event):
    """`script` whose reply streams its first words, then waits for `gate`."""
    return lambda body: dataclasses.replace(script(body), hold=gate)


def _fill_in_my_name(site, gate: threading.Event | None = None) -> None:
    """Script a turn that reads the form and asks to type the user's name into it."""
    site.form.evaluate("for (const el of document.querySelectorAll('input, textarea')) el.value = ''")
    site.model.replies.clear()
    scripts = list(read_then("Reading the form.", TYPE_NAME, done="Done."))
    if gate is not None:
        scripts[0] = _held(scripts[0], gate)
    site.model.add(*scripts)


def _ask_how_many(site) -> None:
    def script(body):
        if not tool_results(body):
            return Reply(text="One question first.", tool_calls=[ASK])
        return Reply(text=f"Noted. ({tool_results(body)[-1][:80]})")

    site.model.replies.clear()
    site.model.add(script, script)


def _still_waiting(site, card, asked: int) -> None:
    """No answer reached the host: a while later the card is still there and silent, and the model
    was asked nothing more (an answer would have let the turn go on)."""
    from playwright.sync_api import expect

    site.panel.wait_for_timeout(900)
    expect(card).to_have_count(1)
    expect(card.locator(".card-status")).to_have_text("")
    assert len(site.model.requests) == asked
    if card.get_attribute("data-approval-id"):
        expect(site.panel.locator(".item.tool[data-tool=type]").last).to_have_class(re.compile(r"\bstatus-waiting\b"))
        assert site.form.evaluate("document.getElementById('name').value") == ""


def _deliberately(site, card, key: str) -> None:
    """The deliberate way: the card's text clicked, Tab onto its first button, and the key once the
    keys work. Pressed at once after the Tab, the key is still someone typing; the hint shows when
    the keys work."""
    from playwright.sync_api import expect

    panel = site.panel
    asked = len(site.model.requests)
    card.locator("h3").first.click()
    panel.keyboard.press("Tab")
    first = card.locator("button").first
    expect(first).to_be_focused()
    hint = first.locator("kbd")
    expect(hint).to_be_hidden()
    panel.keyboard.press(key)
    _still_waiting(site, card, asked)
    expect(hint).to_be_visible()
    panel.keyboard.press(key)
    expect(card).to_have_count(0)


def test_typing_on_after_clicking_send_answers_nothing(site):
    from playwright.sync_api import expect

    panel = site.panel
    _fill_in_my_name(site)
    site.form.bring_to_front()
    panel.bring_to_front()
    panel.click("#new-thread")
    panel.fill("#message", "Fill in my name.")
    send = panel.locator(".composer button[type=submit]")
    send.click()  # with the mouse: the focus is on the button, not in a text field
    card = panel.locator(APPROVAL)
    expect(card).to_have_count(1)
    asked = len(site.model.requests)
    panel.keyboard.type("sorry")  # "s" was "Allow for this task"
    _still_waiting(site, card, asked)
    expect(send).to_be_focused()  # the card took nothing
    _deliberately(site, card, "n")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    assert site.form.evaluate("document.getElementById('name').value") == ""


def test_clicking_the_card_text_then_typing_answers_nothing(site):
    from playwright.sync_api import expect

    panel = site.panel
    _fill_in_my_name(site)
    site.new_task("Fill in my name.")
    card = panel.locator(APPROVAL)
    expect(card).to_have_count(1)
    asked = len(site.model.requests)
    card.locator(".sentence").click()  # reading it, selecting its words
    panel.keyboard.type("y")
    _still_waiting(site, card, asked)
    _deliberately(site, card, "y")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    assert site.form.evaluate("document.getElementById('name').value") == "Grace Hopper"


def test_a_card_arriving_while_a_header_button_has_the_focus_takes_neither_it_nor_yes(site):
    from playwright.sync_api import expect

    panel = site.panel
    gate = threading.Event()
    _fill_in_my_name(site, gate)
    try:
        site.new_task("Fill in my name.")
        expect(panel.locator(".item.assistant.streaming")).to_have_count(1)
        header = panel.locator("#toggle-threads")
        header.focus()
        gate.set()
        card = panel.locator(APPROVAL)
        expect(card).to_have_count(1)
    finally:
        gate.set()
    asked = len(site.model.requests)
    panel.keyboard.type("yes")
    _still_waiting(site, card, asked)
    expect(header).to_be_focused()
    _deliberately(site, card, "n")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))


def test_a_key_held_down_answers_nothing(site):
    from playwright.sync_api import expect

    panel = site.panel
    _fill_in_my_name(site)
    site.new_task("Fill in my name.")
    card = panel.locator(APPROVAL)
    expect(card).to_have_count(1)
    asked = len(site.model.requests)
    card.locator("h3").first.click()
    panel.keyboard.press("Tab")
    expect(card.locator("button").first).to_be_focused()  # on "Allow once", whose key is Y
    panel.keyboard.down("y")
    for _ in range(30):  # held: the keyboard repeats it, past the card's pause
        panel.wait_for_timeout(40)
        panel.keyboard.down("y")
    panel.keyboard.up("y")
    _still_waiting(site, card, asked)
    _deliberately(site, card, "n")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    assert site.form.evaluate("document.getElementById('name').value") == ""


def test_a_question_takes_no_digit_from_the_empty_composer(site):
    from playwright.sync_api import expect

    panel = site.panel
    _ask_how_many(site)
    site.new_task("Book the train for us.")
    composer = panel.locator("#message")
    expect(composer).to_be_focused()
    expect(composer).to_have_value("")
    card = panel.locator(QUESTION)
    expect(card).to_contain_text("How many people are travelling?")
    asked = len(site.model.requests)
    panel.keyboard.type("2 of us")
    _still_waiting(site, card, asked)
    expect(composer).to_be_focused()
    expect(composer).to_have_value("2 of us")
    composer.fill("")
    _deliberately(site, card, "2")
    expect(panel.locator(".item.assistant").last).to_contain_text("Noted.")
    assert "Two of us" in tool_results(site.model.requests[-1]["body"])[-1]


def test_a_key_the_instant_a_card_appears_answers_nothing(site):
    from playwright.sync_api import expect

    panel = site.panel
    gate = threading.Event()
    _fill_in_my_name(site, gate)
    try:
        site.new_task("Fill in my name.")
        expect(panel.locator(".item.assistant.streaming")).to_have_count(1)
        panel.wait_for_timeout(700)  # the Enter that sent the task is long past: only the card is new
        panel.evaluate("""() => {
          window.shownAt = window.keyAt = null;
          new MutationObserver((changes, observer) => {
            if (!document.querySelector('#requests .approval')) return;
            window.shownAt = performance.now();
            observer.disconnect();
          }).observe(document.getElementById('requests'), { childList: true });
          addEventListener('keydown', () => { window.keyAt = performance.now(); }, { capture: true, once: true });
        }""")
        gate.set()
        card = panel.locator(APPROVAL)
        expect(card).to_have_count(1)
    finally:
        gate.set()
    asked = len(site.model.requests)
    # The focus on its button stands for a user already there; the key comes the instant it shows.
    card.locator("button[data-kind=accept]").focus()
    panel.keyboard.press("y")
    assert panel.evaluate("window.keyAt - window.shownAt") < 600, "the key came too late to test the delay"
    _still_waiting(site, card, asked)
    _deliberately(site, card, "n")
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))


def test_the_second_click_of_a_double_click_answers_nothing_and_a_click_answers_at_once(site):
    from playwright.sync_api import expect

    panel = site.panel
    _fill_in_my_name(site)
    site.new_task("Fill in my name.")
    card = panel.locator(APPROVAL)
    expect(card).to_have_count(1)
    asked = len(site.model.requests)
    # A double-click whose first click landed before the card: its second lands on "Allow once".
    box = card.locator("button[data-kind=accept]").bounding_box()
    panel.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    panel.mouse.down(click_count=2)
    panel.mouse.up(click_count=2)
    _still_waiting(site, card, asked)
    card.locator("button[data-kind=decline]").click()  # one deliberate click: no delay
    expect(card).to_have_count(0)
    expect(panel.locator(".item.assistant").last).to_have_text(re.compile("Done."))
    assert site.form.evaluate("document.getElementById('name').value") == ""


def _hints_cover_no_button(card) -> None:
    """Every shown key hint lies inside the card and off every button (its own included), focus
    ring and all (2 px outline, 2 px offset)."""
    overlaps = card.evaluate("""(card) => {
      const boxes = (sel) => [...card.querySelectorAll(sel)].filter((el) => el.checkVisibility({ visibilityProperty: true }))
        .map((el) => [el, el.getBoundingClientRect()]);
      const meet = (a, b) => a.left < b.right + 4 && b.left - 4 < a.right && a.top < b.bottom + 4 && b.top - 4 < a.bottom;
      const inside = (a, b) => a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom;
      const outer = card.getBoundingClientRect();
      const found = [];
      const hints = boxes('kbd');
      for (const [hint, h] of hints) {
        if (!inside(h, outer)) found.push(`${hint.textContent} outside the card`);
        for (const [button, b] of boxes('button')) if (meet(h, b)) found.push(`${hint.textContent} on ${button.textContent}`);
      }
      return hints.length ? found : ['no hint shown'];
    }""")
    assert overlaps == [], overlaps


@pytest.mark.parametrize("width", [360, 460])
def test_key_hints_show_only_while_the_keys_work_and_cover_no_button(site, width):
    from playwright.sync_api import expect

    panel = site.panel
    panel.set_viewport_size({"width": width, "height": 720})
    try:
        _fill_in_my_name(site)
        site.new_task("Fill in my name.")
        card = panel.locator(APPROVAL)
        expect(card).to_have_count(1)
        hints = card.locator(".answers kbd")
        expect(hints).to_have_text(["Y", "N"])  # no letter grants anything for the task
        expect(hints.first).to_be_hidden()  # the focus is in the composer: the keys do not work
        card.locator(".sentence").click()
        expect(hints.first).to_be_hidden()  # on the card's text: still not
        panel.keyboard.press("Tab")
        expect(hints.first).to_be_visible()  # on its button, a moment later: they work, and say so
        answers = card.locator(".answers").first.locator("button:visible")
        tops = {round(answers.nth(i).bounding_box()["y"]) for i in range(answers.count())}
        assert len(tops) == 1, tops  # the three answers and the menu still share one row
        _hints_cover_no_button(card)
        for dark in (False, True):
            site.shot(panel, f"approval-keys-{width}", dark=dark)
        panel.keyboard.press("n")
        expect(card).to_have_count(0)

        _ask_how_many(site)
        site.new_task("Book the train for us.")
        card = panel.locator(QUESTION)
        expect(card).to_have_count(1)
        hints = card.locator("button.option kbd")
        expect(hints).to_have_text(["1", "2", "3"])
        expect(hints.first).to_be_hidden()
        card.locator("h3").click()
        panel.keyboard.press("Tab")
        expect(hints.first).to_be_visible()
        _hints_cover_no_button(card)
        for dark in (False, True):
            site.shot(panel, f"question-keys-{width}", dark=dark)
        panel.keyboard.press("1")
        expect(card).to_have_count(0)
    finally:
        panel.set_viewport_size({"width": 460, "height": 900})
