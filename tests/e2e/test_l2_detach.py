"""The debugger session ending under the agent, in a real browser: the user dismissing the
debugging bar mid-task (simulated through the worker's test hook, since a headless browser has no
bar to click), a command in flight when that happens, the tab closing, another tab taking the
debugger (one tab at a time), domains chrome.debugger does not allow, and a batch of commands
the bridge runs without a round trip between them (it stops at a failure or an unexpected value
and sends nothing after it)."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.browser_tools import module_fixtures
from tests.support.browser_tools_l2 import deep_ref, l2_site, new_l2_driver
from tests.support.waiting import until

BATCH = """tabwardenDebugger.batch({tabId: %d, listTabs: true, steps: %s})
  .then((outcome) => outcome, (e) => ({thrown: e.code}))"""
LOOK = {"method": "Runtime.evaluate", "params": {"expression": "document.activeElement.id === 'code'", "returnByValue": True},
        "expect": True}
KEY_Q = [{"method": "Input.dispatchKeyEvent", "params": {"type": "keyDown", "key": "q", "code": "KeyQ", "text": "q",
                                                        "windowsVirtualKeyCode": 81}},
         {"method": "Input.dispatchKeyEvent", "params": {"type": "keyUp", "key": "q", "code": "KeyQ", "windowsVirtualKeyCode": 81}}]
READ = {"method": "Runtime.evaluate", "params": {"expression": "document.getElementById('code').value", "returnByValue": True}}

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l2_site, new_l2_driver, "l2-detach")


async def debugger_state(driver, tab: int, predicate, what: str) -> dict:
    state: dict = {}

    async def seen() -> dict | None:
        nonlocal state
        state = await driver.control.call("browser.debugger", tab_id=tab)
        return state if predicate(state) else None

    return await until(seen, 10, lambda: f"the host to see {what} (last state: {state})", interval=0.05)


async def test_user_cancelling_the_debugger_mid_task(driver):
    tab = await driver.open_l2("shadow.html")
    text = (await driver.deep())["text"]
    ref = deep_ref(text, '"Closed secret button"')
    assert await driver.worker(f"tabwardenDebugger.detach({tab}, 'canceled_by_user')") is True
    state = await debugger_state(driver, tab, lambda s: s["userStopped"], "the user's cancel")
    assert not state["attached"] and state["recentDetaches"][-1] == {**state["recentDetaches"][-1], "tabId": tab,
                                                                    "reason": "canceled_by_user"}
    refused = await driver.call("click_trusted", element="button", ref=ref)
    assert refused["error"]["code"] == "debugger_cancelled" and refused["error"]["details"]["dispatched"] is False
    assert await driver.worker("tabwardenDebugger.state().attachedTabId") is None  # nothing attached again
    assert await driver.on_page("document.getElementById('out').textContent") == ""
    # The user's next message allows the debugger again; refs from before the detach stay stale.
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=tab)
    stale = await driver.call("click_trusted", element="button", ref=ref)
    assert stale["error"]["code"] == "stale_ref" and stale["error"]["details"]["reason"] == "ref_epoch_mismatch"
    fresh = (await driver.deep())["text"]
    await driver.ok("click_trusted", element="button", ref=deep_ref(fresh, '"Closed secret button"'))
    assert await driver.on_page("document.getElementById('out').textContent") == "closed clicked true"


async def test_a_command_in_flight_fails_at_once_when_the_debugger_goes(driver):
    tab = await driver.open_l2("shadow.html")
    await driver.deep()
    waiting = asyncio.create_task(driver.control.call(
        "test.cdp", tab_id=tab, command="Runtime.evaluate", timeout=60,
        params={"expression": "new Promise(() => {})", "awaitPromise": True}))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    await driver.worker(f"tabwardenDebugger.detach({tab}, 'canceled_by_user')")
    answer = await asyncio.wait_for(waiting, 30)  # well before its own 60 s timeout
    assert answer["ok"] is False and answer["error"]["code"] == "cdp_detached"
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=tab)


async def test_idle_detach_waits_for_commands_in_flight(driver):
    tab = await driver.open_l2("shadow.html")
    await driver.deep()
    assert await driver.worker("tabwardenDebugger.setIdleDetachMs(400)") == 400
    try:
        # A command that takes three idle periods keeps the session: idle means nothing in flight.
        slow = await driver.control.call(
            "test.cdp", tab_id=tab, command="Runtime.evaluate", timeout=30,
            params={"expression": "new Promise((done) => setTimeout(() => done(7), 1200))", "awaitPromise": True,
                    "returnByValue": True})
        assert slow["ok"] and slow["value"]["result"]["value"] == 7, slow
        state = await driver.control.call("browser.debugger", tab_id=tab)
        assert state["attached"] and not any(d["tabId"] == tab for d in state["recentDetaches"]), state
        # Once nothing runs, the session ends after the idle period, reported as such.
        state = await debugger_state(driver, tab, lambda s: not s["attached"], "the idle detach")
        assert [d["reason"] for d in state["recentDetaches"] if d["tabId"] == tab] == ["idle"]
        assert await driver.worker("tabwardenDebugger.state().attachedTabId") is None
    finally:
        await driver.worker("tabwardenDebugger.setIdleDetachMs(30000)")
    # The next L2 call attaches again on demand.
    assert (await driver.deep())["ok"]


async def test_closing_the_tab_ends_the_session_as_target_closed(driver):
    tab = await driver.open_l2("shadow.html")
    text = (await driver.deep())["text"]
    await driver.ok("tab_close", tabId=tab)
    state = await debugger_state(driver, tab, lambda s: any(d["tabId"] == tab for d in s["recentDetaches"]),
                                 "the detach of the closed tab")
    assert [d["reason"] for d in state["recentDetaches"] if d["tabId"] == tab] == ["target_closed"]
    gone = await driver.call("click_trusted", element="button", ref=deep_ref(text, '"Closed secret button"'), tabId=tab)
    assert gone["error"]["code"] == "tab_closed"


async def test_one_tab_at_a_time(driver):
    first = await driver.open_l2("shadow.html")
    old = deep_ref((await driver.deep())["text"], '"Closed secret button"')
    second = await driver.open_l2("trusted.html")
    await driver.deep()
    state = await debugger_state(driver, first, lambda s: not s["attached"], "the first tab's detach")
    assert any(d["tabId"] == first and d["reason"] == "switched_tab" for d in state["recentDetaches"])
    assert await driver.worker("tabwardenDebugger.state().attachedTabId") == second
    stale = await driver.call("click_trusted", element="button", ref=old, tabId=first)
    assert stale["error"]["code"] == "stale_ref" and stale["error"]["details"]["reason"] == "ref_epoch_mismatch"


async def test_domains_chrome_debugger_does_not_allow_are_refused(driver):
    tab = await driver.open_l2("shadow.html")
    host_side = await driver.control.call("test.cdp", tab_id=tab, command="Browser.getVersion")
    assert host_side["ok"] is False and host_side["error"]["code"] == "cdp_domain_not_allowed"
    assert "Browser domain" in host_side["error"]["message"]
    # The extension refuses them too, whoever asks.
    code = await driver.worker(f"tabwardenDebugger.command({{tabId: {tab}, method: 'SystemInfo.getInfo', params: {{}}}})"
                               ".then(() => 'sent', (e) => e.code)")
    assert code == "cdp_domain_not_allowed"
    assert (await driver.control.call("test.cdp", tab_id=tab, command="Runtime.evaluate",
                                      params={"expression": "1 + 1", "returnByValue": True}))["value"]["result"]["value"] == 2


async def test_a_batch_runs_in_order_and_sends_nothing_after_a_stop(driver):
    import json

    tab = await driver.open_l2("trusted.html")
    await driver.on_page("document.getElementById('code').focus()")
    enable = {"method": "Network.enable", "params": {}, "overlap": True}
    done = await driver.worker(BATCH % (tab, json.dumps([LOOK, enable, *KEY_Q, READ])))
    assert "stoppedAt" not in done and len(done["results"]) == 5 and done["results"][-1]["result"]["value"] == "q"
    listed = lambda tabs: {t["id"] for t in tabs}  # noqa: E731
    assert tab in listed(done["tabsBefore"]) and listed(done["tabsBefore"]) == listed(done["tabsAfter"])
    # The focus is elsewhere: the look reads false, and the key is never sent.
    await driver.on_page("document.getElementById('code').blur()")
    moved = await driver.worker(BATCH % (tab, json.dumps([LOOK, *KEY_Q])))
    assert (moved["stoppedAt"], moved["unexpected"], len(moved["results"])) == (0, False, 1)
    await driver.on_page("document.getElementById('code').focus()")
    # A command that fails stops the batch with why: a world the page no longer has, say.
    gone = {"method": "Runtime.evaluate", "params": {"expression": "1", "contextId": 987654}, "expect": 1}
    failed = await driver.worker(BATCH % (tab, json.dumps([gone, *KEY_Q])))
    assert failed["stoppedAt"] == 0 and failed["results"] == [] and failed["error"]["code"] == "cdp_error"
    assert await driver.on_page("document.getElementById('code').value") == "q"  # one q: the first batch's
    # Domains are checked before anything is sent, and an empty batch is refused.
    refused = await driver.worker(BATCH % (tab, json.dumps([*KEY_Q, {"method": "SystemInfo.getInfo"}])))
    assert refused == {"thrown": "cdp_domain_not_allowed"}
    assert await driver.worker(BATCH % (tab, "[]")) == {"thrown": "invalid_params"}
    assert await driver.on_page("document.getElementById('code').value") == "q"
