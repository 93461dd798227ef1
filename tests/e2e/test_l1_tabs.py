"""L0 tools in a real browser: tabs, navigation and browser metadata through the extension APIs.
Each test checks the tool result and what the browser itself reports afterwards."""

from __future__ import annotations

import urllib.request

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver
from tests.support.waiting import until

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "l1-tabs")


async def browser_tabs(driver) -> dict[int, dict]:
    return {t["id"]: t for t in await driver.control.call("browser.tabs")}


async def test_tabs_list_marks_the_tab_the_user_looks_at(driver):
    tab = await driver.open("child.html")
    listed = await driver.ok("tabs_list", policy=None)
    assert f"[tabId={tab}] 'Child page - Fixture' {driver.site.url('child.html')}" in listed["text"]
    looking = [t for t in listed["details"]["tabs"] if t["userLooking"]]
    assert len(looking) == 1 and looking[0]["id"] != tab  # opened in the background


async def test_tab_open_reuses_an_identical_tab_without_focusing_it(driver):
    url = driver.site.url("child.html", exact="1")
    first = await driver.ok("tab_open", url=url)
    second = await driver.ok("tab_open", url=url)
    assert second["tabId"] == first["tabId"] and second["details"]["reused"] is True
    assert "reused it without focusing it" in second["text"]
    tabs = await browser_tabs(driver)
    assert tabs[first["tabId"]]["active"] is False
    assert sum(1 for t in tabs.values() if t["url"] == url) == 1


async def test_tab_open_refuses_what_is_not_http(driver):
    result = await driver.call("tab_open", url="file:///etc/passwd")
    assert not result["ok"] and result["error"]["code"] in ("invalid_params", "denied")
    assert not any(t["url"].startswith("file:") for t in (await browser_tabs(driver)).values())


async def test_navigate_back_and_forward(driver):
    tab = await driver.open("search.html")
    skipped = await driver.call("go_back")
    assert not skipped["ok"] and skipped["error"]["code"] == "no_history"
    # Nobody touched search.html: Chrome's own back button would skip it, go_back does not.
    target = driver.site.url("result.html", q="ducks")
    went = await driver.ok("navigate", url=target)
    assert f"Navigated to {target}: the tab now shows {target}" in went["text"]
    assert '- text: "You searched for: ducks"' in went["text"]
    assert (await browser_tabs(driver))[tab]["url"] == target
    back = await driver.ok("go_back")
    assert "search.html" in back["details"]["url"] and "Went back" in back["text"]
    forward = await driver.ok("go_forward")
    assert forward["details"]["url"] == target
    assert (await browser_tabs(driver))[tab]["url"] == target


async def test_navigate_to_the_url_the_tab_shows_reloads_it(driver):
    tab = await driver.open("search.html")
    url = (await browser_tabs(driver))[tab]["url"]
    await driver.evaluate("search.html", "window.beforeReload = 1")
    again = await driver.ok("navigate", url=url)
    assert again["text"].startswith(f"[tabId={tab}] Reloaded {url} (the tab already showed it): the tab now shows {url}")
    assert again["details"]["reloaded"] is True and "# Page Snapshot" in again["text"]
    assert await driver.evaluate("search.html", "typeof window.beforeReload") == "undefined"  # a new document


async def test_a_page_still_loading_when_its_executor_arrives_is_read_once_it_has_loaded(driver):
    # A slow image holds the load event for most of a second and the page adds its button only
    # on load: the snapshot in the answer is of the page as loaded, wherever the executor came
    # from (injected at commit while the page loads, or put in by the browser at idle).
    await driver.open("search.html")
    target = driver.site.url("late-load.html")
    went = await driver.ok("navigate", url=target)
    assert f"Navigated to {target}: the tab now shows {target}" in went["text"]
    assert 'button "Loaded at last"' in went["text"], went["text"]


async def new_tab(driver, url: str) -> int:
    """Open `url` (a start page) through the test's own DevTools connection; returns its tab id."""
    before = set(await browser_tabs(driver))
    request = urllib.request.Request(f"http://127.0.0.1:{driver._port}/json/new?{url}", method="PUT")
    with urllib.request.urlopen(request, timeout=5):
        pass

    async def opened() -> int | None:
        return next((tab for tab in await browser_tabs(driver) if tab not in before), None)

    return await until(opened, 5, f"a new tab at {url}")


@pytest.mark.parametrize("start", ["about:blank", "chrome://newtab/"])
async def test_navigate_works_from_an_empty_or_new_tab_page(driver, start):
    blank = await new_tab(driver, start)
    target = driver.site.url("child.html", start=start)
    went = await driver.ok("navigate", tabId=blank, url=target)
    assert f"Navigated to {target}: the tab now shows {target}" in went["text"]
    assert (await browser_tabs(driver))[blank]["url"] == target
    # Still judged at its destination: a denied one is refused there as anywhere.
    other = await new_tab(driver, start)
    denied = await driver.call("navigate", tabId=other, url="javascript:alert(1)")
    assert not denied["ok"] and denied["error"]["code"] == "denied"


async def test_navigate_to_a_script_url_is_denied(driver):
    await driver.open("search.html")
    result = await driver.call("navigate", url="javascript:alert(1)")
    assert not result["ok"] and result["error"]["code"] == "denied"


async def test_tab_focus_changes_the_users_view(driver):
    tab = await driver.open("child.html")
    focused = await driver.ok("tab_focus", tabId=tab)
    assert "the user's view changed" in focused["text"]
    tabs = await browser_tabs(driver)
    assert tabs[tab]["active"] is True
    listed = await driver.ok("tabs_list")
    assert [t["id"] for t in listed["details"]["tabs"] if t["userLooking"]] == [tab]


async def test_tab_close_and_the_closed_default_is_not_replaced(driver):
    tab = await driver.open("child.html")
    closed = await driver.ok("tab_close", tabId=tab)
    assert f"Closed tab {tab}" in closed["text"]
    assert tab not in await browser_tabs(driver)
    again = await driver.call("read_page")
    assert not again["ok"] and again["error"]["code"] == "tab_closed"
    missing = await driver.call("tab_focus", tabId=tab)
    assert not missing["ok"] and missing["error"]["code"] == "tab_closed"


async def test_recently_closed_and_restore(driver):
    url = driver.site.url("child.html", restore="me")
    opened = await driver.ok("tab_open", url=url)
    await driver.ok("tab_close", tabId=opened["tabId"])
    recent = await driver.ok("sessions_recently_closed", maxResults=5)
    line = next(line for line in recent["text"].split("\n") if url in line)
    session_id = line.split("sessionId=")[1].split(" ")[0]
    restored = await driver.ok("session_restore", sessionId=session_id)
    assert "Restored tab" in restored["text"]
    assert any(t["url"] == url for t in (await browser_tabs(driver)).values())


async def test_history_bookmarks_and_top_sites(driver):
    await driver.open("result.html", q="history-marker")
    history = await driver.ok("history_search", query="history-marker", policy=None)
    assert "result.html?q=history-marker" in history["text"]
    bookmarks = await driver.ok("bookmarks_search", query="nothing saved here", policy=None)
    assert bookmarks["text"].startswith("0 bookmark(s)")
    top = await driver.ok("top_sites", policy=None)
    assert "top site(s)" in top["text"]
    bad = await driver.call("history_search", maxResults=0)
    assert not bad["ok"] and bad["error"]["code"] == "invalid_params"


async def test_tab_groups(driver):
    first = await driver.open("child.html")
    second = await driver.open("search.html")
    grouped = await driver.ok("tabs_group", tabIds=[first, second])
    group_id = grouped["details"]["groupId"]
    updated = await driver.ok("tab_group_update", groupId=group_id, title="Research", color="green")
    assert "'Research', green" in updated["text"]
    listed = await driver.ok("tab_groups_list", policy=None)
    assert f"groupId={group_id} 'Research' green" in listed["text"]
    tabs = await browser_tabs(driver)
    assert tabs[first]["groupId"] == tabs[second]["groupId"] == group_id


async def test_a_read_judged_from_a_stale_record_of_its_tab_is_judged_again_where_the_tab_is(driver):
    tab = await driver.open("child.html")
    first = await driver.ok("read_page")  # judged from the browser's word: the host records it
    assert "Child page" in first["text"]
    # The host's record says the tab shows a page of another site (an event on its way would
    # leave it so): the read is judged for that page, the extension sends nothing to the tab, and
    # the call is judged again where the browser says the tab is, and runs there.
    elsewhere = driver.site.other_url("search.html")
    await driver.control.call("test.tab_mirror", tab_id=tab, url=elsewhere)
    again = await driver.ok("read_page")
    assert "Child page" in again["text"]
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=6)
    outcomes = [row.get("tool_outcome") for row in rows if row.get("tool") == "read_page"]
    assert "failed:target_changed" in outcomes and "ok" in outcomes, rows
    # Where the tab is now is out of this task's reach: judged again there, the read is refused
    # and nothing of the page comes back.
    site = driver.site.url("")[:-1]
    await driver.control.call("test.tab_mirror", tab_id=tab, url=elsewhere)
    await driver.control.call("gatekeeper.add_origin", pattern=site, list="blocked")
    try:
        refused = await driver.call("read_page")
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=site, list="blocked")
    assert not refused["ok"], refused
    assert "Child page" not in str(refused)


async def test_a_load_judged_from_a_stale_record_of_its_tab_is_judged_again_before_it_starts(driver):
    tab = await driver.open("child.html")
    await driver.read()
    # The host's record says the tab shows another page: the load judged from it does not start,
    # and the call is judged again from where the browser says the tab is, then runs.
    await driver.control.call("test.tab_mirror", tab_id=tab, url=driver.site.other_url("search.html"))
    target = driver.site.url("result.html", q="geese")
    went = await driver.ok("navigate", url=target)
    assert '- text: "You searched for: geese"' in went["text"], went
    assert (await browser_tabs(driver))[tab]["url"] == target
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=6)
    outcomes = [row.get("tool_outcome") for row in rows if row.get("tool") == "navigate"]
    assert outcomes.count("failed:target_changed") == 1 and "ok" in outcomes, rows
    # The record is the browser's word again: the next load starts at once.
    again = await driver.ok("navigate", url=driver.site.url("result.html", q="swans"))
    assert '- text: "You searched for: swans"' in again["text"], again
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=6)
    outcomes = [row.get("tool_outcome") for row in rows if row.get("tool") == "navigate"]
    assert outcomes.count("failed:target_changed") == 1, rows

async def test_a_read_runs_in_a_document_whose_own_url_differs_from_its_tabs(driver):
    tab = await driver.open("reopened.html")
    shown = (await browser_tabs(driver))[tab]["url"]
    await driver.read()
    # The frame rewrites its parent: the document now says it is at the frame's URL, and the tab
    # still shows the parent's. The document's refusal is checked against the tab: its word stands.
    await driver.evaluate("reopened.html", "frames[0].setTimeout(frames[0].rewriteParent, 0)")
    await until(lambda: driver.evaluate("reopened.html", "document.querySelector('button') !== null"), 5,
                "the parent rewritten")
    assert (await browser_tabs(driver))[tab]["url"] == shown
    assert await driver.evaluate("reopened.html", "location.href") == driver.site.url("reopener.html")
    read = await driver.read()
    assert 'button "Carry on"' in read["text"], read
    # A read judged for a URL neither the document nor the tab shows reaches nothing.
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="read_page", params={},
                                    expect_url=driver.site.url("child.html"))
    assert raw["ok"] is False and raw["error"]["code"] == "target_changed", raw
    assert raw["error"]["details"]["dispatched"] is False and "documentUrl" not in raw["error"]["details"], raw
