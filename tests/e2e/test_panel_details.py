"""The side panel's and settings' small details, in headless Chromium against the real host and a
fake model: the three policies are named as the switch names them and described as the host
decides (two changes on one site each ask under "Ask before changes" until "Allow for this
task"); a long decline note wraps under its tool card's line; threads with the same title show
when they started, their site and their turns; a locked thread shows its lock in the list and the
header, live; the policy radios are one size; the header stays on one line at 360 px.
Screenshots at 360 and 460 px, light and dark, go to test-output/panel-details/.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.fake_model import Reply
from tests.support.sidepanel_site import Act, open_site, read_then

pytestmark = pytest.mark.browser

NAMES = ["Ask always", "Ask before changes", "Automatic"]
WIDTHS = (360, 460)
STARTED = r"(today|yesterday) \d{1,2}:\d{2}(\s?[AP]M)?"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with open_site(tmp_path_factory.mktemp("panel-details"), "panel-details") as site:
        yield site


def _shots(site, page, name: str) -> None:
    """`name` at 360 and 460 px, light and dark (the page is left at 460 px)."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        site.shot(page, f"{name}-{width}")
        site.shot(page, f"{name}-{width}", dark=True)


def _thread_id(panel) -> str:
    return parse_qs(urlsplit(panel.url).query)["thread"][0]


def _show_threads(panel) -> None:
    if "show-threads" not in (panel.locator("body").get_attribute("class") or ""):
        panel.click("#toggle-threads")


def _hide_threads(panel) -> None:
    if "show-threads" in (panel.locator("body").get_attribute("class") or ""):
        panel.click("#toggle-threads")


def _text_of(page) -> str:
    return page.locator("body").inner_text()


def test_the_policies_are_named_as_the_switch_names_them_and_described_as_the_host_decides(site):
    from playwright.sync_api import expect

    panel = site.panel
    panel.bring_to_front()
    panel.click("#new-thread")
    assert panel.locator("#policy option").all_inner_texts() == NAMES
    hints = {}
    for policy in ("always", "auto", "untrusted"):  # the default last: new_task expects it
        panel.select_option("#policy", policy)
        hints[policy] = panel.locator("#policy-hint").inner_text()
    assert "first change" not in " ".join(hints.values())
    assert hints["untrusted"].startswith("Reads pages without asking; asks before every change (")
    assert "first change" not in _text_of(panel)
    _shots(site, panel, "empty-thread")  # the first-run words and the switch's hint
    settings = site.extension_page("settings.html")
    choices = settings.locator("#policy .choice")
    assert choices.locator("strong").all_inner_texts() == NAMES
    for policy, text in zip(("always", "untrusted", "auto"), choices.all_inner_texts()):
        assert text.endswith(hints[policy]), text
    assert "first change" not in _text_of(settings)
    guarded = settings.locator("#origins").inner_text()
    assert "even under “Automatic”" not in guarded and "“Ask before changes”" in guarded
    settings.close()

    # What the hint says, the host does: each change asks; "Allow for this task" lets the same
    # action run on the same site without asking again.
    site.form.evaluate("for (const el of document.querySelectorAll('input, textarea')) el.value = ''")
    site.model.replies.clear()
    site.model.add(*read_then(
        "Reading.",
        Act("The name.", "type", "Full name field", 'textbox "Full name"', {"text": "Ada"}),
        Act("The bio.", "type", "Bio field", 'textbox "Bio"', {"text": "Pioneer"}),
        Act("The name again.", "type", "Full name field", 'textbox "Full name"', {"text": "Ada Lovelace"}),
        done="All three typed."))
    site.new_task("Type Ada in the name and Pioneer in the bio, then Ada Lovelace in the name.")
    card = panel.locator(".approval")
    expect(card.locator(".sentence")).to_contain_text("Full name")
    card.locator("button[data-kind=accept]").click()
    expect(card.locator(".sentence")).to_contain_text("Bio")  # the second change on the same site asks too
    card.locator("button[data-kind=acceptForSession]").click()
    expect(panel.locator(".item.assistant .text").last).to_have_text("All three typed.")
    expect(card).to_have_count(0)
    expect(panel.locator(".item.tool[data-tool=type].status-ok")).to_have_count(3)
    assert site.form.evaluate("document.getElementById('name').value") == "Ada Lovelace"
    assert site.form.evaluate("document.getElementById('bio').value") == "Pioneer"


LONG_NOTE = ("Please leave the bio alone: this is a shared account and the whole team reads it. See "
             "https://intranet.example.com/policies/shared-accounts/profile-fields/bio-and-about-me-guidelines-v2"
             "?section=do-not-edit-without-asking-the-owner-first")


def test_a_long_decline_note_wraps_under_the_tool_cards_line(site):
    from playwright.sync_api import expect

    site.form.evaluate("for (const el of document.querySelectorAll('input, textarea')) el.value = ''")
    site.model.replies.clear()
    site.model.add(*read_then("Reading.", Act("Typing.", "type", "Bio", 'textbox "Bio"', {"text": "Pioneer."}),
                              done="Understood."))
    panel = site.panel
    site.new_task("Write Pioneer. in my bio.")
    card = panel.locator(".approval")
    expect(card).to_have_count(1)
    card.locator("button.more").click()
    card.locator("button[data-kind=note]").click()
    note = card.locator("textarea.note")
    expect(note).to_be_focused()
    note.fill(LONG_NOTE)
    panel.keyboard.press("Enter")
    expect(panel.locator(".item.assistant .text").last).to_have_text("Understood.")
    declined = panel.locator(".item.tool[data-tool=type].status-declined").last
    expect(declined.locator(".status")).to_have_text("declined")
    expect(declined.locator(".decline-note")).to_have_text(f"Your note: “{LONG_NOTE}”")
    for width in WIDTHS:
        panel.set_viewport_size({"width": width, "height": 900})
        box = declined.evaluate("""card => {
            const rect = (el) => el.getBoundingClientRect();
            const style = getComputedStyle(card);
            const inner = card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
            return {inner, what: rect(card.querySelector('.tool-line .what')).width,
                    lineBottom: rect(card.querySelector('.tool-line')).bottom,
                    noteTop: rect(card.querySelector('.decline-note')).top,
                    note: rect(card.querySelector('.decline-note')).width,
                    overflow: card.scrollWidth - card.clientWidth,
                    pageOverflow: document.querySelector('.scroll').scrollWidth - document.querySelector('.scroll').clientWidth};
        }""")
        assert box["what"] >= 0.5 * box["inner"], (width, box)  # the call's line keeps its room
        assert box["noteTop"] >= box["lineBottom"] - 1, (width, box)  # the note is under it
        assert box["note"] >= box["inner"] - 2, (width, box)  # at the card's full width
        assert box["overflow"] <= 0 and box["pageOverflow"] <= 0, (width, box)  # the long URL breaks
    declined.scroll_into_view_if_needed()
    _shots(site, panel, "decline-note")


TITLE = "Check the order form."


def _turn(site, text: str, reply: str, *, new: bool, tab=None) -> None:
    from playwright.sync_api import expect

    site.model.replies.clear()
    site.model.add(Reply(text=reply))
    panel = site.panel
    if new:
        site.new_task(text, tab=tab)
    else:
        (tab or site.form).bring_to_front()
        panel.bring_to_front()
        panel.fill("#message", text)
        panel.press("#message", "Enter")
    expect(panel.locator(".item.assistant .text").last).to_have_text(reply)


def test_threads_with_the_same_title_show_when_they_started_their_site_and_their_turns(site):
    from playwright.sync_api import expect

    other = site.context.new_page()
    (site.web_dir / "other.html").write_text("<!doctype html><title>Other site</title><p>Orders</p>", encoding="utf-8")
    other.goto(site.web.url("other.html"))
    form_site, other_site = urlsplit(site.origin).netloc, urlsplit(site.web.url("")).netloc
    # Four threads with the same title: two on each site, with one, two or three turns.
    plan = [(site.form, 1), (site.form, 2), (other, 1), (other, 3)]
    for n, (tab, turns) in enumerate(plan):
        _turn(site, TITLE, f"Checked {n}.", new=True, tab=tab)
        for more in range(1, turns):
            _turn(site, f"And again ({more}).", f"Checked {n} again {more}.", new=False, tab=tab)
    other.close()
    panel = site.panel
    expect(panel.locator("#thread-title")).to_have_text(TITLE)
    _show_threads(panel)
    same = panel.locator("#threads button.thread", has=panel.locator(".title", has_text=TITLE))
    expect(same).to_have_count(4)
    facts = same.locator(".thread-facts").all_inner_texts()
    assert len(set(facts)) == 4, facts
    expected = {(form_site, "1 turn"), (form_site, "2 turns"), (other_site, "1 turn"), (other_site, "3 turns")}
    seen = set()
    for text in facts:
        found = re.fullmatch(rf"{STARTED} · (\S+) · (\d+ turns?)", text)
        assert found, text
        seen.add((found.group(3), found.group(4)))
    assert seen == expected, facts
    assert same.first.locator(".thread-facts").get_attribute("title").startswith("Started ")
    assert not re.search(r"\d{9,}", panel.locator("#threads").inner_text())  # no raw epoch time
    expect(same.locator(".title")).to_have_text([TITLE] * 4)
    _shots(site, panel, "same-titles")
    _hide_threads(panel)

    # The settings page's thread choosers tell them apart the same way.
    settings = site.extension_page("settings.html")
    for chooser in ("#scope-thread", "#explain-thread"):
        labels = [text for text in settings.locator(f"{chooser} option").all_inner_texts() if text.startswith(TITLE)]
        assert len(labels) == 4 and len(set(labels)) == 4, labels
        assert all(re.fullmatch(rf"{re.escape(TITLE)} — {STARTED} · \S+ · \d+ turns?", label) for label in labels), labels
    assert not re.search(r"\d{9,}", _text_of(settings))
    settings.locator("#scope").evaluate("el => el.scrollIntoView()")
    _shots(site, settings, "settings-threads")
    settings.close()


def test_a_locked_thread_shows_its_lock_in_the_list_and_the_header(site):
    from playwright.sync_api import expect

    _turn(site, "Look at the sign-up form.", "Looked.", new=True)
    panel = site.panel
    thread = _thread_id(panel)
    header = panel.locator("#thread-lock .lock")
    expect(header).to_have_count(0)
    settings = site.extension_page("settings.html")
    settings.select_option("#scope-thread", thread)
    settings.fill("#scope-patterns", f"{site.origin}\n*.shop.example")
    settings.locator("#scope button", has_text="Lock to these sites").click()
    expect(settings.locator("#scope")).to_contain_text(f"Locked to: {site.origin}, *.shop.example")
    expect(settings.locator(f"#scope-thread option[value='{thread}']")).to_contain_text("· locked")

    # The open panel learns it at once (no reload): a lock in the header, named by its sites.
    label = f"Locked to: {site.origin}, *.shop.example"
    panel.bring_to_front()
    expect(header).to_be_visible()
    expect(header).to_have_attribute("title", label)
    expect(panel.get_by_role("img", name=label)).to_have_count(1)
    _show_threads(panel)
    row = panel.locator("#threads button.thread.current")
    expect(row.locator(".lock")).to_have_attribute("aria-label", label)
    expect(row).to_have_accessible_name(re.compile(rf"^{re.escape(label)} Look at the sign-up form\."))
    expect(panel.locator("#threads .lock")).to_have_count(1)  # only the locked thread
    _shots(site, panel, "locked-list")
    _hide_threads(panel)
    _shots(site, panel, "locked-header")
    panel.reload()  # from the host's snapshot too
    expect(panel.locator("#thread-lock .lock")).to_have_attribute("title", label)

    settings.bring_to_front()
    settings.locator("#scope button", has_text="Remove the lock").click()
    expect(settings.locator("#scope")).to_contain_text("Not locked.")
    settings.close()
    panel.bring_to_front()
    expect(header).to_have_count(0)
    expect(panel.locator("#threads .lock")).to_have_count(0)


def test_the_header_stays_on_one_line_with_a_long_title_at_360(site):
    from playwright.sync_api import expect

    title = "Compare the prices of the three kettles on this page and te…"
    _turn(site, "Compare the prices of the three kettles on this page and tell me which one is cheapest.",
          "The blue one.", new=True)
    panel = site.panel
    expect(panel.locator("#thread-title")).to_have_text(title)
    # As the real side panel shows it (here the panel is a tab, which hides "Open in a tab").
    panel.evaluate("document.body.classList.remove('as-tab'); document.getElementById('open-tab').hidden = false")
    for width in WIDTHS:
        panel.set_viewport_size({"width": width, "height": 900})
        header = panel.evaluate("""() => {
            const bar = document.querySelector('.topbar');
            const title = document.getElementById('thread-title');
            const buttons = [...bar.querySelectorAll('button')].filter((b) => !b.hidden)
              .map((b) => { const r = b.getBoundingClientRect(); return {id: b.id, middle: (r.top + r.bottom) / 2, left: r.left, right: r.right}; });
            return {buttons, width: document.documentElement.clientWidth, titleTop: title.getBoundingClientRect().top,
                    cut: title.scrollWidth > title.clientWidth, ellipsis: getComputedStyle(title).textOverflow,
                    titleWidth: title.clientWidth, barHeight: bar.getBoundingClientRect().height};
        }""")
        assert [b["id"] for b in header["buttons"]] == ["toggle-threads", "new-thread", "open-tab", "open-settings"]
        assert max(b["middle"] for b in header["buttons"]) - min(b["middle"] for b in header["buttons"]) < 2, header
        assert all(0 <= b["left"] and b["right"] <= header["width"] for b in header["buttons"]), header
        assert header["barHeight"] < 50, header
        assert header["cut"] and header["ellipsis"] == "ellipsis", header
        assert header["titleWidth"] >= 120, header  # enough of the title stays readable
        for name in ("New thread", "Open in a tab", "Settings"):  # narrow, two are icons named by their words
            expect(panel.get_by_role("button", name=name, exact=True)).to_be_visible()
        expect(panel.locator("#open-tab")).to_have_attribute("title", "Open in a tab")
        site.shot(panel, f"header-{width}")
        site.shot(panel, f"header-{width}", dark=True)
    panel.reload()  # as-tab again for the other tests
    panel.wait_for_selector("body[data-engine=ready]")


def test_the_policy_radios_are_one_size(site):
    settings = site.extension_page("settings.html")
    for width in WIDTHS:
        settings.set_viewport_size({"width": width, "height": 900})
        sizes = settings.locator("#policy input[type=radio]").evaluate_all(
            "els => els.map((el) => { const r = el.getBoundingClientRect(); return [Math.round(r.width * 10), Math.round(r.height * 10)]; })")
        assert len(sizes) == 3 and len(set(map(tuple, sizes))) == 1, (width, sizes)
        settings.locator("#policy").scroll_into_view_if_needed()
        site.shot(settings, f"policy-radios-{width}")
        site.shot(settings, f"policy-radios-{width}", dark=True)
    settings.close()
