"""The REPL's first steps in a real browser, as `tw` runs them right after `make launch`: a
navigate from the start tab (about:blank) works and is judged at its destination, and a write
under the default policy asks; `tw.approve()` runs it exactly once, `tw.decline()` not at all.
`tw` drives the host over its control socket as the console does."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from host.repl.errors import UsageError
from host.repl.style import Style
from host.repl.tw import Tabwarden
from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "repl-first-steps")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def tw_for(driver) -> Tabwarden:
    tw = Tabwarden(driver.control, Style(False), thread=driver.thread_id)
    return tw  # tw.policy stays None: the host's default policy judges, as after `make launch`


async def test_navigate_from_the_start_tab_asks_then_runs_once_approved(driver):
    tw = tw_for(driver)
    tabs = await driver.control.call("browser.tabs")
    blank = next(t["id"] for t in tabs if t["url"] == "about:blank" and t["active"])
    target = driver.site.url("child.html", start="blank")

    # No tab named and none used yet: the thread starts on the tab the user looks at, the blank one.
    waiting = await tw.run("navigate", url=target)
    shown = repr(waiting)
    approval = waiting.data["details"]["approvalId"]
    assert f"Navigate @ {origin_of(target)} - " in shown, shown
    assert f"    tw.approve('{approval}')\n" in shown
    assert waiting.data["details"]["request"]["targetOrigin"] == origin_of(target)
    listed = repr(await tw.approvals())
    assert approval in listed and "navigate" in listed

    done = await tw.approve()
    assert done.data["ok"] is True, done.data
    assert f"the tab now shows {target}" in repr(done)
    assert tw.last_tab == blank
    assert {t["id"]: t["url"] for t in await driver.control.call("browser.tabs")}[blank] == target
    with pytest.raises(UsageError, match="0 approvals are pending"):
        await tw.approve()


async def test_a_write_that_asks_runs_once_approved_and_not_at_all_declined(driver):
    tab = await driver.open("form.html")
    await driver.evaluate("form.html", "window.saves = 0; document.getElementById('save')"
                                       ".addEventListener('click', () => window.saves++); true")
    tw = tw_for(driver)
    tw.last_tab = tab
    snapshot = await tw.snapshot()
    ref = ref_of(snapshot.data["text"], 'button "Save"')

    waiting = await tw.run("click", element="Save button", ref=ref)
    approval = waiting.data["details"]["approvalId"]
    assert re.match(r"run-\d+-\d+$", approval)
    assert f"    tw.approve('{approval}')" in repr(waiting)
    assert await driver.evaluate("form.html", "window.saves") == 0  # nothing sent while it waits
    clicked = await tw.approve(approval)
    assert clicked.data["ok"] is True, clicked.data
    assert await driver.evaluate("form.html", "window.saves") == 1
    with pytest.raises(UsageError, match="no pending approval"):
        await tw.approve(approval)  # answered: it cannot run twice
    assert await driver.evaluate("form.html", "window.saves") == 1

    again = await tw.run("click", element="Save button", ref=ref)
    declined = await tw.decline(again.data["details"]["approvalId"], note="not now")
    assert declined.data["ok"] is False and declined.data["error"]["code"] == "declined"
    assert "you declined approval" in repr(declined) and "not now" in repr(declined)
    assert await driver.evaluate("form.html", "window.saves") == 1
    outcomes = [row.get("tool_outcome") for row in await driver.control.call(
        "gatekeeper.audit", last=20, thread_id=driver.thread_id) if row.get("kind") == "outcome"]
    assert outcomes[-2:] == ["ok", "declined"], outcomes


async def test_without_asking_the_refusal_says_how_to_allow_it(driver):
    tab = await driver.open("form.html")
    snapshot = await driver.call("read_page", tabId=tab, policy=None)
    ref = ref_of(snapshot["text"], 'button "Save"')
    refused = await driver.call("click", tabId=tab, ref=ref, element="Save button", policy=None)
    assert refused["error"]["code"] == "approval_required"
    origin = origin_of(driver.site.url("form.html"))
    assert (f"At the REPL, tw.run asks for it (answer with tw.approve()); or allow it ahead with "
            f"tw.allow('click', '{origin}') or tw.policy = 'auto'") in refused["error"]["message"]


async def test_grant_site_says_when_access_is_there_already(driver):
    tw = tw_for(driver)
    here = origin_of(driver.site.url("form.html"))
    assert repr(await tw.grant_site(driver.site.url("form.html"))) == \
        f"Tabwarden already has access to {here}: page tools can run there."
    assert "http://127.0.0.1/*" in repr(await tw.site_access())
    # (Granting a site the browser lacks is tests/e2e/test_repl_site_grant.py's, in its own browser.)
    with pytest.raises(UsageError, match="is not a web site"):
        await tw.grant_site("file:///etc/passwd")


async def test_a_page_tool_without_site_access_names_the_launch_option(driver):
    from tests.support.pages import PageServer

    tw = tw_for(driver)
    tab = await driver.open("form.html")
    with PageServer(host="127.0.0.2") as elsewhere:  # a site this browser was not granted
        url = elsewhere.url("l1/form.html")
        await driver.ok("navigate", tabId=tab, url=url)
        refused = await tw.snapshot(tab)
    assert refused.data["error"]["code"] == "approval_required", refused.data
    other = origin_of(url)
    assert (f"with tw.grant_site('{other}') at the REPL, or start the browser with it: "
            f"make launch LAUNCH_ARGS=\"--site-access {other}\"") in refused.data["error"]["message"]
