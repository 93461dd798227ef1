"""Widget tasks as an agent does them, in a real browser: APG-style widgets of our own (a combobox
that filters on keyup, a menubar, a date picker dialog, an auto-rotating carousel, sliders, a file
tree, a sortable table, a modal dialog form, a grid edited in place), driven only through the
tools with refs from read_page or from the results' snapshots (trusted keys answer with the
focused element), each outcome checked in the page itself."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_tools import module_fixtures, ref_of
from tests.support.apg import in_page, open_page
from tests.support.browser_tools_l2 import l2_site, new_l2_driver

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l2_site, new_l2_driver, "widget-tasks")


async def test_a_combobox_that_filters_on_keyup(driver):
    text = await open_page(driver, "combobox")
    field = ref_of(text, 'combobox "State"')
    # Typed as an agent first types, without asking for keys: a combobox gets them all the same.
    typed = await driver.ok("type", element="State", ref=field, text="Co")
    assert "key by key (it suggests as it is typed in)" in typed["text"], typed["text"]
    # The result's snapshot shows the list the keys opened; its options can be clicked.
    assert '- listbox "States"' in typed["text"] and 'option "Connecticut"' in typed["text"]
    await driver.ok("click", element="Colorado", ref=ref_of(typed["text"], 'option "Colorado"'))
    assert await in_page(driver, "combobox", "document.getElementById('state').value") == "Colorado"
    # The keyboard way: trusted typing, then the arrows move the active option, Enter picks it.
    text = (await driver.read())["text"]
    await driver.ok("type_trusted", element="State", ref=ref_of(text, 'combobox "State"'), text="Ala")
    await driver.ok("press_key", key="ArrowDown")
    pressed = await driver.ok("press_key", key="ArrowDown")
    assert 'Focus now: combobox "State" [value="Ala"] [expanded], at option "Alaska" [selected]' in pressed["text"]
    text = (await driver.read())["text"]
    assert re.search(r'- option "Alaska" \[selected\] \[ref=[^\]]+\] \[active\]', text), text
    assert re.search(r'- combobox "State" \[value="Ala"\] \[expanded\] \[ref=[^\]]+\] \[focused\]', text), text
    await driver.ok("press_key", key="Enter")
    assert await in_page(driver, "combobox", "document.getElementById('state').value") == "Alaska"


async def test_a_menubar_item_opens_its_menu_and_a_choice_applies(driver):
    text = await open_page(driver, "menubar")
    assert "Sans-serif" not in text  # closed menus are hidden
    opened = await driver.ok("click", element="Font", ref=ref_of(text, 'menuitem "Font"'))
    assert "new tab or window" not in opened["text"]  # the page's own open() opens nothing
    assert 'menuitemradio "Serif" [checked]' in opened["text"]
    chosen = await driver.ok("click", element="Sans-serif", ref=ref_of(opened["text"], 'menuitemradio "Sans-serif"'))
    assert await in_page(driver, "menubar", "document.getElementById('text').style.fontFamily") == "sans-serif"
    # The choice closed its menu: the answer says the item's state and that it is out of sight.
    assert "it now reads [checked] (it is no longer shown)." in chosen["text"], chosen["text"]
    # By keyboard: Enter opens Style, the arrow moves to Italic, Enter toggles it.
    text = (await driver.read())["text"]
    await driver.ok("press_key", key="Enter", ref=ref_of(text, 'menuitem "Style"'))
    await driver.ok("press_key", key="ArrowDown")
    await driver.ok("press_key", key="Enter")
    assert await in_page(driver, "menubar", "document.getElementById('text').style.fontStyle") == "italic"


async def test_a_date_picker_dialog_shows_weeks_and_picks_a_day(driver):
    text = await open_page(driver, "datepicker")
    opened = await driver.ok("click", element="Choose Date", ref=ref_of(text, 'button "Choose Date"'))
    dialog = opened["text"]
    assert '- dialog "April 2026"' in dialog and 'row: "Su | Mo | Tu | We | Th | Fr | Sa"' in dialog
    # Weeks are rows: April 2026 starts on a Wednesday, after three empty cells.
    first_week = dialog.split("    - row\n", 2)[1]
    cells = [line.strip() for line in first_week.split("\n")[:7]]
    assert [re.sub(r" \[.*", "", c) for c in cells] == ["- gridcell"] * 3 + [f'- gridcell "{d}"' for d in "1234"], cells
    moved = await driver.ok("click", element="next month", ref=ref_of(dialog, 'button "next month"'))
    assert '- dialog "May 2026"' in moved["text"]
    text = (await driver.read())["text"]
    picked = await driver.ok("click", element="20", ref=ref_of(text, 'gridcell "20"'))
    assert re.search(r'gridcell "20" \[selected\] \[ref=[^\]]+\] \[focused\]', picked["text"]), picked["text"]
    text = (await driver.read())["text"]
    done = await driver.ok("click", element="OK", ref=ref_of(text, 'button "OK"'))
    assert 'textbox "Date (mm/dd/yyyy)" [value="05/20/2026"]' in done["text"]
    assert await in_page(driver, "datepicker", "document.getElementById('date').value") == "05/20/2026"


async def test_an_auto_rotating_carousel_is_stopped_then_stepped(driver):
    text = await open_page(driver, "carousel")
    stopped = await driver.ok("click", element="Stop", ref=ref_of(text, 'button "Stop automatic slide show"'))
    assert 'button "Start automatic slide show"' in stopped["text"]
    assert 'Verified: the target\'s own label changed; it now reads "Start automatic slide show".' in stopped["text"], \
        stopped["text"]
    shown = await in_page(driver, "carousel", "document.querySelector('[aria-roledescription=slide]').getAttribute('aria-label')")
    text = (await driver.read())["text"]
    assert f'- group "{shown}"' in text
    await driver.ok("click", element="Next Slide", ref=ref_of(text, 'button "Next Slide"'))
    after = await in_page(driver, "carousel", "document.querySelector('[aria-roledescription=slide]').getAttribute('aria-label')")
    assert int(after.split()[0]) == int(shown.split()[0]) % 4 + 1
    assert f'- group "{after}"' in (await driver.read())["text"]


async def test_sliders_are_set_by_keys_with_their_values_read_back(driver):
    text = await open_page(driver, "slider")
    assert 'slider "Temperature" [value="20 °C"] [now=20] [min=10] [max=30]' in text
    # Several steps in one call; Enter and Space, which act on what they press, are pressed once.
    stepped = await driver.ok("press_key", key="ArrowRight", ref=ref_of(text, 'slider "Temperature"'), repeat=3)
    assert 'Pressed ArrowRight 3 times on slider "Temperature"' in stepped["text"], stepped["text"]
    assert 'Focus now: slider "Temperature" [value="23 °C"] [now=23]' in stepped["text"], stepped["text"]
    refused = await driver.call("press_key", key="Enter", repeat=2)
    assert refused["error"]["code"] == "invalid_params" and "once per call" in refused["error"]["message"], refused
    await driver.ok("press_key", key="ArrowLeft", ref=ref_of(text, 'slider "Temperature"'), repeat=3)
    # A slider takes no typed text; the refusal says how it is set.
    typed = await driver.call("type", element="Red", ref=ref_of(text, 'slider "Red"'), text="200")
    assert typed["error"]["code"] == "not_editable" and "press_key" in typed["error"]["message"], typed
    # Each key's answer says where the focus is and what it holds now: no read needed between.
    pressed = await driver.ok("press_key", key="End", ref=ref_of(text, 'slider "Red"'))
    assert 'Focus now: slider "Red" [value=255] [min=0] [max=255]' in pressed["text"], pressed["text"]
    for _ in range(5):
        await driver.ok("press_key", key="PageDown")
    pressed = await driver.ok("press_key", key="ArrowLeft")
    assert 'Focus now: slider "Red" [value=204]' in pressed["text"], pressed["text"]
    text = (await driver.read())["text"]
    assert re.search(r'- slider "Red" \[value=204\] \[min=0\] \[max=255\] \[ref=[^\]]+\] \[focused\]', text), text
    assert 'text: "rgb(204, 0, 0)"' in text
    await driver.ok("press_key", key="Home", ref=ref_of(text, 'slider "Temperature"'))
    text = (await driver.read())["text"]
    assert 'slider "Temperature" [value="10 °C"]' in text


async def test_a_file_tree_is_opened_folder_by_folder(driver):
    text = await open_page(driver, "treeview")
    step = await driver.ok("click", element="Reports", ref=ref_of(text, 'treeitem "Reports"'))
    step = await driver.ok("click", element="2025", ref=ref_of(step["text"], 'treeitem "2025"'))
    assert 'treeitem "report-q2.pdf"' in step["text"]
    await driver.ok("click", element="report-q2.pdf", ref=ref_of(step["text"], 'treeitem "report-q2.pdf"'))
    assert await in_page(driver, "treeview", "document.getElementById('picked').textContent") == "report-q2.pdf"
    text = (await driver.read())["text"]
    assert re.search(r'treeitem "report-q2.pdf" \[selected\] \[ref=', text)


async def test_a_sortable_table_reads_as_rows_and_says_its_order(driver):
    text = await open_page(driver, "sortable")
    assert '- columnheader "Plan" [sort=ascending]' in text
    rows = re.findall(r'row: "([^"]*)"', text)
    assert rows == ["Basic | 5 | 10", "Family | 12 | 200", "Pro | 9 | 100"], text
    sorted_up = await driver.ok("click", element="Price", ref=ref_of(text, 'button "Price"'))
    # Rows that only changed order are a change, shown in their new order.
    assert "No structural change" not in sorted_up["text"]
    moved = sorted_up["text"].split("Order changed; these lines now read:\n", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r'row: "([^"]*)"', moved)[-2:] == ["Pro | 9 | 100", "Family | 12 | 200"], sorted_up["text"]
    text = (await driver.read())["text"]
    again = await driver.ok("click", element="Price", ref=ref_of(text, 'button "Price"'))
    assert '- columnheader "Price" [sort=descending]' in again["text"]
    moved = again["text"].split("Order changed; these lines now read:\n", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r'row: "([^"]*)"', moved) == ["Family | 12 | 200", "Pro | 9 | 100", "Basic | 5 | 10"], again["text"]
    text = (await driver.read())["text"]
    assert re.findall(r'row: "([^"]*)"', text) == ["Family | 12 | 200", "Pro | 9 | 100", "Basic | 5 | 10"], text


async def test_a_modal_dialog_form_is_filled_and_submitted(driver):
    text = await open_page(driver, "dialog")
    opened = await driver.ok("click", element="Add Delivery Address", ref=ref_of(text, 'button "Add Delivery Address"'))
    assert re.search(r'- textbox "Street:" \[ref=[^\]]+\] \[focused\]', opened["text"]), opened["text"]
    await driver.ok("type", element="Street", ref=ref_of(opened["text"], 'textbox "Street:"'), text="5 Elm St")
    tabbed = await driver.ok("press_key", key="Tab")  # the dialog keeps the focus inside
    assert 'Focus now: textbox "City:"' in tabbed["text"]
    await driver.ok("type_trusted", element="City", ref=ref_of((await driver.read())["text"], 'textbox "City:"'),
                    text="Shelbyville")
    text = (await driver.read())["text"]
    await driver.ok("type", element="Zip", ref=ref_of(text, 'textbox "Zip:"'), text="12345")
    verified = await driver.ok("click", element="Verify Address", ref=ref_of(text, 'button "Verify Address"'))
    assert 'text: "Address verified."' in verified["text"]
    closed = await driver.ok("click", element="Add", ref=ref_of(text, 'button "Add"'))
    assert 'text: "5 Elm St, Shelbyville 12345"' in closed["text"]
    changes = closed["text"].split("--- incremental snapshot ---")[1]
    assert '- dialog' in changes.split("Removed:\n")[1] and '- dialog' not in changes.split("Removed:")[0], changes


async def test_a_grid_cell_is_edited_in_place(driver):
    text = await open_page(driver, "editgrid")
    assert 'row: "Date | Description | Amount"' in text
    editing = await driver.ok("press_key", key="Enter", ref=ref_of(text, 'gridcell "Office supplies"'))
    assert 'Focus now: textbox "Description" [value="Office supplies"]' in editing["text"]
    text = (await driver.read())["text"]
    await driver.ok("type", element="Description", ref=ref_of(text, 'textbox "Description"'), text="Printer paper")
    saved = await driver.ok("press_key", key="Enter")
    assert 'Focus now: gridcell "Printer paper"' in saved["text"]
    assert await in_page(driver, "editgrid", "document.querySelectorAll('td')[4].textContent") == "Printer paper"
