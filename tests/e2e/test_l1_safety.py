"""The safety boundaries of the browser tools in a real browser: the MAIN-world dialog patch, writes
that never get an answer (never replayed), child tabs, manual takeover, site access, the
gatekeeper before every dispatch, an element renamed after it was read (never acted on),
structured errors for bad input at both boundaries, per-tab serialisation and cancellation."""

from __future__ import annotations

import asyncio

import pytest

from host.transport.errors import RequestError
from tests.support.browser_tools import EXECUTOR_AND_WATCH, a_person_opens, l1_site, module_fixtures, new_driver, ref_of
from tests.support.cdp import PageSession, debugging_port, evaluate_in_content_world, evaluate_in_worker
from tests.support.waiting import until

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "l1-safety")


async def fresh(driver, page: str, **query: str) -> str:
    await driver.open(page, **query)
    return (await driver.read())["text"]


PATCH_STATE = "window[Symbol.for('tabwarden.dialogPatch')]"

# ---------------------------------------------------------------- dialogs


async def test_confirm_is_auto_cancelled_and_reported(driver):
    page = await fresh(driver, "dialogs.html")
    assert await driver.evaluate("dialogs.html", f"{PATCH_STATE} === undefined")  # reads never patch
    result = await driver.ok("click", element="Delete all", ref=ref_of(page, "Delete all"))
    assert 'The page opened 1 dialog(s):\n- confirm("Delete everything?"): auto-cancelled (returned false)' in result["text"]
    assert result["details"]["dialogs"] == [{"kind": "confirm", "message": "Delete everything?", "answer": False}]
    assert await driver.evaluate("dialogs.html", "document.getElementById('out').textContent") == "confirm returned false"
    # Restored after the write: the page's own functions are back.
    assert await driver.evaluate("dialogs.html", "window.patchedNow()") is False
    assert await driver.evaluate("dialogs.html", f"{PATCH_STATE} === undefined")  # nothing of the patch's left


async def test_prompt_returns_null_and_alert_is_closed(driver):
    page = await fresh(driver, "dialogs.html")
    prompted = await driver.ok("click", element="Ask name", ref=ref_of(page, "Ask name"))
    assert "auto-cancelled (returned null)" in prompted["text"]
    assert await driver.evaluate("dialogs.html", "document.getElementById('out').textContent") == "prompt returned null"
    page = (await driver.read())["text"]
    alerted = await driver.ok("click", element="Notify", ref=ref_of(page, "Notify"))
    assert '- alert("Saved!"): closed' in alerted["text"]
    assert await driver.evaluate("dialogs.html", "document.getElementById('out').textContent") == "after alert"


async def test_no_dialog_guard_means_no_dispatch(driver):
    page = await fresh(driver, "dialog-locked.html")
    result = await driver.call("click", element="Proceed", ref=ref_of(page, "Proceed"))
    assert not result["ok"] and result["error"]["code"] == "safety_boundary_unavailable"
    assert result["error"]["phase"] == "precheck" and result["error"]["details"]["dispatched"] is False
    assert "window.confirm cannot be replaced" in result["error"]["message"]
    assert await driver.evaluate("dialog-locked.html", "window.clicked") is None
    assert await driver.evaluate("dialog-locked.html", "window.alert.toString().includes('[native code]')")


async def test_a_guard_that_cannot_be_removed_is_reported(driver):
    page = await fresh(driver, "dialogs.html")
    result = await driver.call("click", element="Lock confirm", ref=ref_of(page, "Lock confirm"))
    assert not result["ok"] and result["error"]["code"] == "safety_boundary_unavailable"
    details = result["error"]["details"]
    assert result["error"]["phase"] == "recover"
    assert details["restoreAttempts"] == 2 and details["dialogInterceptionMayRemain"] is True
    assert details["dispatched"] is True and details["effectMayHaveOccurred"] is True
    assert await driver.evaluate("dialogs.html", "document.getElementById('out').textContent") == "locked"


# ---------------------------------------------------------------- no reply, new tabs


async def test_a_write_whose_page_reloads_is_uncertain_and_never_replayed(driver):
    page = await fresh(driver, "reload.html")
    assert await driver.evaluate("reload.html", "document.getElementById('loads').textContent") == "1"
    result = await driver.call("click", element="Reload page", ref=ref_of(page, "Reload page"))
    assert not result["ok"] and result["error"]["code"] == "navigation_uncertain"
    assert result["error"]["retryable"] is False and result["error"]["details"]["effectMayHaveOccurred"] is True
    assert "do not simply repeat" in result["text"]
    # Exactly one reload happened: the click was not sent twice.
    await driver.ok("wait_for", text="Loads: 2")
    assert await driver.evaluate("reload.html", "document.getElementById('loads').textContent") == "2"


async def test_a_link_that_leaves_the_page_reports_the_navigation(driver):
    page = await fresh(driver, "search.html")
    result = await driver.ok("click", element="results link", ref=ref_of(page, "Go to results"))
    assert "navigated to" in result["text"] and "every earlier ref is invalid" in result["text"]
    assert '- heading "Results" [level=1]' in result["text"]
    old = await driver.call("click", element="results link", ref=ref_of(page, "Go to results"))
    assert not old["ok"] and old["error"]["code"] == "stale_ref"


async def test_a_child_tab_becomes_the_follow_up_target(driver):
    source = await driver.open("newtab.html")
    page = (await driver.read())["text"]
    result = await driver.ok("click", element="child link", ref=ref_of(page, "Open child in new tab"))
    child = result["resultTabId"]
    assert child and child != source and result["tabId"] == source
    assert f"The action opened a new tab {child}" in result["text"] and "it is now the task's default tab" in result["text"]
    assert "tab_created" in result["details"]["evidence"]["observedEffects"]
    routes = await driver.control.call("browser.routes", thread_id=driver.thread_id)
    assert routes["target"] == child and child in routes["driven"]
    follow_up = await driver.read()
    assert follow_up["tabId"] == child and "Child page" in follow_up["text"]


async def test_a_blocked_popup_is_reported_not_invented(driver):
    page = await fresh(driver, "newtab.html")
    before = len(await driver.control.call("browser.tabs"))
    result = await driver.ok("click", element="script opener", ref=ref_of(page, "Open child with script"))
    after = await driver.control.call("browser.tabs")
    if len(after) == before:
        assert "child.html?via=open in a new tab or window, but none appeared" in result["text"]
        assert "resultTabId" not in result
    else:  # a browser that lets it through: then it is adopted like any child
        assert result["resultTabId"] in {t["id"] for t in after}
    assert result["details"]["openedUrls"][0].endswith("child.html?via=open")


async def test_a_pages_own_open_function_is_not_reported_as_a_popup(driver):
    page = await fresh(driver, "own-open.html")
    result = await driver.ok("click", element="Show details", ref=ref_of(page, 'button "Show details"'))
    assert "new tab or window" not in result["text"] and "openedUrls" not in result["details"], result
    assert 'text: "Details shown"' in result["text"]


# ---------------------------------------------------------------- manual takeover


async def test_a_person_clicking_a_driven_tab_pauses_the_writing_thread(driver, site):
    tab = await driver.open("form.html")
    page = (await driver.read())["text"]
    await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    session = await driver.page("form.html")
    try:
        await session.trusted_click(5, 5)
    finally:
        await session.close()
    for _ in range(100):
        paused = await driver.control.call("browser.paused")
        if any(p["threadId"] == driver.thread_id for p in paused):
            break
        await asyncio.sleep(0.05)
    info = next(p for p in paused if p["threadId"] == driver.thread_id)
    assert info["tabId"] == tab and info["kind"] == "mousedown"
    blocked = await driver.call("read_page")
    assert not blocked["ok"] and blocked["error"]["code"] == "paused"
    other = await driver.call("read_page", thread_id="a-reader", tabId=tab)
    assert other["ok"]
    assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True
    assert (await driver.call("read_page"))["ok"]


async def paused_info(driver) -> dict:
    async def pause() -> dict | None:
        paused = await driver.control.call("browser.paused")
        return next((p for p in paused if p["threadId"] == driver.thread_id), None)

    return await until(pause, 5, f"{driver.thread_id} to be paused", interval=0.05)


@pytest.mark.parametrize("frame", ["same", "cross"])
async def test_a_person_clicking_inside_a_frame_of_a_driven_tab_pauses_too(driver, frame):
    tab = await driver.open("frames.html", other="{OTHER}")
    page = (await driver.read())["text"]
    await driver.ok("click", element="Frame button", ref=ref_of(page, 'button "Frame button"'))
    session = await driver.page("frames.html")
    try:
        box = await session.evaluate(f"(() => {{ const r = document.getElementById('{frame}').getBoundingClientRect();"
                                     " return [r.x + 20, r.y + 30]; })()")
        await session.trusted_click(*box)
    finally:
        await session.close()
    info = await paused_info(driver)
    assert info["tabId"] == tab and info["kind"] == "mousedown"
    assert "frame-inner.html" in info.get("url", "frame-inner.html")
    assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True


async def test_a_frame_that_loads_after_the_executor_is_watched_too(driver):
    tab = await driver.open("frames.html", other="{OTHER}")
    page = (await driver.read())["text"]
    await driver.ok("click", element="Frame button", ref=ref_of(page, 'button "Frame button"'))
    session = await driver.page("frames.html")
    try:
        # A new cross-origin frame, after the executor and the first watchers went in.
        box = await session.evaluate("""new Promise((done) => {
            const frame = document.createElement('iframe');
            frame.src = document.getElementById('cross').src.replace('frame-inner.html', 'frame-inner.html?late=1');
            frame.style = 'position:fixed; left:0; top:0; width:300px; height:120px; border:0';
            frame.onload = () => setTimeout(() => done([40, 30]), 500);
            document.body.appendChild(frame);
        })""")
        await session.trusted_click(*box)
    finally:
        await session.close()
    info = await paused_info(driver)
    assert info["tabId"] == tab and "late=1" in info["url"], info
    assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True


async def test_a_page_a_person_opens_while_the_agent_works_carries_a_dormant_executor(driver):
    # While the agent works, the browser puts the executor into every page we may script (the
    # agent's next page then needs no injection). That alone drives no page: a press in a page
    # only the person uses is nobody's takeover, until the agent asks that page for something.
    await fresh(driver, "form.html")
    port = debugging_port(driver.site.run.profile)
    assert await evaluate_in_content_world(port, "form.html", EXECUTOR_AND_WATCH) == [True, True]
    assert await a_person_opens(driver, "person=1", driver.site.url("search.html", person="1")) == [True, False]
    session = await driver.page("person=1")
    try:
        await session.trusted_click(5, 5)
    finally:
        await session.close()
    assert await evaluate_in_content_world(port, "person=1", EXECUTOR_AND_WATCH) == [True, False]
    tabs = await driver.control.call("browser.tabs")
    theirs = next(t["id"] for t in tabs if "person=1" in t.get("url", ""))
    assert (await driver.call("read_page", tabId=theirs))["ok"]
    assert await evaluate_in_content_world(port, "person=1", EXECUTOR_AND_WATCH) == [True, True]
    # The agent's work over, pages go without it; its next load brings the registration back.
    await evaluate_in_worker(port, "tabwarden.executorAtWork.end()")
    assert await a_person_opens(driver, "person=2", driver.site.url("search.html", person="2")) == [False, False]
    await driver.open("form.html")
    await until(lambda: evaluate_in_worker(port, "tabwarden.executorAtWork.state().inForce.length > 0"), 5,
                "the executor registered again", interval=0.05)
    assert await a_person_opens(driver, "person=3", driver.site.url("search.html", person="3")) == [True, False]


# ---------------------------------------------------------------- authorisation


async def test_a_write_under_the_default_policy_needs_approval_and_does_nothing(driver):
    page = await fresh(driver, "form.html")
    result = await driver.call("click", element="Save", ref=ref_of(page, 'button "Save"'), policy=None)
    assert not result["ok"] and result["error"]["code"] == "approval_required"
    assert result["error"]["details"]["reasonCode"] == "policy_default"
    assert result["error"]["details"]["dispatched"] is False
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == ""


async def test_a_page_without_site_access_asks_with_the_host_permission_flag(driver, site):
    url = f"http://localhost:{site.main.port}/l1/form.html"
    opened = await driver.ok("tab_open", url=url)
    await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=opened["tabId"])
    result = await driver.call("read_page")
    assert not result["ok"] and result["error"]["code"] == "approval_required"
    assert "host_permission" in result["error"]["details"]["flags"]
    assert result["error"]["details"]["targetOrigin"] == f"http://localhost:{site.main.port}"


# ---------------------------------------------------------------- the element the host judged


async def test_a_button_renamed_and_rewired_after_the_read_is_not_clicked(driver):
    page = await fresh(driver, "swap.html")
    save = ref_of(page, 'button "Save settings"')
    await driver.evaluate("swap.html", "window.swap()")  # same element: new name, new handler
    result = await driver.call("click", element="Save settings", ref=save)
    assert not result["ok"] and result["error"]["code"] == "target_changed", result
    assert result["error"]["details"]["dispatched"] is False
    assert result["error"]["details"]["found"] == {"role": "button", "name": "Delete account"}
    assert 'it was button "Save settings", it is now button "Delete account"' in result["error"]["message"]
    assert await driver.evaluate("swap.html", "window.ran") == []
    # Read again, the button is what it now is: a click on it is judged (and runs) as that.
    page = (await driver.read())["text"]
    await driver.ok("click", element="Delete account", ref=ref_of(page, 'button "Delete account"'))
    assert await driver.evaluate("swap.html", "window.ran") == ["delete"]


async def test_a_batch_stops_at_the_renamed_element(driver):
    page = await fresh(driver, "swap.html")
    await driver.evaluate("swap.html", "window.swap()")
    result = await driver.call("batch_actions", actions=[
        {"action": "type", "element": "nickname", "ref": ref_of(page, 'textbox "Nickname"'), "text": "Ada"},
        {"action": "click", "element": "save", "ref": ref_of(page, 'button "Save settings"')},
    ])
    assert not result["ok"] and result["error"]["code"] == "target_changed", result
    details = result["error"]["details"]
    assert details["failedIndex"] == 1 and len(details["completed"]) == 1
    assert await driver.evaluate("swap.html", "document.getElementById('nick').value") == "Ada"
    assert await driver.evaluate("swap.html", "window.ran") == []


async def test_the_page_executor_acts_only_on_the_element_the_host_expects(driver):
    tab = await driver.open("form.html")
    page = (await driver.read())["text"]
    save = ref_of(page, 'button "Save"')
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="click", write=True,
                                    params={"ref": save, "expect": {"role": "button", "name": "Save and pay"}})
    assert raw["ok"] is False and raw["error"]["code"] == "target_changed", raw
    assert raw["error"]["phase"] == "precheck" and raw["error"]["details"]["dispatched"] is False
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == ""
    # Named as expected, but the host judged it as leading somewhere it does not: refused as well.
    elsewhere = {"url": "https://elsewhere.example/take", "method": "POST", "newTab": False}
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="click", write=True,
                                    params={"ref": save, "expect": {"role": "button", "name": "Save", "leads": elsewhere}})
    assert raw["ok"] is False and raw["error"]["code"] == "target_changed", raw
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="click", write=True,
                                    params={"ref": save, "expect": {"role": "button", "name": "Save"}})
    assert raw["ok"] is True, raw
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == "Saved "


async def test_javascript_urls_are_denied_by_destination(driver):
    result = await driver.call("tab_open", url="javascript:alert(document.cookie)")
    assert not result["ok"] and result["error"]["code"] == "denied"
    assert result["error"]["details"]["reasonCode"] == "script_scheme"


# ---------------------------------------------------------------- bad input, both boundaries


@pytest.mark.parametrize("tool,params,code,where", [
    ("teleport", {}, "unknown_tool", ""),
    ("read_page", {"maxTokens": 7000}, "invalid_params", "$.maxTokens"),
    ("click", {"element": "x", "ref": ""}, "invalid_params", "$.ref"),
    ("click", {"ref": "sabc_1_1"}, "invalid_params", "element"),
    ("type", {"element": "x", "ref": "sabc_1_1", "text": "a" * 100_001}, "invalid_params", "$.text"),
    ("click", {"element": "x", "ref": "sabc_1_1", "force": True}, "invalid_params", "force"),
    ("batch_actions", {"actions": [{"action": "click", "element": "x", "ref": "sabc_1_1"}] * 5}, "invalid_params", "$.actions"),
    ("memory_read", {}, "unsupported", "memory_read"),
])
async def test_bad_calls_are_refused_by_the_host(driver, tool, params, code, where):
    result = await driver.call(tool, **params)
    assert not result["ok"] and result["error"]["code"] == code
    assert where in result["error"]["message"]


SAVE = {"role": "button", "name": "Save"}


@pytest.mark.parametrize("tool,params,where", [
    ("click", {"ref": "sabc_1_1", "element": "Save"}, "$.element: unknown parameter"),
    ("click", {"ref": "", "expect": SAVE}, "$.ref"),
    ("click", {"ref": "sabc_1_1"}, "$.expect: required"),
    ("click", {"ref": "sabc_1_1", "expect": {**SAVE, "tag": "button"}}, "$.expect.tag: unknown parameter"),
    ("press_key", {"key": "Enter", "ref": "sabc_1_1"}, "a ref needs the element the host expects there"),
    ("batch_actions", {"actions": [{"action": "click", "ref": "sabc_1_1"}]}, "$.actions[0].expect: required"),
    ("type", {"ref": "sabc_1_1", "text": "a" * 100_001, "expect": SAVE}, "$.text: expected at most 100000"),
    ("read_page", {"maxTokens": 6001}, "$.maxTokens"),
    ("batch_actions", {"actions": [{"action": "click", "ref": "sabc_1_1"}] * 5}, "$.actions: expected 1..4"),
    ("batch_actions", {"actions": [{"action": "click", "ref": "sabc_1_1", "allowRecovery": True}]}, "allowRecovery: unknown"),
    ("wait_for", {}, "give text"),
    ("hover", {"ref": "sabc_1_1", "allowRecovery": True}, "allowRecovery: unknown"),
    ("click", ["not", "an", "object"], "$: expected an object"),
])
async def test_bad_calls_are_refused_by_the_page_executor_too(driver, tool, params, where):
    tab = await driver.open("form.html")
    # Sent as the host sends it: a write the one-off way, with its dialog patch (a write on the
    # reads' port is refused before its parameters are looked at).
    write = tool not in ("read_page", "wait_for")
    raw = await driver.control.call("test.content_call", tab_id=tab, tool=tool, params=params, write=write)
    assert raw["ok"] is False and raw["error"]["code"] == "invalid_params", raw
    assert where in raw["error"]["message"]
    assert raw["error"]["phase"] == "precheck"
    assert await driver.evaluate("form.html", "document.getElementById('status').textContent") == ""


async def test_unknown_content_tools_are_refused_by_the_page_executor(driver):
    tab = await driver.open("form.html")
    raw = await driver.control.call("test.content_call", tab_id=tab, tool="run_anything", params={})
    assert raw["ok"] is False and raw["error"]["code"] == "unsupported"


async def test_closed_and_non_web_tabs_are_errors_not_redirects(driver):
    tab = await driver.open("form.html")
    await driver.ok("tab_close", tabId=tab)
    closed = await driver.call("read_page")
    assert not closed["ok"] and closed["error"]["code"] == "tab_closed"
    tabs = await driver.control.call("browser.tabs")
    blank = next(t["id"] for t in tabs if t["url"] == "about:blank")
    not_web = await driver.call("read_page", tabId=blank)
    assert not not_web["ok"] and not_web["error"]["code"] == "not_web_page"


# ---------------------------------------------------------------- serialisation, cancellation


async def test_calls_from_two_threads_on_one_tab_both_complete(driver):
    tab = await driver.open("form.html")
    page = (await driver.read())["text"]
    waiting = driver.call("wait_for", thread_id="other-thread", tabId=tab, timeMs=400)
    typing = driver.call("type", element="name", ref=ref_of(page, 'textbox "Full name"'), text="Both ran")
    waited, typed = await asyncio.gather(waiting, typing)
    assert waited["ok"] and typed["ok"], (waited, typed)
    assert await driver.evaluate("form.html", "document.getElementById('name').value") == "Both ran"


async def test_a_cancelled_call_frees_the_tab(driver):
    await driver.open("form.html")
    with pytest.raises(RequestError):
        await driver.control.call("tools.call", timeout=1.0, tool="wait_for", params={"timeMs": 20_000},
                                  thread_id=driver.thread_id)
    # Had the cancel not reached the page, this read would queue behind a 20 s wait.
    result = await driver.control.call("tools.call", timeout=8.0, tool="read_page", params={}, thread_id=driver.thread_id)
    assert result["ok"]


async def test_text_that_never_comes_times_out_as_retryable(driver):
    await driver.open("form.html")
    result = await driver.call("wait_for", text="this will not appear", timeMs=500)
    assert not result["ok"] and result["error"]["code"] == "timeout" and result["error"]["retryable"]
    _ = PageSession
