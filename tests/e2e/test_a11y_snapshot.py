"""read_page and read_page_deep on real widgets, in a real browser: landmarks, trees whose items
are clickable containers, focusable feed articles, sliders drawn in SVG, names that leave hidden
text out and come from the right label, values and states of range widgets, tri-state checkboxes,
toggle buttons, date-picker cells, and a pointer-cursor wrapper that gets one ref, not one per
child. Each expectation is what Chromium's own accessibility tree says of the same element."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_tools import module_fixtures, ref_of
from tests.support.browser_tools_l2 import deep_ref, l2_site, new_l2_driver

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l2_site, new_l2_driver, "a11y-snapshot")


async def open_fixture(driver, page: str) -> None:
    await driver.open_fixture(f"a11y/{page}")


async def read(driver, page: str) -> str:
    await open_fixture(driver, page)
    return (await driver.read(maxTokens=6000))["text"]


def lines_of(text: str) -> list[str]:
    return [line.split("] ", 1)[1] if line.startswith("[tabId=") else line for line in text.split("\n")]


def indent(text: str, part: str) -> int:
    line = next(line for line in lines_of(text) if part in line)
    return len(line) - len(line.lstrip(" "))


async def test_every_landmark_the_browser_knows_is_listed(driver):
    text = await read(driver, "landmarks.html")
    landmarks = {m.group(1) for m in re.finditer(r"^ *- (banner|navigation|search|main|region|complementary|contentinfo|form)\b",
                                                  text, re.M)}
    assert landmarks == {"banner", "navigation", "search", "main", "region", "complementary", "contentinfo", "form"}
    assert '- region "News"' in text and '- complementary "Related"' in text and '- search "Docs search"' in text
    # A header inside an article and an unnamed section are no landmarks.
    assert text.count("- banner") == 1 and text.count("- contentinfo") == 1 and text.count("- region") == 1


async def test_tree_items_are_clickable_containers_listing_their_children(driver):
    text = await read(driver, "tree.html")
    projects = ref_of(text, 'treeitem "Projects" [expanded]')
    assert indent(text, 'treeitem "project-2.docx" [selected]') > indent(text, 'treeitem "Projects"')
    assert 'treeitem "Archive" [collapsed] [ref=' in text and "old.docx" not in text  # a collapsed group is hidden
    assert 'text: "Projects"' not in text  # the item's name already says it
    reports = ref_of(text, 'treeitem "Reports" [collapsed]')
    clicked = await driver.call("click", element="Reports folder", ref=reports)
    assert clicked["ok"], clicked
    after = (await driver.read(maxTokens=6000))["text"]
    assert 'treeitem "Reports" [expanded] [selected] [ref=' in after and 'treeitem "report-1.docx" [ref=' in after
    assert projects != reports
    assert 'row "Treegrid message alice@example.com" [expanded] [level=1] [ref=' in after


async def test_a_focusable_article_and_the_button_inside_both_get_refs(driver):
    text = await read(driver, "feed.html")
    assert '- feed "Restaurants"' in text
    article = ref_of(text, 'article "Sushi Place" [desc="Fresh fish, quiet room."] [ref=')
    button = ref_of(text, 'button "Bookmark Sushi Place"')
    assert article != button and indent(text, "Bookmark Sushi Place") > indent(text, 'article "Sushi Place"')
    assert '- article\n' in "\n".join(lines_of(text)) + "\n"  # the plain article is structure, no ref
    clicked = await driver.call("click", element="first restaurant", ref=article)
    assert clicked["ok"], clicked
    assert await driver.evaluate("a11y/feed.html", "document.activeElement.getAttribute('aria-labelledby')") == "r1-name"


async def test_a_slider_drawn_in_svg_is_read_with_its_value(driver):
    text = await read(driver, "svg.html")
    assert 'slider "Red" [value=128] [min=0] [max=255] [ref=' in text
    assert 'slider "Temperature" [value="21 degrees Celsius"] [now=21] [min=10] [max=30] [ref=' in text
    assert '- img "Company logo"' in text and 'link "Chart" [ref=' in text
    assert 'button "Close panel" [ref=' in text


async def test_names_leave_hidden_text_out_and_come_from_the_right_label(driver):
    text = await read(driver, "labels.html")
    assert 'switch "Notifications" [checked] [ref=' in text
    assert 'textbox "Name:" [required] [ref=' in text
    assert 'textbox "Street:" [ref=' in text
    assert 'combobox "Country" [value="Japan"] [ref=' in text
    assert 'option "France" [ref=' in text and 'option "Japan" [selected] [ref=' in text
    assert 'option "Country"' not in text
    assert 'checkbox "Gift wrap" [ref=' in text
    assert 'textbox "Flight is on time" [value="AF 123"] [ref=' in text
    assert 'textbox "Referenced hidden label" [ref=' in text and 'textbox "Hidden text" [ref=' in text
    assert 'spinbutton "Quantity boxes" [value="2"] [min=1] [max=9] [ref=' in text
    # Descriptions come from aria-describedby; a short label or description is not repeated as text.
    assert 'textbox "Email" [type=email] [invalid] [desc="We never share it."] [ref=' in text
    assert 'text: "We never share it."' not in text and 'text: "Quantity boxes"' not in text


async def test_a_pointer_wrapper_gets_one_ref_not_one_per_child(driver):
    text = await read(driver, "labels.html")
    assert 'generic "Pick a plan star" [ref=' in text
    assert not any(re.search(r'"Pick a plan"|"star"|"is clickable"', line) for line in lines_of(text))
    clicked = await driver.call("click", element="plan card", ref=ref_of(text, 'generic "Pick a plan star"'))
    assert clicked["ok"], clicked
    assert await driver.evaluate("a11y/labels.html", "window.picked") == 1


async def test_values_and_states_of_widgets(driver):
    text = await read(driver, "widgets.html")
    for expected in ('spinbutton "Hours" [value=9] [min=0] [max=23]', 'spinbutton "Day" [value="Tuesday"] [now=2] [min=1] [max=7]',
                     'slider "Price" [value="$120"] [now=120] [min=0] [max=500]', 'checkbox "All condiments" [checked=mixed]',
                     'checkbox "Select all rows" [checked=mixed]', 'button "Bold" [pressed]', 'button "Underline" [pressed=mixed]',
                     'button "Italic" [pressed=false]',
                     'menuitemcheckbox "Show ruler" [checked]', 'tab "First tab" [selected]', 'textbox "City" [required]',
                     'link "Library" [current]', 'textbox "Notes" [value="Read only text"] [readonly]'):
        assert f"{expected} [ref=" in text, expected
    assert '- progressbar "Upload" [value=40]' in text
    grid = await read(driver, "grid.html")
    # A grid that lists only some of its rows says how many it has.
    assert '- grid "Transactions" [rows=40]' in grid, grid
    assert 'gridcell "15" [selected] [ref=' in grid and 'gridcell "16" [current] [ref=' in grid
    assert 'gridcell "22" [disabled] [ref=' in grid
    clicked = await driver.call("click", element="the 16th", ref=ref_of(grid, 'gridcell "16"'))
    assert clicked["ok"], clicked


async def test_where_keys_go_and_how_a_table_is_sorted_are_shown(driver):
    text = await read(driver, "focus.html")
    assert re.search(r'- listbox "Fruit" \[ref=[^\]]+\] \[focused\]', text), text
    assert re.search(r'- option "Banana" \[selected\] \[ref=[^\]]+\] \[active\]', text), text
    assert '- columnheader "Name" [sort=ascending]' in text
    # The other headers of a row of sort buttons still say which column they head.
    assert re.search(r'- columnheader "Price"\n +- button "Price" \[ref=', text), text
    assert not any("[active]" in line or "[focused]" in line for line in lines_of(text) if "Banana" not in line
                   and "listbox" not in line)
    # A key without a ref goes where [focused] says; the list now points at the next option.
    pressed = await driver.call("press_key", key="ArrowDown")
    assert pressed["ok"], pressed
    text = (await driver.read(maxTokens=6000))["text"]
    assert re.search(r'- option "Cherry" \[selected\] \[ref=[^\]]+\] \[active\]', text), text
    clicked = await driver.call("click", element="Price", ref=ref_of(text, 'button "Price"'))
    assert clicked["ok"], clicked
    text = (await driver.read(maxTokens=6000))["text"]
    assert '- columnheader "Price" [sort=descending]' in text and "[sort=ascending]" not in text
    # The button clicked has the focus now, and the list no longer does.
    assert re.search(r'- button "Price" \[ref=[^\]]+\] \[focused\]', text), text
    assert not re.search(r'listbox "Fruit" \[ref=[^\]]+\] \[focused\]', text)


async def test_an_item_of_a_tab_list_built_as_a_list_is_no_list_item(driver):
    # <ul role=tablist><li><a role=tab>: the <li> is a list item only in a list (as in Chromium).
    text = await read(driver, "patterns.html")
    assert re.search(r'- tablist "Sections"\n +- tab "Overview" \[selected\] \[ref=[^\]]+\]\n +- tab "Details" \[ref=', text), text
    assert re.search(r'- menubar "Site"\n +- menuitem "About"', text), text


async def test_table_rows_keep_their_cells_together_and_lose_nothing(driver):
    text = await read(driver, "tables.html")
    rows = re.findall(r'row: "([^"]*)"', text)
    assert rows == ["Item | Price | Note", "Tea | 2 | ", "Coffee | 3 | Fair trade"], text
    # A row with a cell that looks clickable is listed cell by cell, the cell with its ref.
    assert re.search(r'- row\n +- text: "Cake"\n +- cell "4" \[ref=[^\]]+\]\n +- text: "Ask for it"', text), text
    # A header in a row of data cells heads that row (no scope needed, as in Chromium).
    assert re.search(r'- row\n +- rowheader "Down Arrow"\n +- text: "Moves to the next item\."\n +- button "Try it" \[ref=', text), text
    clicked = await driver.call("click", element="4", ref=ref_of(text, 'cell "4"'))
    assert clicked["ok"] and await driver.evaluate("a11y/tables.html", "window.picked") == "cake"
    # A layout table is no table: its cells' heading and paragraph are read as they are.
    assert '- heading "News" [level=2]\n- text: "A long paragraph laid out in a table cell,' in text
    assert "row:" not in text.split('heading "News"')[1]


async def test_the_deep_read_lists_tree_children_structural_refs_and_values(driver):
    await open_fixture(driver, "tree.html")
    tree = (await driver.deep())["text"]
    assert deep_ref(tree, 'treeitem "Projects"') and deep_ref(tree, 'treeitem "project-2.docx"')
    assert indent(tree, '"project-2.docx"') > indent(tree, 'treeitem "Projects"')
    await open_fixture(driver, "feed.html")
    feed = (await driver.deep())["text"]
    assert deep_ref(feed, 'article "Sushi Place"') != deep_ref(feed, 'button "Bookmark Sushi Place"')
    assert indent(feed, "Bookmark Sushi Place") > indent(feed, 'article "Sushi Place"')
    await open_fixture(driver, "widgets.html")
    widgets = (await driver.deep())["text"]
    assert deep_ref(widgets, 'spinbutton "Hours" [value=9] [min=0] [max=23]')
    assert deep_ref(widgets, 'checkbox "All condiments" [checked=mixed]')
    assert deep_ref(widgets, 'button "Underline" [pressed=mixed]')
    assert deep_ref(widgets, 'button "Italic" [pressed=false]')
    await open_fixture(driver, "svg.html")
    svg = (await driver.deep())["text"]
    assert deep_ref(svg, 'slider "Red" [value=128] [min=0] [max=255]')


async def test_landmarks_survive_a_small_budget(driver):
    await open_fixture(driver, "landmarks.html")
    text = (await driver.read(maxTokens=50))["text"]
    assert "[truncated:" in text
    for landmark in ("- banner", '- navigation "Primary"', '- region "News"', '- complementary "Related"', "- contentinfo"):
        assert landmark in text, landmark
