"""More widget tasks as an agent does them, in a real browser: APG-style widgets of our own that
test_widget_tasks.py does not cover (accordion, single-select listbox, menu button, tabs with
automatic activation, mixed-state checkbox, radio group, spin button, switch, FAQ disclosure,
toolbar, feed, links made of a span or an image, alert dialog, breadcrumb, landmarks), driven only
through the tools with refs from read_page or from the results' snapshots, each outcome checked
in the page itself."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_tools import module_fixtures, ref_of
from tests.support.apg import in_page, open_page
from tests.support.browser_tools_l2 import l2_site, new_l2_driver

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l2_site, new_l2_driver, "widget-tasks-more")


def line_of(text: str, line_part: str) -> str:
    """The first snapshot line containing `line_part` (stripped), for exact state checks."""
    for line in text.split("\n"):
        if line_part in line:
            return line.strip()
    raise AssertionError(f"no line containing {line_part!r} in:\n{text}")


async def test_an_accordion_section_is_opened_and_its_field_filled(driver):
    text = await open_page(driver, "accordion")
    assert '- button "Billing Address" [collapsed]' in text and 'textbox "City:"' not in text
    opened = await driver.ok("click", element="Billing Address", ref=ref_of(text, 'button "Billing Address"'))
    # The result shows the header's new state and the fields of the panel it opened; the click
    # is verified by the header's own state.
    assert 'button "Billing Address" [expanded]' in opened["text"], opened["text"]
    assert "Verified: the target's own state changed; it now reads [expanded]." in opened["text"], opened["text"]
    assert opened["details"]["evidence"]["outcome"] == "verified"
    assert 'textbox "City:"' in opened["text"], opened["text"]
    text = (await driver.read())["text"]
    assert '- region "Billing Address"' in text and 'textbox "Name:"' not in text, text
    await driver.ok("type", element="City", ref=ref_of(text, 'textbox "City:"'), text="Lyon")
    assert await in_page(driver, "accordion", "document.getElementById('b-city').value") == "Lyon"
    assert await in_page(driver, "accordion", "[document.getElementById('acc-p1').hidden, document.getElementById('acc-p2').hidden]") == [True, False]
    # By keyboard: End moves to the last header, Enter opens it.
    text = (await driver.read())["text"]
    pressed = await driver.ok("press_key", key="End", ref=ref_of(text, 'button "Billing Address"'))
    assert 'Focus now: button "Shipping Address" [collapsed]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="Enter")
    assert 'Focus now: button "Shipping Address" [expanded]' in pressed["text"], pressed["text"]
    text = (await driver.read())["text"]
    await driver.ok("type", element="Shipping street", ref=ref_of(text, 'textbox "Street:"'), text="3 Rue Neuve")
    assert await in_page(driver, "accordion", "document.getElementById('s-street').value") == "3 Rue Neuve"


async def test_a_listbox_option_is_chosen_by_click_and_by_keys(driver):
    text = await open_page(driver, "listbox")
    assert 'option "Apple" [selected]' in text
    await driver.ok("click", element="Mango", ref=ref_of(text, 'option "Mango"'))
    assert await in_page(driver, "listbox", "document.getElementById('choice').textContent") == "Mango"
    text = (await driver.read())["text"]
    assert re.search(r'- option "Mango" \[selected\] \[ref=[^\]]+\] \[active\]', text), text
    assert re.search(r'- listbox "Base fruit:" \[ref=[^\]]+\] \[focused\]', text), text
    # The arrows move the selection; the answer names the option the list points at.
    pressed = await driver.ok("press_key", key="ArrowDown")
    assert 'Focus now: listbox "Base fruit:", at option "Peach" [selected]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="s")  # type-ahead
    assert 'at option "Strawberry" [selected]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "listbox", "document.getElementById('choice').textContent") == "Strawberry"
    assert await in_page(driver, "listbox", "document.getElementById('fruits').getAttribute('aria-activedescendant')") == "fr-strawberry"


async def test_a_menu_button_opens_its_menu_and_a_choice_applies(driver):
    text = await open_page(driver, "menubutton")
    assert "Mark as read" not in text  # the closed menu is hidden
    opened = await driver.ok("click", element="Actions", ref=ref_of(text, 'button "Actions"'))
    assert 'button "Actions" [expanded]' in opened["text"], opened["text"]
    assert '- menu "Actions"' in opened["text"] and 'menuitem "Archive"' in opened["text"], opened["text"]
    closed = await driver.ok("click", element="Archive", ref=ref_of(opened["text"], 'menuitem "Archive"'))
    assert await in_page(driver, "menubutton", "document.getElementById('status').textContent") == "Archived"
    changes = closed["text"].split("--- incremental snapshot ---")[1]
    assert '- button "Actions" [collapsed]' in changes.split("Added/changed:\n")[1].split("\n\n")[0], changes
    assert 'menuitem "Archive"' in changes.split("Removed:\n")[1].split("\n\n")[0], changes
    # By keyboard: Enter opens the menu on its first item, the arrow moves, Enter acts.
    text = (await driver.read())["text"]
    pressed = await driver.ok("press_key", key="Enter", ref=ref_of(text, 'button "Actions"'))
    assert 'Focus now: menuitem "Mark as read"' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="ArrowDown")
    assert 'Focus now: menuitem "Flag"' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="Enter")
    assert 'Focus now: button "Actions" [collapsed]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "menubutton", "document.getElementById('status').textContent") == "Flagged"


async def test_tabs_activate_on_arrow_keys_and_the_third_panel_is_read(driver):
    text = await open_page(driver, "tabs")
    assert 'tab "Mercury" [selected]' in text and "Olympus" not in text
    pressed = await driver.ok("press_key", key="ArrowRight", ref=ref_of(text, 'tab "Mercury"'))
    assert 'Focus now: tab "Venus" [selected]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="ArrowRight")
    assert 'Focus now: tab "Earth" [selected]' in pressed["text"], pressed["text"]
    text = (await driver.read())["text"]
    assert re.search(r'- tab "Earth" \[selected\] \[ref=[^\]]+\] \[focused\]', text), text
    panel = text.split('- tabpanel "Earth"', 1)[1].split("\n- ", 1)[0]
    assert "Earth is the densest planet of the solar system; its single moon steadies its tilt." in panel, text
    assert await in_page(driver, "tabs", "document.getElementById('panel-earth').hidden") is False
    # A click selects too.
    clicked = await driver.ok("click", element="Mars", ref=ref_of(text, 'tab "Mars"'))
    assert "Olympus Mons" in clicked["text"], clicked["text"]
    assert await in_page(driver, "tabs", "document.getElementById('tab-mars').getAttribute('aria-selected')") == "true"


async def test_a_mixed_state_checkbox_checks_the_whole_group(driver):
    text = await open_page(driver, "tristate")
    assert line_of(text, 'checkbox "All toppings"').startswith('- checkbox "All toppings" [checked=mixed] [ref='), text
    clicked = await driver.ok("click", element="All toppings", ref=ref_of(text, 'checkbox "All toppings"'))
    assert 'checkbox "All toppings" [checked]' in clicked["text"], clicked["text"]
    assert await in_page(driver, "tristate", "[...document.querySelectorAll('input')].map((b) => b.checked)") == [True] * 4
    assert await in_page(driver, "tristate", "document.getElementById('all').getAttribute('aria-checked')") == "true"
    text = (await driver.read())["text"]
    for topping in ("Cheese", "Olives", "Mushrooms", "Peppers"):
        assert f'checkbox "{topping}" [checked]' in text, text
    # Clearing one box makes the group mixed again, and the snapshot says so.
    await driver.ok("click", element="Olives", ref=ref_of(text, 'checkbox "Olives"'))
    text = (await driver.read())["text"]
    assert 'checkbox "All toppings" [checked=mixed]' in text and 'checkbox "Olives" [ref=' in text, text
    # Space on the group box: mixed -> all.
    pressed = await driver.ok("press_key", key="Space", ref=ref_of(text, 'checkbox "All toppings"'))
    assert 'Focus now: checkbox "All toppings" [checked]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "tristate", "[...document.querySelectorAll('input')].every((b) => b.checked)") is True


async def test_a_radio_group_is_set_by_click_and_by_arrow_keys(driver):
    text = await open_page(driver, "radiogroup")
    assert 'radio "Standard (5 days)" [checked]' in text
    clicked = await driver.ok("click", element="Express", ref=ref_of(text, 'radio "Express (2 days)"'))
    assert 'radio "Express (2 days)" [checked]' in clicked["text"], clicked["text"]
    assert await in_page(driver, "radiogroup", "document.getElementById('cost').textContent") == "$7"
    pressed = await driver.ok("press_key", key="ArrowDown")
    assert 'Focus now: radio "Overnight" [checked]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="ArrowDown")  # wraps to the first
    assert 'Focus now: radio "Standard (5 days)" [checked]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="ArrowUp")
    assert 'Focus now: radio "Overnight" [checked]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "radiogroup", "document.getElementById('cost').textContent") == "$15"
    checked = await in_page(driver, "radiogroup", "[...document.querySelectorAll('[role=radio]')].map((r) => [r.getAttribute('aria-checked'), r.tabIndex])")
    assert checked == [["false", -1], ["false", -1], ["true", 0]]


async def test_a_spin_button_is_set_by_keys_and_by_typing(driver):
    text = await open_page(driver, "spinbutton")
    assert 'spinbutton "Guests" [value="2"] [min=1] [max=8]' in text
    pressed = await driver.ok("press_key", key="ArrowUp", ref=ref_of(text, 'spinbutton "Guests"'))
    assert 'Focus now: spinbutton "Guests" [value="3"] [min=1] [max=8]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="End")
    assert 'Focus now: spinbutton "Guests" [value="8"]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "spinbutton", "document.getElementById('guests').getAttribute('aria-valuenow')") == "8"
    text = (await driver.read())["text"]
    await driver.ok("type", element="Guests", ref=ref_of(text, 'spinbutton "Guests"'), text="5")
    assert await in_page(driver, "spinbutton", "document.getElementById('guests').getAttribute('aria-valuenow')") == "5"
    assert await in_page(driver, "spinbutton", "document.getElementById('summary').textContent") == "Table for 5"
    text = (await driver.read())["text"]
    assert 'spinbutton "Guests" [value="5"]' in text and 'text: "Table for 5"' in text, text
    # Trusted typing, then the field is left: a value past the bound is kept within it.
    await driver.ok("type_trusted", element="Guests", ref=ref_of(text, 'spinbutton "Guests"'), text="12")
    await driver.ok("press_key", key="Tab")
    assert await in_page(driver, "spinbutton", "document.getElementById('guests').getAttribute('aria-valuenow')") == "8"
    assert await in_page(driver, "spinbutton", "document.getElementById('guests').value") == "8"


async def test_a_switch_is_turned_on_and_its_state_shows(driver):
    text = await open_page(driver, "switch")
    # Off is said as a state: a switch is a toggle by its role.
    assert line_of(text, 'switch "Notifications"').startswith('- switch "Notifications" [checked=false] [ref='), text
    assert 'switch "Sounds" [checked]' in text
    clicked = await driver.ok("click", element="Notifications", ref=ref_of(text, 'switch "Notifications"'))
    assert 'switch "Notifications" [checked]' in clicked["text"], clicked["text"]
    assert await in_page(driver, "switch", "document.getElementById('notify').getAttribute('aria-checked')") == "true"
    text = (await driver.read())["text"]
    assert 'switch "Notifications" [checked]' in text and 'text: "Notifications are on."' in text, text
    pressed = await driver.ok("press_key", key="Space", ref=ref_of(text, 'switch "Sounds"'))
    assert 'Focus now: switch "Sounds" [checked=false]' in pressed["text"], pressed["text"]
    # The key is verified by its target's own state, which the page's changes show.
    assert "Verified: the target's own state changed" in pressed["text"], pressed["text"]
    assert re.search(r'switch "Sounds" \[checked=false\] \[ref=[^\]]+\] \[focused\]  \(was: \[checked\]\)', pressed["text"]), \
        pressed["text"]
    assert pressed["details"]["evidence"]["outcome"] == "verified"
    assert await in_page(driver, "switch", "document.getElementById('sounds').getAttribute('aria-checked')") == "false"
    # Without a ref the key acts on the focused element, whose own state is the verdict too.
    again = await driver.ok("press_key", key="Space")
    assert "Verified: the focused element's own state changed" in again["text"], again["text"]
    assert await in_page(driver, "switch", "document.getElementById('sounds').getAttribute('aria-checked')") == "true"


async def test_a_disclosure_shows_the_faq_answer_to_read(driver):
    text = await open_page(driver, "disclosure")
    assert "Permits cost" not in text
    question = ref_of(text, "Do I need a permit for the east lot?")
    opened = await driver.ok("click", element="Do I need a permit for the east lot?", ref=question)
    assert "Permits cost $12 a month and are sold at the front desk between 9 am and 4 pm." in opened["text"], opened["text"]
    assert await in_page(driver, "disclosure", "document.getElementById('faq-2').classList.contains('open')") is True
    text = (await driver.read())["text"]
    assert re.search(r'button "[^"]*Do I need a permit for the east lot\?" \[expanded\]', text), text
    assert 'text: "Yes. Permits cost $12 a month and are sold at the front desk between 9 am and 4 pm."' in text, text
    # Closing it again with the ref the agent has just read.
    closed = await driver.ok("click", element="Do I need a permit for the east lot?", ref=ref_of(text, "Do I need a permit"))
    changes = closed["text"].split("--- incremental snapshot ---")[1]
    assert "Permits cost" in changes.split("Removed:\n")[1].split("\n\n")[0], changes
    assert "Permits cost" not in changes.split("Removed:")[0], changes
    assert await in_page(driver, "disclosure", "document.getElementById('faq-2').classList.contains('open')") is False


async def test_a_toolbar_toggles_and_moves_by_arrow_keys(driver):
    text = await open_page(driver, "toolbar")
    assert '- toolbar "Text formatting"' in text
    clicked = await driver.ok("click", element="Bold", ref=ref_of(text, 'button "Bold"'))
    assert 'button "Bold" [pressed]' in clicked["text"], clicked["text"]
    assert await in_page(driver, "toolbar", "document.getElementById('note').style.fontWeight") == "bold"
    # One tab stop: the arrows move the focus along the toolbar.
    pressed = await driver.ok("press_key", key="ArrowRight")
    assert 'Focus now: button "Italic"' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="Enter")
    assert 'Focus now: button "Italic" [pressed]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "toolbar", "document.getElementById('note').style.fontStyle") == "italic"
    pressed = await driver.ok("press_key", key="End")
    assert 'Focus now: button "Copy"' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="ArrowLeft")
    assert 'Focus now: radio "Right"' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="Space")
    assert 'Focus now: radio "Right" [checked]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "toolbar", "document.getElementById('note').style.textAlign") == "right"
    stops = await in_page(driver, "toolbar", "[...document.querySelectorAll('#tb button')].filter((b) => b.tabIndex === 0).map((b) => b.textContent)")
    assert stops == ["Right"]
    text = (await driver.read())["text"]
    assert 'button "Bold" [pressed]' in text and 'button "Italic" [pressed]' in text and 'radio "Right" [checked]' in text, text


async def test_a_feed_loads_more_articles_as_it_is_scrolled(driver):
    await driver.open_fixture("apg/feed.html?by=scroll")
    text = (await driver.read())["text"]
    assert 'article "Recipe 5: Pumpkin bread"' in text and "Recipe 6" not in text
    for _ in range(6):
        if 'article "Recipe 12:' in text:
            break
        scrolled = await driver.ok("scroll", direction="down", amount="end")
        assert "Scrolled the page down" in scrolled["text"] or "moved nothing" in scrolled["text"], scrolled["text"]
        # The agent's tab is in the background: the page's scroll handlers are told all the same,
        # and the answer says what a hidden tab does not do.
        assert "moved nothing" in scrolled["text"] or "The tab is in the background" in scrolled["text"], scrolled["text"]
        text = (await driver.read())["text"]
        if "Loading more recipes" in text:
            await driver.ok("wait_for", textGone="Loading more recipes")
        else:  # nothing shows yet: a patient agent gives the page a moment
            await driver.ok("wait_for", timeMs=1500)
        text = (await driver.read())["text"]
    visibility = await driver.evaluate("apg/feed.html?by=scroll", "document.visibilityState")
    assert 'article "Recipe 12: Potato gratin"' in text, f"visibilityState={visibility}\n{text}"
    assert await driver.evaluate("apg/feed.html?by=scroll", "!!document.getElementById('art-12')") is True
    assert await driver.evaluate("apg/feed.html?by=scroll", "document.getElementById('feed').getAttribute('aria-busy')") == "false"


async def test_a_feed_is_walked_article_by_article_with_page_down(driver):
    await driver.open_fixture("apg/feed.html?by=keys")
    text = (await driver.read())["text"]
    pressed = await driver.ok("press_key", key="PageDown", ref=ref_of(text, 'article "Recipe 1: Lentil soup"'))
    assert 'Focus now: article "Recipe 2: Lemon tart"' in pressed["text"], pressed["text"]
    waits = 0
    for _ in range(20):
        if 'Focus now: article "Recipe 12:' in pressed["text"]:
            break
        before = pressed["text"].split("Focus now: ", 1)[1]
        pressed = await driver.ok("press_key", key="PageDown")
        if pressed["text"].split("Focus now: ", 1)[1] == before:
            # The focus stayed on the last article: the page says it is loading more; wait for it.
            text = (await driver.read())["text"]
            assert "Loading more recipes" in text and '- feed "Latest recipes" [busy]' in text, text
            await driver.ok("wait_for", textGone="Loading more recipes")
            waits += 1
    assert 'Focus now: article "Recipe 12: Potato gratin"' in pressed["text"], pressed["text"]
    assert waits >= 1
    assert await driver.evaluate("apg/feed.html?by=keys", "document.activeElement.id") == "art-12"
    text = (await driver.read())["text"]
    assert re.search(r'- article "Recipe 12: Potato gratin" \[desc="[^"]+"\] \[ref=[^\]]+\] \[focused\]', text), text


async def test_links_made_of_a_span_and_an_image_are_followed(driver):
    text = await open_page(driver, "spanlink")
    assert '- link "opening hours" [ref=' in text and '- link "Floor plan" [ref=' in text, text
    await driver.ok("click", element="opening hours", ref=ref_of(text, 'link "opening hours"'))
    assert await in_page(driver, "spanlink", "location.search") == "?page=hours"
    text = (await driver.read())["text"]
    assert "Tuesday to Sunday, 10:00 to 18:00" in text and 'heading "Opening hours"' in text, text
    # Enter on the span link, as the keyboard user does.
    await driver.ok("press_key", key="Enter", ref=ref_of(text, 'link "Back to the guide"'))
    assert await in_page(driver, "spanlink", "location.search") == ""
    text = (await driver.read())["text"]
    await driver.ok("click_trusted", element="Floor plan", ref=ref_of(text, 'link "Floor plan"'))
    assert await in_page(driver, "spanlink", "location.search") == "?page=map"
    assert 'heading "Floor plan"' in (await driver.read())["text"]


async def test_an_alert_dialog_confirms_a_delete(driver):
    text = await open_page(driver, "alertdialog")
    opened = await driver.ok("click", element="Delete budget-2024.xlsx", ref=ref_of(text, 'button "Delete budget-2024.xlsx"'))
    assert '- alertdialog "Delete file?" [modal]' in opened["text"], opened["text"]
    # The click is verified by what it plainly did: a dialog opened.
    assert 'Verified: a dialog opened ("Delete file?").' in opened["text"], opened["text"]
    assert opened["details"]["evidence"]["outcome"] == "verified"
    assert re.search(r'button "Keep file" \[ref=[^\]]+\] \[focused\]', opened["text"]), opened["text"]
    # The dialog's description names the file (as desc= on the dialog's line).
    assert '[desc="\\"budget-2024.xlsx\\" will be deleted for everyone. This cannot be undone."]' in opened["text"], opened["text"]
    # The page behind the modal is still listed, but a click there is refused: the backdrop covers it.
    behind = await driver.call("click", element="Delete logo.png", ref=ref_of(text, 'button "Delete logo.png"'))
    assert not behind["ok"] and behind["error"]["code"] == "occluded", behind
    confirmed = await driver.ok("click", element="Delete", ref=ref_of(opened["text"], 'button "Delete"'))
    assert "Verified: the dialog it was in closed." in confirmed["text"], confirmed["text"]
    files = "[...document.querySelectorAll('#files li')].map((li) => li.dataset.file)"
    assert await in_page(driver, "alertdialog", files) == ["agenda.docx", "logo.png"]
    text = (await driver.read())["text"]
    assert 'text: "budget-2024.xlsx"' not in text and 'text: "Deleted budget-2024.xlsx."' in text, text
    assert "- alertdialog" not in text, text
    # By keyboard: Enter opens the dialog on "Keep file", Tab moves to Delete, Enter confirms.
    pressed = await driver.ok("press_key", key="Enter", ref=ref_of(text, 'button "Delete logo.png"'))
    assert 'Focus now: button "Keep file"' in pressed["text"], pressed["text"]
    assert 'Verified: a dialog opened (alertdialog "Delete file?" [modal]' in pressed["text"], pressed["text"]
    pressed = await driver.ok("press_key", key="Tab")
    assert 'Focus now: button "Delete"' in pressed["text"], pressed["text"]
    await driver.ok("press_key", key="Enter")
    assert await in_page(driver, "alertdialog", files) == ["agenda.docx"]


async def test_a_breadcrumb_shows_the_current_page_and_leads_up(driver):
    text = await open_page(driver, "breadcrumb")
    crumbs = text.split('- navigation "Breadcrumb"', 1)[1].split("\n- ", 1)[0]
    links = re.findall(r'link "([^"]+)"( \[current\])?', crumbs)
    assert links == [("Home", ""), ("Guides", ""), ("Sewing", ""), ("Hemming a skirt", " [current]")], text
    await driver.ok("click", element="Sewing", ref=ref_of(crumbs, 'link "Sewing"'))
    assert await in_page(driver, "breadcrumb", "location.search") == "?at=sewing"
    assert await in_page(driver, "breadcrumb", "document.querySelector('[aria-current=page]').textContent") == "Sewing"
    text = (await driver.read())["text"]
    assert re.search(r'link "Sewing" \[current\] \[ref=', text) and "Hemming" not in text, text


async def test_read_page_lists_the_landmarks(driver):
    text = await open_page(driver, "landmarks")
    landmarks = [line.strip() for line in text.split("\n")
                 if re.match(r"\s*- (banner|navigation|main|complementary|contentinfo|search|region|form)\b", line)]
    for expected in ('- banner', '- search "Catalogue"', '- navigation "Main"', '- main', '- region "Opening hours"',
                     '- form "Newsletter"', '- complementary "Related"', '- contentinfo'):
        assert expected in landmarks, text
    # Nesting as on the page: the search inside the banner, the region and the form inside main.
    assert text.index("- banner") < text.index('  - search "Catalogue"') < text.index('- navigation "Main"')
    main = text.split("\n- main\n", 1)[1].split("\n- ", 1)[0]
    assert '- region "Opening hours"' in main and '- form "Newsletter"' in main, text
    # A section without a name is no region.
    assert '- region "Events"' not in text and "- region\n" not in text, text


async def test_a_click_focuses_an_item_out_of_the_tab_order_as_a_mouse_does(driver):
    # The tree's items have tabindex=-1 and the page never focuses them itself: a real click
    # does, and the keys that follow go to the item clicked.
    text = await open_page(driver, "focusmoves")
    await driver.ok("click", element="About", ref=ref_of(text, 'treeitem "About"'))
    assert await in_page(driver, "focusmoves", "document.activeElement.id") == "t-about"
    text = (await driver.read())["text"]
    assert re.search(r'treeitem "About" \[ref=[^\]]+\] \[focused\]', text), text
    pressed = await driver.ok("press_key", key="ArrowDown")
    assert 'Focus now: treeitem "Contact"' in pressed["text"], pressed["text"]
    assert "incremental snapshot" not in pressed["text"], pressed["text"]  # the page itself did not change
    entered = await driver.ok("press_key", key="Enter")
    assert await in_page(driver, "focusmoves", "document.getElementById('current').textContent") == "Contact"
    # A key that changed the page says what changed, and that the refs not shown still hold.
    changes = entered["text"].split("--- incremental snapshot ---\n", 1)[1]
    assert '"Contact"' in changes.split("Added/changed:\n", 1)[1].split("\n\n", 1)[0], entered["text"]
    assert "Other refs still hold." in changes and entered["details"]["changed"] is True
    # A click on something no press can focus takes the focus away, as a mouse's does.
    await driver.ok("click", element="Home", ref=ref_of(text, 'treeitem "Home"'))
    assert await in_page(driver, "focusmoves", "document.activeElement.id") == "t-home"


async def test_a_heading_the_page_moves_the_focus_to_is_marked_focused(driver):
    text = await open_page(driver, "focusmoves")
    assert '- heading "Details" [level=2]\n' in text + "\n", text
    await driver.ok("click", element="Show details", ref=ref_of(text, 'button "Show details"'))
    text = (await driver.read())["text"]
    assert '- heading "Details" [level=2] [focused]' in text, text
    pressed = await driver.ok("press_key", key="x")
    assert 'Focus now: heading "Details" [level=2]' in pressed["text"], pressed["text"]
    assert await in_page(driver, "focusmoves", "document.getElementById('on-heading').textContent") == "1"


async def test_a_trusted_click_on_a_scrolled_page_is_checked_where_it_lands(driver):
    # The browser's hit test takes document coordinates: the element far down the page is
    # checked where the click lands once the page is scrolled to it, in a background tab and in
    # front.
    text = await open_page(driver, "focusmoves")
    far = ref_of(text, 'button "Far button"')
    await driver.ok("click_trusted", element="Far button", ref=far)
    assert await in_page(driver, "focusmoves", "[document.getElementById('far').textContent, scrollY > 1000]") == \
        ["Pressed", True]
    await driver.evaluate("apg/focusmoves.html", "document.getElementById('far').textContent = 'Far button'")
    text = (await driver.read())["text"]
    tab = int(text.split("]", 1)[0].removeprefix("[tabId="))
    await driver.ok("tab_focus", tabId=tab)
    await driver.ok("click_trusted", element="Far button", ref=ref_of(text, 'button "Far button"'))
    assert await in_page(driver, "focusmoves", "document.getElementById('far').textContent") == "Pressed"


async def test_an_editor_that_reads_legacy_key_numbers_saves_on_enter(driver):
    # Many widgets read `event.which || event.keyCode`: the Enter that `type` sends must carry them.
    text = await open_page(driver, "focusmoves")
    await driver.ok("type", element="Description", ref=ref_of(text, 'textbox "Description"'), text="Lottery Winnings",
                    submit=True)
    assert await in_page(driver, "focusmoves", "document.getElementById('saved').textContent") == "Lottery Winnings"


async def test_a_tight_budget_keeps_the_structure_that_holds_what_it_lists(driver):
    # The budget drops structure before refs, but not the grid and rows the cells' refs sit in:
    # a line is never nested deeper than one level under the line before it.
    await open_page(driver, "sortable")
    text = (await driver.read(maxTokens=0))["text"]
    body = [line for line in text.split("\n") if line.lstrip().startswith("- ")]
    depths = [(len(line) - len(line.lstrip())) // 2 for line in body]
    assert depths[0] == 0 and all(b <= a + 1 for a, b in zip(depths, depths[1:])), text
    assert '- table "Plans, sortable by column"\n  - row\n' in text, text


async def test_structure_the_budget_emptied_is_not_listed_bare(driver):
    # A budget that drops a list's text leaves no bare "- list" / "- listitem" lines behind:
    # they would say nothing and cost what the text cost.
    await open_page(driver, "breadcrumb")
    items = "".join(f"<li>Plain note number {n}, with words enough to cost the budget something</li>" for n in range(40))
    await in_page(driver, "breadcrumb", f"document.body.insertAdjacentHTML('beforeend', '<ul>{items}</ul>'), true")
    result = await driver.read(maxTokens=300)
    text = result["text"]
    assert result["details"]["truncatedNodes"] > 0 and 'link "Hemming a skirt" [current]' in text, text
    lines = [line for line in text.split("\n") if line.lstrip().startswith("- ")]
    depth = [len(line) - len(line.lstrip()) for line in lines]
    empty = [line for i, line in enumerate(lines) if re.fullmatch(r" *- (list|listitem)", line)
             and (i + 1 == len(lines) or depth[i + 1] <= depth[i])]
    assert not empty and "- listitem\n" in text, text  # the breadcrumb's items, which hold its links, stay


async def test_refs_from_a_read_stay_good_after_writes_that_left_their_elements_alone(driver):
    # A write's snapshot keeps the refs of the elements that did not change: a trusted key on
    # a ref from the first read still lands, after a click that changed the page.
    text = await open_page(driver, "focusmoves")
    cell = ref_of(text, 'textbox "Description"')
    await driver.ok("click", element="About", ref=ref_of(text, 'treeitem "About"'))
    entered = await driver.ok("press_key", ref=cell, key="End")
    assert 'Focus now: textbox "Description"' in entered["text"], entered["text"]
    typed = await driver.ok("type_trusted", element="Description", ref=cell, text=" 2", mode="append")
    assert re.search(r'Focus now: textbox "Description" \[value="[^"]* 2"\]', typed["text"]), typed["text"]
