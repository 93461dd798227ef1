"""Trusted input and the other L2 tools in a real browser: a page that ignores synthetic input
but accepts trusted input, key events with real key codes, a canvas button reachable only by
coordinates, a drag, a file upload from a user attachment, screenshots (metrics restored),
network-idle tracking, the accessibility-tree fallback for an empty page, agent input that
the manual-takeover detector must not take for a person, and no trusted input for an element
renamed since it was read."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from host.cdp.manager import AGENT_INPUT_WINDOW_S
from tests.support.browser_tools import module_fixtures, ref_of
from tests.support.browser_tools_l2 import deep_ref, l2_site, new_l2_driver

pytestmark = pytest.mark.browser

BACKGROUND_FRAME_STOP_S = 6.0


site, driver = module_fixtures(l2_site, new_l2_driver, "l2-input")


async def test_synthetic_typing_is_not_effective_but_trusted_typing_is(driver):
    await driver.open_l2("trusted.html")
    page = (await driver.read())["text"]
    l1 = await driver.call("type", element="Code", ref=ref_of(page, 'textbox "Code"'), text="abc")
    assert not l1["ok"] and l1["error"]["code"] == "l1_not_effective"
    assert l1["error"]["details"]["escalationTool"] == "type_trusted"
    assert await driver.on_page("document.getElementById('code').value") == ""
    page = (await driver.read())["text"]
    typed = await driver.ok("type_trusted", element="Code", ref=ref_of(page, 'textbox "Code"'), text="Ab-9")
    assert typed["details"]["evidence"]["outcome"] == "verified" and typed["details"]["evidence"]["trusted"] is True
    assert await driver.on_page("document.getElementById('code').value") == "Ab-9"
    # Real key codes: Shift for the capital, the digit and the minus on their own keys.
    keys = await driver.on_page("document.getElementById('keys').textContent")
    assert "Shift:ShiftLeft:16" in keys and "A:KeyA:65+shift" in keys and "-:Minus:189" in keys and "9:Digit9:57" in keys
    go = await driver.ok("click_trusted", element="Go", ref=ref_of(page, 'button "Go"'))
    assert go["ok"]
    assert await driver.on_page("document.getElementById('out').textContent") == "go with Ab-9"


async def test_press_key_sends_trusted_combinations(driver):
    await driver.open_l2("trusted.html")
    page = (await driver.read())["text"]
    code = ref_of(page, 'textbox "Code"')
    await driver.ok("type_trusted", element="Code", ref=code, text="xyz")
    pressed = await driver.ok("press_key", key="Control+a", ref=code)
    assert "trusted input" in pressed["text"] and "fallback" not in pressed["details"]
    await driver.ok("press_key", key="Backspace")
    assert await driver.on_page("document.getElementById('code').value") == ""
    keys = await driver.on_page("document.getElementById('keys').textContent")
    assert "a:KeyA:65+ctrl" in keys and "Backspace:Backspace:8" in keys
    bad = await driver.call("press_key", key="Hyper+q")
    assert not bad["ok"] and bad["error"]["code"] == "invalid_params"


async def test_append_mode_keeps_the_existing_text(driver):
    await driver.open_l2("trusted.html")
    page = (await driver.read())["text"]
    code = ref_of(page, 'textbox "Code"')
    await driver.ok("type_trusted", element="Code", ref=code, text="one")
    appended = await driver.ok("type_trusted", element="Code", ref=code, text=" two", mode="append")
    assert appended["details"]["evidence"]["outcome"] == "verified"
    assert await driver.on_page("document.getElementById('code').value") == "one two"


async def test_a_button_renamed_and_rewired_after_the_read_gets_no_trusted_click(driver):
    await driver.open("swap.html")
    l1 = ref_of((await driver.read())["text"], 'button "Save settings"')
    deep = deep_ref((await driver.deep())["text"], 'button "Save settings"')
    await driver.evaluate("swap.html", "window.swap()")  # same element: new name, new handler
    for ref in (l1, deep):
        result = await driver.call("click_trusted", element="Save settings", ref=ref)
        assert not result["ok"] and result["error"]["code"] == "target_changed", result
        assert result["error"]["details"]["dispatched"] is False
        assert result["error"]["details"]["found"] == {"role": "button", "name": "Delete account"}
    nick = ref_of((await driver.read())["text"], 'textbox "Nickname"')
    await driver.evaluate("swap.html", "document.querySelector('label[for=nick]').textContent = 'Password'")
    typed = await driver.call("type_trusted", element="Nickname", ref=nick, text="Ada")
    assert not typed["ok"] and typed["error"]["code"] == "target_changed", typed
    assert await driver.evaluate("swap.html", "[window.ran, document.getElementById('nick').value]") == [[], ""]
    # Read again, the button is what it now is: a click on it is judged (and runs) as that.
    now = deep_ref((await driver.deep())["text"], 'button "Delete account"')
    await driver.ok("click_trusted", element="Delete account", ref=now)
    assert await driver.evaluate("swap.html", "window.ran") == ["delete"]


async def test_canvas_button_is_reachable_by_coordinates_only(driver):
    await driver.open_l2("canvas.html")
    deep = (await driver.deep())["text"]
    assert "Launch" not in deep  # pixels only: no node names it
    missed = await driver.ok("click_xy", x=20, y=20)
    assert missed["ok"] and await driver.on_page("document.getElementById('out').textContent") == "missed"
    await driver.ok("click_xy", x=300, y=225, element="Launch button drawn on the canvas")
    assert await driver.on_page("document.getElementById('out').textContent") == "launched (trusted=true)"
    outside = await driver.call("click_xy", x=99_999, y=10)
    assert not outside["ok"] and outside["error"]["code"] == "invalid_params"


async def test_drag(driver):
    await driver.open_l2("canvas.html")
    dragged = await driver.ok("drag", **{"from": {"x": 20, "y": 350}, "to": {"x": 220, "y": 350}})
    assert dragged["details"]["from"] == {"x": 20.0, "y": 350.0}
    out = await driver.on_page("document.getElementById('drag-out').textContent")
    assert out.startswith("dragged 200px in ") and out.endswith("(trusted=true)")


async def test_upload_only_user_attachments(driver, site):
    await driver.open_l2("upload.html")
    page = (await driver.read())["text"]
    field = ref_of(page, 'button "Attachment"')
    unknown = await driver.call("upload_file", element="Attachment", ref=field, attachmentId="att-qqqqqqqqqqqqqqqq")
    assert unknown["error"]["code"] == "attachment_not_found"
    other_thread = await driver.control.call("browser.attach_file", thread_id="someone-else", name="x.txt",
                                             data_base64=base64.b64encode(b"not yours").decode())
    refused = await driver.call("upload_file", element="Attachment", ref=field, attachmentId=other_thread["attachmentId"])
    assert refused["error"]["code"] == "attachment_not_found"
    mine = await driver.control.call("browser.attach_file", thread_id=driver.thread_id, name="notes.txt",
                                     data_base64=base64.b64encode(b"hello from the user").decode(), mime="text/plain")
    uploaded = await driver.ok("upload_file", element="Attachment", ref=field, attachmentId=mine["attachmentId"])
    assert uploaded["details"]["evidence"]["outcome"] == "verified"
    settled = "Promise.race([window.uploaded, new Promise(r => setTimeout(() => r('no change event'), 10000))])"
    assert await driver.on_page(settled) == "notes.txt 19 hello from the user"


async def test_screenshots_restore_the_page_metrics(driver):
    await driver.open_l2("big.html")
    before = await driver.on_page("JSON.stringify([innerWidth, innerHeight, devicePixelRatio])")
    viewport = await driver.ok("screenshot")
    full = await driver.ok("screenshot", target="fullpage", format="jpeg", quality=50)
    assert Path(viewport["details"]["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert Path(full["details"]["path"]).read_bytes()[:2] == b"\xff\xd8"
    assert full["details"]["height"] > viewport["details"]["height"]
    assert await driver.on_page("JSON.stringify([innerWidth, innerHeight, devicePixelRatio])") == before
    text = (await driver.deep(maxTokens=500))["text"]
    shot = await driver.ok("screenshot", target=deep_ref(text, 'button "Action 0"'), annotate=True)
    assert 0 < shot["details"]["width"] < viewport["details"]["width"] and shot["details"]["labels"]
    assert await driver.on_page("document.querySelectorAll('[data-tabwarden-annotations]').length") == 0


async def test_a_background_tab_that_stopped_drawing_can_still_be_captured(driver):
    await driver.open_l2("big.html")  # tab_open: in the background, never shown
    # Chromium stops producing frames for a hidden tab after a few seconds; a bare capture then
    # waits forever for a frame.
    await asyncio.sleep(BACKGROUND_FRAME_STOP_S)
    shot = await asyncio.wait_for(driver.ok("screenshot"), 30)
    assert Path(shot["details"]["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_network_idle_is_tracked_around_trusted_input(driver):
    await driver.open_l2("network.html")
    text = (await driver.deep())["text"]
    clicked = await driver.ok("click_trusted", element="Load data", ref=deep_ref(text, 'button "Load data"'))
    assert clicked["details"]["networkSettled"] is True and clicked["details"]["networkRequests"] == 3
    assert await driver.on_page("document.getElementById('out').textContent") == "loaded ok,ok,ok"


async def test_a_key_that_starts_nothing_does_not_wait_and_one_that_loads_data_reports_it(driver):
    await driver.open_l2("keys.html")
    page = (await driver.read())["text"]
    field = ref_of(page, 'textbox "Query"')
    quiet = await driver.ok("press_key", key="ArrowRight", ref=field)
    assert quiet["details"]["networkRequests"] == 0 and quiet["details"]["networkWaited"] is False
    assert quiet["details"]["networkSettled"] is True
    again = await driver.ok("press_key", key="a")  # the focused field, no ref
    assert again["details"]["networkWaited"] is False
    # Enter makes the page fetch three times in a row, then write what it got: the result comes
    # once that is done.
    loads = await driver.ok("press_key", key="Enter")
    assert loads["details"]["networkWaited"] is True and loads["details"]["networkRequests"] == 3
    assert loads["details"]["networkSettled"] is True
    assert await driver.on_page("document.getElementById('out').textContent") == "loaded ok,ok,ok"


async def test_empty_page_falls_back_to_the_accessibility_tree(driver):
    await driver.open_l2("empty.html")
    read = await driver.ok("read_page")
    assert read["details"]["fallback"] == "ax_tree"
    assert "# Accessibility Tree (CDP fallback)" in read["text"]
    assert '"Company logo"' in read["text"] and "[ref=" not in read["text"]


async def test_agent_input_is_not_a_manual_takeover(driver):
    await driver.open_l2("trusted.html")
    page = (await driver.read())["text"]
    await driver.ok("click_trusted", element="Go", ref=ref_of(page, 'button "Go"'))
    await driver.ok("type_trusted", element="Code", ref=ref_of(page, 'textbox "Code"'), text="q")
    paused = await driver.control.call("browser.paused")
    assert not [p for p in paused if p["threadId"] == driver.thread_id]
    assert (await driver.read())["ok"]
    # The same kind of (trusted) input from someone else, once the agent's window has passed, is
    # a person taking over: the thread pauses.
    await asyncio.sleep(AGENT_INPUT_WINDOW_S + 0.3)
    person = await driver.page(driver.last_url)
    try:
        await person.trusted_click(60, 20)
    finally:
        await person.close()
    for _ in range(100):
        paused = await driver.control.call("browser.paused")
        if [p for p in paused if p["threadId"] == driver.thread_id]:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("a person's click did not pause the thread")
