"""read_page and the other L1 reads in a real browser: the snapshot's line format, interactive
detection with innermost folding, shadow roots, frames, budgets that never hide refs silently,
EMPTY_TREE, find_in_page, extract with paging, selection, scrolling and waiting. Each test drives
the host's tool API and checks the page itself over CDP where the tool could have changed it."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of

pytestmark = pytest.mark.browser

REF_LINE = re.compile(r"\[ref=(s[0-9a-z]+)_(\d+)_(\d+)\]")


site, driver = module_fixtures(l1_site, new_driver, "l1-snapshot")


async def test_snapshot_format_roles_names_and_refs(driver):
    tab = await driver.open("form.html")
    result = await driver.read()
    text = result["text"]
    assert text.startswith(f"[tabId={tab}] # Page Snapshot (s")
    lines = text.split("\n")
    header_id = re.match(r"\[tabId=\d+\] # Page Snapshot \((s[0-9a-z]+_\d+)\)$", lines[0]).group(1)
    assert lines[1].startswith(f"URL: {driver.site.url('form.html')}?visit=")
    assert lines[2] == "Title: Sign up - Fixture"
    assert lines[3] == ""
    body = lines[4:]
    assert all(re.match(r"^( {2})*- ", line) for line in body), body
    assert body[0] == '- heading "Sign up" [level=1]'
    assert body[1] == '- form "Sign-up form"'
    assert '  - textbox "Full name" [ref=' in text
    assert '  - textbox "Email" [type=email] [ref=' in text
    assert '  - checkbox "Remember me" [checked] [ref=' in text
    assert '  - combobox "Country" [ref=' in text and '    - option "France" [ref=' in text
    assert '    - option "Japan" [disabled] [ref=' in text
    assert '  - listbox "Tags" [ref=' in text
    assert '  - textbox "Invite code" [value="FIXED-1"] [readonly] [ref=' in text
    assert '  - button "Delete account" [disabled] [ref=' in text
    assert '- textbox "Notes" [ref=' in text  # contenteditable
    # Labels name their controls and are not repeated as text.
    assert 'text: "Full name"' not in text
    refs = [m.groups() for m in REF_LINE.finditer(text)]
    assert {f"{doc}_{snap}" for doc, snap, _ in refs} == {header_id}
    assert [int(n) for _, _, n in refs] == list(range(1, len(refs) + 1))
    assert result["details"]["refCount"] == len(refs)


async def test_password_values_are_never_echoed_but_the_host_knows_the_field(driver):
    tab = await driver.open("form.html")
    result = await driver.read()
    assert "hunter2" not in result["text"]
    assert '- textbox "Password" [type=password] [value hidden] [ref=' in result["text"]
    password_ref = ref_of(result["text"], 'textbox "Password"')
    refs = await driver.control.call("browser.refs", tab_id=tab)
    hint = next(h for h in refs["refs"] if h["ref"] == password_ref)
    assert hint["inputType"] == "password" and hint["role"] == "textbox" and hint["tag"] == "input"
    assert "value" not in hint
    assert await driver.evaluate("form.html", "document.getElementById('pw').value") == "hunter2-secret"


async def test_a_pointer_wrapper_leaves_the_ref_to_its_button(driver):
    await driver.open("pointer.html")
    result = await driver.read()
    text = result["text"]
    assert '- button "Buy now" [ref=' in text
    assert "Buy now" not in text.replace('- button "Buy now"', "")  # the wrapper got nothing
    plain = ref_of(text, 'generic "Open details"')
    assert '- button "Custom action" [ref=' in text and '- generic "Focusable panel" [ref=' in text
    assert '- text: "Plain text is not interactive"' in text
    clicked = await driver.call("click", element="Open details card", ref=plain)
    assert clicked["ok"], clicked
    assert await driver.evaluate("pointer.html", "window.plainClicks") == 1


async def test_open_shadow_roots_and_slots_are_walked_closed_ones_are_not(driver):
    await driver.open("shadow.html")
    result = await driver.read()
    text = result["text"]
    assert '- text: "Slotted heading text"' in text
    assert '- textbox "Shadow input" [ref=' in text
    assert "Closed secret button" not in text
    clicked = await driver.call("click", element="Shadow button", ref=ref_of(text, 'button "Shadow button"'))
    assert clicked["ok"], clicked
    assert await driver.evaluate("shadow.html", "document.getElementById('out').textContent") == "shadow clicked"


async def test_same_origin_frames_are_walked_cross_origin_ones_announced(driver):
    await driver.open("frames.html", other="{OTHER}")
    result = await driver.read()
    text = result["text"]
    assert '- iframe "Same-origin panel"\n  - button "Frame button" [ref=' in text
    assert '- iframe "Cross-origin panel" [cross-origin, not visible]' in text
    clicked = await driver.call("click", element="Frame button", ref=ref_of(text, 'button "Frame button"'))
    assert clicked["ok"], clicked
    count = await driver.evaluate("frames.html", "document.getElementById('same').contentDocument.getElementById('count').textContent")
    assert count == "1"
    assert 'text: "Clicks: 1"' in clicked["text"]


async def test_frames_deeper_than_four_are_marked(driver):
    await driver.open("nest.html", depth="6")
    text = (await driver.read())["text"]
    assert text.count('button "Level button"') == 5
    assert '        - iframe "level 2" [depth limit]' in text


async def test_truncation_drops_text_first_and_says_so(driver):
    await driver.open("long.html")
    small = await driver.read(maxTokens=300)
    text = small["text"]
    marker = re.search(r"\n\n\[truncated: (\d+) nodes\]$", text)
    assert marker and int(marker.group(1)) > 100
    for name in ("Top button", "Bottom button", "End link"):
        assert f'"{name}" [ref=' in text
    assert small["details"]["truncatedRefs"] == 0
    full = await driver.read(maxTokens=6000)
    assert full["text"].count("- text: ") > text.count("- text: ")


async def test_the_budget_keeps_the_text_in_view_and_drops_what_is_off_screen_first(driver):
    # Scrolled to the middle of the page: the paragraphs shown there survive a budget that holds
    # a handful of them, and those above and below, off screen, go first (not merely the last).
    await driver.open("long.html")
    await driver.evaluate("long.html", "document.querySelectorAll('p')[99].scrollIntoView(); window.scrollY > 0")
    text = (await driver.read(maxTokens=300))["text"]
    assert "Paragraph 100:" in text and "Paragraph 101:" in text
    assert "Paragraph 1:" not in text and "Paragraph 200:" not in text
    assert re.search(r"\n\n\[truncated: \d+ nodes\]$", text)


async def test_refs_past_the_ceiling_are_counted_and_still_findable(driver):
    await driver.open("links.html")
    result = await driver.read(maxTokens=0)
    text = result["text"]
    hidden = result["details"]["truncatedRefs"]
    assert hidden > 0
    assert "of them with refs; find_in_page searches the whole snapshot]" in text
    assert "Catalogue entry number 800" not in text
    found = await driver.ok("find_in_page", query="entry number 800")
    line = found["text"].split("\n")[1]
    assert line.startswith('- link "Catalogue entry number 800" [ref=')
    clicked = await driver.call("click", element="entry 800", ref=ref_of(line, "800"))
    assert clicked["ok"], clicked
    assert await driver.evaluate("links.html", "window.lastLink") == 800


async def test_an_empty_page_is_an_error_not_an_empty_answer(driver):
    await driver.open("empty.html")
    result = await driver.call("read_page")
    assert not result["ok"], result
    assert result["error"]["code"] == "empty_tree" and result["text"].count("EMPTY_TREE") == 1


async def test_every_snapshot_is_a_new_generation_of_one_document(driver):
    tab = await driver.open("pointer.html")
    first = await driver.read()
    second = await driver.read()
    a = re.search(r"Page Snapshot \((s[0-9a-z]+)_(\d+)\)", first["text"]).groups()
    b = re.search(r"Page Snapshot \((s[0-9a-z]+)_(\d+)\)", second["text"]).groups()
    assert a[0] == b[0] and int(b[1]) == int(a[1]) + 1
    refs = await driver.control.call("browser.refs", tab_id=tab)
    assert refs["snapshot"] == f"{b[0]}_{b[1]}" and refs["prior"] == len(refs["refs"]) == 4
    # The second snapshot kept the refs of the elements that did not change: the first one's
    # work still, with a strict tool too (hover never recovers).
    kept = ref_of(first["text"], "Buy now")
    assert ref_of(second["text"], "Buy now") == kept
    await driver.ok("hover", element="Buy now", ref=kept)
    # An element whose name changed gets a new ref, and its old one is refused.
    await driver.evaluate("pointer.html", "document.getElementById('inner').textContent = 'Buy later'")
    third = await driver.read()
    assert ref_of(third["text"], "Buy later") != kept
    stale = await driver.call("hover", element="Buy now", ref=kept)
    assert not stale["ok"] and stale["error"]["code"] == "stale_ref" and stale["error"]["phase"] == "resolve"


async def test_find_in_page_lists_matching_lines_with_refs(driver):
    await driver.open("form.html")
    await driver.read()
    found = await driver.ok("find_in_page", query="FRANCE")
    assert found["text"].split("\n")[0].endswith(":")
    assert '- option "France" [ref=' in found["text"]
    missing = await driver.ok("find_in_page", query="zebra crossing")
    assert "No line of the current snapshot" in missing["text"]


async def test_extract_is_markdown_without_page_chrome_and_paged(driver):
    await driver.open("article.html")
    first = await driver.ok("extract")
    text = first["text"]
    assert "# The article title" in text and "## Section 1" in text
    assert f"[relative link]({driver.site.url('child.html')})" in text
    assert "[absolute link](https://example.org/page)" in text
    assert "script link" in text and "javascript:" not in text
    assert "\n- First point" in text
    for chrome in ("Site header", "Navigation link", "Footer text", "Aside text"):
        assert chrome not in text
    assert first["details"]["totalChars"] > 8000
    assert "continue with fromChar=8000]" in text
    second = await driver.ok("extract", fromChar=8000)
    assert second["details"]["fromChar"] == 8000
    page = await driver.read()
    scoped = await driver.ok("extract", scope=ref_of(page["text"], 'region "Scoped section"'))
    assert "Only this part, with emphasis." in scoped["text"] and "Section 1" not in scoped["text"]


async def test_article_mode_reads_the_text_only(driver):
    await driver.open("article.html")
    result = await driver.read(mode="article")
    assert "Sentence 1.1 tells" in result["text"] and "[ref=" not in result["text"]
    assert "Footer text" not in result["text"]


async def test_get_selection(driver):
    await driver.open("article.html")
    assert "No text is selected." in (await driver.ok("get_selection"))["text"]
    await driver.evaluate("article.html", "getSelection().selectAllChildren(document.querySelector('h1'))")
    result = await driver.ok("get_selection")
    assert "The article title" in result["text"]


async def test_scroll_moves_the_page(driver):
    await driver.open("long.html")
    down = await driver.ok("scroll", direction="down")
    assert "Scrolled the page down" in down["text"] and down["details"]["scroll"]["moved"]
    assert await driver.evaluate("long.html", "window.scrollY") > 0
    await driver.ok("scroll", direction="down", amount="end")
    at_end = await driver.evaluate("long.html", "Math.ceil(window.scrollY + innerHeight) >= document.documentElement.scrollHeight")
    assert at_end is True
    await driver.ok("scroll", direction="up", amount="end")
    top = await driver.ok("scroll", direction="up", amount=100)
    assert "moved nothing" in top["text"] and not top["details"]["scroll"]["moved"]


async def test_wait_for_text_to_appear_and_disappear(driver):
    await driver.open("states.html")
    page = await driver.read()
    assert (await driver.call("click", element="Load later", ref=ref_of(page["text"], "Load later")))["ok"]
    appeared = await driver.ok("wait_for", text="Loaded later")
    assert "appeared" in appeared["text"]
    page = await driver.read()
    assert (await driver.call("click", element="Remove notice", ref=ref_of(page["text"], "Remove notice")))["ok"]
    gone = await driver.ok("wait_for", textGone="Temporary notice")
    assert "disappeared" in gone["text"]
    assert await driver.evaluate("states.html", "document.getElementById('temp')") is None
    late = await driver.call("wait_for", text="never shows up", timeMs=300)
    assert not late["ok"] and late["error"]["code"] == "timeout" and late["error"]["retryable"]


async def test_reads_are_allowed_under_the_default_policy(driver):
    await driver.open("form.html")
    result = await driver.call("read_page", policy=None)
    assert result["ok"] and result["details"]["decision"]["code"] == "read_allowed"


async def test_the_full_mode_keeps_long_text_whole(driver):
    await driver.open("form.html")
    sentence = "All facilities are restricted on holidays; " * 6 + "the east lot stays open."
    await driver.evaluate("form.html", f"document.body.insertAdjacentHTML('afterbegin', '<p id=long>{sentence}</p>'); true")
    cut = (await driver.read())["text"]
    assert sentence not in cut and f'text: "{sentence[:100]}' in cut
    whole = (await driver.read(mode="full"))["text"]
    assert f'text: "{sentence}"' in whole, whole
    # What find_in_page searches is the latest snapshot: whole lines too.
    found = await driver.ok("find_in_page", query="east lot stays open")
    assert sentence in found["text"], found["text"]
    # A write after a full read is not compared with it (its snapshot cuts what the read kept
    # whole): it shows its whole snapshot instead of the long text as removed and added.
    page = (await driver.read(mode="full"))["text"]
    clicked = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    after = clicked["text"].split("--- incremental snapshot ---")[1]
    assert "# Page Snapshot" in after and "Removed:" not in after, after


async def test_the_page_behind_a_closed_popover_comes_back_with_its_refs_and_the_answer_is_told_against_it(driver):
    await driver.open("popover.html")
    text = (await driver.read())["text"]
    first = re.search(r"# Page Snapshot \((s[0-9a-z]+_\d+)\)", text).group(1)
    opened = await driver.ok("click", element="Size", ref=ref_of(text, 'button "Size: Medium"'))
    # While the list is open the page behind it is out of the tree, and its refs with it.
    assert 'listbox "Size"' in opened["text"] and 'checkbox "Gift wrap"' in opened["text"].split("Removed:", 1)[1]
    picked = await driver.ok("click", element="Large", ref=ref_of(opened["text"], 'option "Large"'))
    # The page came back with the refs the first read gave it: the answer is told against that
    # read, and says only what changed since (the button's new name, under a new ref).
    assert picked["text"].split("--- incremental snapshot ---\n", 1)[1].startswith("# Page Changes (") \
        and f" since {first}\n" in picked["text"], picked["text"]
    assert 'button "Size: Large"' in picked["text"] and "Gift wrap" not in picked["text"], picked["text"]
    # The first read's refs act as they are, no recovery needed.
    for element, line in (("Gift wrap", 'checkbox "Gift wrap"'), ("Buy", 'button "Buy"')):
        done = await driver.ok("click", element=element, ref=ref_of(text, line))
        assert "recovered" not in done["text"], done["text"]
    assert await driver.evaluate("popover.html", "document.getElementById('status').textContent") == \
        "Bought 1 (Size: Large), gift wrapped"
