"""History moves and restores are judged by where they lead, in a real browser: going back or
forward into an entry of origin B, or restoring a closed tab of B, is refused under a scope lock
to A and while B is blocked, before anything happens (the tab still shows A, B's server sees no
request), with the code in the result and B's origin in the audit; allowed, they work."""

from __future__ import annotations

import itertools
from contextlib import asynccontextmanager
from typing import AsyncIterator

import pytest

from tests.support.browser_tools import Driver, l1_site, module_fixtures, new_driver
from tests.support.scripted_site import Site, html

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "l0-destinations")
_numbers = itertools.count(1)


@pytest.fixture(scope="module")
def b_site():
    """Origin B: a server that records every request; its page may not be kept in any cache, so
    loading it again always asks the server."""
    page = html("<title>Page B</title><h1>Page B</h1>", **{"Cache-Control": "no-store"})
    with Site(routes={"/b.html": page}) as b:
        yield b


def b_origin(b: Site) -> str:
    return f"http://127.0.0.1:{b.port}"


def b_url(b: Site) -> str:
    return b.url("127.0.0.1", f"/b.html?n={next(_numbers)}")


def page_hits(b: Site) -> int:
    """Requests for B's page (the browser asks for a favicon on its own schedule)."""
    return sum(1 for path in b.hits if path.startswith("/b.html"))


def a_origin(driver: Driver) -> str:
    return driver.site.url("child.html").split("/l1/")[0]


async def thread_driver(driver: Driver) -> Driver:
    """A driver acting as a real thread of the engine (a scope lock belongs to one)."""
    made = await driver.control.call("engine.op", op={"type": "thread.create", "submissionId": f"s-{next(_numbers)}"})
    return Driver(driver.site, driver.control, made["threadId"], "auto")


async def lock_to(driver: Driver, patterns: list[str] | None) -> None:
    answer = await driver.control.call("engine.op", op={"type": "scope.setLock", "submissionId": f"s-{next(_numbers)}",
                                                        "threadId": driver.thread_id, "patterns": patterns})
    assert answer.get("type") != "command.rejected", answer


@asynccontextmanager
async def blocked(driver: Driver, origin: str) -> AsyncIterator[None]:
    added = await driver.control.call("gatekeeper.add_origin", pattern=origin, list="blocked")
    try:
        yield
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=added["pattern"], list="blocked")


async def tab_urls(driver: Driver) -> dict[int, str]:
    return {t["id"]: t["url"] for t in await driver.control.call("browser.tabs")}


async def decision_row(driver: Driver, tool: str) -> dict:
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, tool=tool, last=20)
    return [row for row in rows if row["kind"] == "decision"][-1]


async def refused(driver: Driver, b: Site, tool: str, code: str, **params) -> None:
    """`tool` is denied with `code`, naming B, and B's server hears nothing of it."""
    hits = page_hits(b)
    result = await driver.call(tool, **params)
    assert not result["ok"] and result["error"]["code"] == "denied", result
    details = result["error"]["details"]
    assert (details["reasonCode"], details["targetOrigin"]) == (code, b_origin(b)), details
    assert details["dispatched"] is False
    row = await decision_row(driver, tool)
    assert (row["verdict"], row["code"], row["target_origin"]) == ("deny", code, b_origin(b)), row
    assert page_hits(b) == hits


async def a_tab_with_b_behind(driver: Driver, b: Site) -> tuple[int, str, str]:
    """A tab showing A whose previous entry is B."""
    there = b_url(b)
    hits = page_hits(b)
    tab = (await driver.ok("tab_open", url=there))["tabId"]
    assert page_hits(b) == hits + 1  # B's server records what reaches it
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=tab)
    here = driver.site.url("child.html", visit=f"a{next(_numbers)}")
    await driver.ok("navigate", url=here)
    return tab, here, there


async def test_going_back_into_b_is_refused_under_a_scope_lock_to_a(driver, b_site):
    thread = await thread_driver(driver)
    tab, here, there = await a_tab_with_b_behind(thread, b_site)
    await lock_to(thread, [a_origin(driver)])
    await refused(thread, b_site, "go_back", "scope_lock")
    assert (await tab_urls(driver))[tab] == here
    await lock_to(thread, None)
    back = await thread.ok("go_back")
    assert back["details"]["url"] == there and "Went back" in back["text"]
    assert (await tab_urls(driver))[tab] == there


async def test_going_back_into_a_blocked_b_is_refused(driver, b_site):
    thread = await thread_driver(driver)
    tab, here, there = await a_tab_with_b_behind(thread, b_site)
    async with blocked(thread, b_origin(b_site)):
        await refused(thread, b_site, "go_back", "sensitive_origin")
        assert (await tab_urls(driver))[tab] == here
    back = await thread.ok("go_back")
    assert back["details"]["url"] == there


async def an_a_tab_with_b_ahead(driver: Driver, b: Site) -> tuple[int, str, str]:
    """A tab showing A whose next entry is B."""
    here = driver.site.url("child.html", visit=f"a{next(_numbers)}")
    tab = (await driver.ok("tab_open", url=here))["tabId"]
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=tab)
    there = b_url(b)
    await driver.ok("navigate", url=there)
    await driver.ok("go_back")
    assert (await tab_urls(driver))[tab] == here
    return tab, here, there


async def test_going_forward_into_b_is_refused_under_a_lock_or_while_b_is_blocked(driver, b_site):
    thread = await thread_driver(driver)
    tab, here, there = await an_a_tab_with_b_ahead(thread, b_site)
    await lock_to(thread, [a_origin(driver)])
    await refused(thread, b_site, "go_forward", "scope_lock")
    assert (await tab_urls(driver))[tab] == here
    await lock_to(thread, None)
    async with blocked(thread, b_origin(b_site)):
        await refused(thread, b_site, "go_forward", "sensitive_origin")
        assert (await tab_urls(driver))[tab] == here
    forward = await thread.ok("go_forward")
    assert forward["details"]["url"] == there and "Went forward" in forward["text"]
    assert (await tab_urls(driver))[tab] == there


async def closed_b_tab(driver: Driver, b: Site) -> tuple[str, str]:
    """Open a B tab, close it, and return its session id and URL."""
    there = b_url(b)
    tab = (await driver.ok("tab_open", url=there))["tabId"]
    await driver.ok("tab_close", tabId=tab)
    recent = await driver.ok("sessions_recently_closed", maxResults=10)
    line = next(line for line in recent["text"].split("\n") if there in line)
    return line.split("sessionId=")[1].split(" ")[0], there


async def test_restoring_a_closed_b_tab_is_refused_under_a_lock_or_while_b_is_blocked(driver, b_site):
    thread = await thread_driver(driver)
    session_id, there = await closed_b_tab(thread, b_site)
    before = await tab_urls(driver)
    await lock_to(thread, [a_origin(driver)])
    await refused(thread, b_site, "session_restore", "scope_lock", sessionId=session_id)
    await lock_to(thread, None)
    async with blocked(thread, b_origin(b_site)):
        await refused(thread, b_site, "session_restore", "sensitive_origin", sessionId=session_id)
    assert await tab_urls(driver) == before  # nothing was reopened
    restored = await thread.ok("session_restore", sessionId=session_id)
    assert "Restored tab" in restored["text"]
    assert there in (await tab_urls(driver)).values()
    row = await decision_row(thread, "session_restore")
    assert (row["verdict"], row["target_origin"]) == ("allow", b_origin(b_site))
    # The session id is gone once restored: refused before anything runs.
    now = await tab_urls(driver)
    again = await thread.call("session_restore", sessionId=session_id)
    assert not again["ok"] and again["error"]["code"] == "not_found", again
    assert await tab_urls(driver) == now
