"""read_page_deep and deep refs in a real browser, through the extension's debugger bridge: a
same-origin frame, a cross-site out-of-process frame with another out-of-process frame nested in
it, a closed shadow root, elements found only by their event listeners, and deep refs that go
stale (navigation, a newer read, a ref the host never minted). Each action is checked on the
page through the test's own CDP connection."""

from __future__ import annotations

import re

import pytest

from tests.support.browser_tools import module_fixtures, ref_of
from tests.support.browser_tools_l2 import DEEP_REF, deep_ref, l2_site, new_l2_driver
from tests.support.cdp import PageSession

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l2_site, new_l2_driver, "l2-deep")


def indent_of(text: str, part: str) -> int:
    line = next(line for line in text.split("\n") if part in line)
    body = line.split("] ", 1)[1] if line.startswith("[tabId=") else line
    return len(body) - len(body.lstrip(" "))


async def test_deep_read_crosses_same_origin_and_nested_out_of_process_frames(driver):
    tab = await driver.open_l2("frames.html", other=driver.other_site())
    shallow = (await driver.read())["text"]
    assert "[cross-origin, not visible]" in shallow and "cross button" not in shallow
    read = await driver.deep()
    text = read["text"]
    assert '- iframe "Cross-site frame" [out-of-process]' in text
    assert '- iframe "Nested frame" [out-of-process]' in text
    for name in ("Top button", "same button", "cross button", "nested button"):
        assert deep_ref(text, f'button "{name}"').startswith("c")
    assert indent_of(text, '"nested button"') > indent_of(text, '"cross button"') > indent_of(text, '"Top button"')
    assert read["details"]["outOfProcessFrames"] == 2 and read["details"]["unreachableFrames"] == 0
    state = await driver.control.call("browser.debugger", tab_id=tab)
    assert state["attached"] and len(state["sessions"]) == 2
    nested = next(s for s in state["sessions"] if "name=nested" in s["url"])
    assert nested["parent"] in {s["sessionId"] for s in state["sessions"]}  # attached from the cross-site frame


async def test_a_frame_of_a_blocked_site_is_withheld_from_the_deep_read(driver):
    blocked = driver.other_site()
    await driver.open_l2("frames.html", other=blocked)
    assert "cross button" in (await driver.deep())["text"]
    # Blocked once its frame is there (the guard keeps a blocked site's frame from loading in a
    # driven tab; one the page had before is withheld from the read).
    await driver.control.call("gatekeeper.add_origin", pattern=blocked, list="blocked")
    try:
        text = (await driver.deep())["text"]
        # The tab's own site is read; the blocked site's frame, and the frame nested in it, are not.
        assert 'button "Top button"' in text and 'button "same button"' in text
        assert "cross button" not in text and "nested button" not in text
        assert "[withheld: this site is on the blocked list (no access)]" in text, text
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=blocked, list="blocked")
    assert "cross button" in (await driver.deep())["text"]  # lifted: read again


async def test_trusted_clicks_land_in_every_frame(driver):
    await driver.open_l2("frames.html", other=driver.other_site())
    text = (await driver.deep())["text"]
    for name in ("nested button", "cross button", "same button"):
        clicked = await driver.ok("click_trusted", element=name, ref=deep_ref(text, f'button "{name}"'))
        assert clicked["details"]["evidence"]["trusted"] is True and clicked["details"]["networkSettled"] is True
    assert await driver.in_frame("nested", "document.getElementById('count').textContent") == "1"
    assert await driver.in_frame("cross", "document.getElementById('count').textContent") == "1"
    assert await driver.on_page("document.getElementById('same').contentDocument.getElementById('count').textContent") == "1"


async def test_trusted_typing_into_a_cross_site_frame(driver):
    await driver.open_l2("frames.html", other=driver.other_site())
    text = (await driver.deep())["text"]
    lines = [line for line in text.split("\n") if 'textbox "Frame field"' in line]
    cross_field = deep_ref(lines[1], "Frame field")  # same-origin, cross-site, nested: in that order
    typed = await driver.ok("type_trusted", element="Frame field", ref=cross_field, text="Hello, Frames!")
    assert typed["details"]["evidence"]["outcome"] == "verified", typed
    assert await driver.in_frame("cross", "document.getElementById('field').value") == "Hello, Frames!"
    assert await driver.in_frame("nested", "document.getElementById('field').value") == ""


async def test_closed_shadow_root_is_read_and_operated(driver):
    await driver.open_l2("shadow.html")
    assert "Closed secret button" not in (await driver.read())["text"]
    text = (await driver.deep())["text"]
    await driver.ok("click_trusted", element="Closed secret button", ref=deep_ref(text, '"Closed secret button"'))
    assert await driver.on_page("document.getElementById('out').textContent") == "closed clicked true"
    await driver.ok("type_trusted", element="Closed field", ref=deep_ref(text, '"Closed field"'), text="hello")
    assert await driver.on_page("document.getElementById('out').textContent") == "closed typed hello"


async def test_event_listener_scan_finds_a_plain_clickable_box(driver):
    await driver.open_l2("trusted.html")
    read = await driver.deep()
    line = next(line for line in read["text"].split("\n") if "Plain box" in line)
    assert "clickable" in line and "[listener=click]" in line
    assert read["details"]["listenerCandidates"] > 0 and read["details"]["listenerRefs"] >= 1
    await driver.ok("click_trusted", element="Plain box", ref=deep_ref(line, "Plain box"))
    assert await driver.on_page("document.getElementById('out').textContent") == "box clicked true"


async def test_password_fields_are_known_and_never_echoed(driver):
    await driver.open_l2("trusted.html")
    text = (await driver.deep())["text"]
    secret = deep_ref(text, 'textbox "Secret"')
    assert "[type=password]" in next(line for line in text.split("\n") if secret in line)
    asked = await driver.call("type_trusted", element="Secret", ref=secret, text="hunter2")
    # The host knows the deep ref is a password field: even under `auto` the gatekeeper asks.
    assert not asked["ok"] and asked["error"]["code"] == "approval_required"
    assert await driver.on_page("document.getElementById('secret').value") == ""


async def test_deep_refs_go_stale_and_nothing_is_sent(driver):
    tab = await driver.open_l2("shadow.html")
    first = (await driver.deep())["text"]
    old = deep_ref(first, '"Closed secret button"')
    second = (await driver.deep())["text"]
    replaced = await driver.call("click_trusted", element="button", ref=old)
    assert replaced["error"]["code"] == "stale_ref" and replaced["error"]["details"]["reason"] == "ref_invalidated"
    current = deep_ref(second, '"Closed secret button"')
    missing = await driver.call("click_trusted", element="button", ref=current.rsplit("_", 1)[0] + "_999")
    assert missing["error"]["details"]["reason"] == "ref_not_found"
    foreign = await driver.call("click_trusted", element="button", ref="czzzz_1_1_1")
    assert foreign["error"]["details"]["reason"] == "ref_epoch_mismatch"
    # A navigation makes every deep ref of the old document stale.
    url = driver.l2_url("shadow.html")
    await driver.ok("navigate", url=url)
    after = await driver.call("click_trusted", element="button", ref=current)
    assert after["error"]["code"] == "stale_ref" and after["error"]["details"]["reason"] == "ref_epoch_mismatch"
    assert after["error"]["details"]["dispatched"] is False
    assert await driver.evaluate_in(url, "document.getElementById('out').textContent") == ""
    page = await driver.control.call("browser.debugger", tab_id=tab)
    assert page["epoch"] > int(current.split("_")[1])


async def test_l1_refs_are_translated_through_the_page_executor(driver):
    await driver.open_l2("trusted.html")
    text = (await driver.read())["text"]
    await driver.ok("click_trusted", element="Go", ref=ref_of(text, 'button "Go"'))
    assert await driver.on_page("document.getElementById('out').textContent") == "go with "
    # A later read keeps the ref of the unchanged button; once the button is renamed, the ref
    # from before is stale, as it would be for an L1 action.
    again = (await driver.read())["text"]
    assert ref_of(again, 'button "Go"') == ref_of(text, 'button "Go"')
    await driver.on_page("document.getElementById('go').textContent = 'Go now'")
    await driver.read()
    stale = await driver.call("click_trusted", element="Go", ref=ref_of(text, 'button "Go"'))
    assert stale["error"]["code"] == "stale_ref" and stale["error"]["details"]["dispatched"] is False


def top_frame_refs(text: str) -> list[str]:
    """What each ref line of the top frame shows (role, name, states), in order: lines inside an
    iframe, and elements found by their listeners, left out."""
    out, inside = [], None
    for line in text.split("\n"):
        body = line.split("] ", 1)[1] if line.startswith("[tabId=") else line
        depth = len(body) - len(body.lstrip(" "))
        if inside is not None and depth > inside:
            continue
        inside = depth if body.lstrip().startswith("- iframe") else None
        if " [ref=" in body and "[listener=" not in body:
            out.append(body.strip()[2:].split(" [ref=")[0])
    return out


async def whole_tree_refs(driver, url_part: str) -> list[str]:
    """The same, from the whole tree Chromium gives the test's own CDP connection."""
    from host.browser.l2.ax_tree import RefMark, build_lines, frame_from_nodes, is_interactive, role_of

    session = await PageSession.open(driver._port, url_part)
    try:
        nodes = (await session.send("Accessibility.getFullAXTree"))["nodes"]
    finally:
        await session.close()
    frame = frame_from_nodes("tab/top", None, "top", "", "", nodes)
    lines = build_lines(frame, lambda f, n: RefMark("r", role_of(n)) if is_interactive(n) else None, lambda f, n: "x")
    return [line.body.split(" [ref=")[0] for line in lines if line.kind == "ref"]


async def test_a_long_page_is_read_only_as_far_as_the_text_shows(driver):
    tab = await driver.open_l2("long.html")
    await driver.ok("tab_focus", tabId=tab)  # a shown page: a hidden one is read whole
    read = await driver.deep()
    text, details = read["text"], read["details"]
    assert re.search(r"\[the page has \d+ elements: read as far as this text can show \(\d+\), the rest not read\]", text)
    for part in ('button "Hidden offer"', 'button "Five stars"', 'button "early button"', 'clickable "Plain tile"',
                 'region "Products"', 'button "Buy 0"'):
        assert part in text, part
    assert "Late footer button" not in text and "late button" not in text
    assert details["frames"] == 2  # the late frame's document was never read
    assert details["refCount"] == len(DEEP_REF.findall(text))  # no ref the text does not show
    # The refs shown are the start of what the whole tree holds: none missing, none added, same order.
    ours = top_frame_refs(text)
    assert len(ours) > 300 and ours == (await whole_tree_refs(driver, driver.last_url))[: len(ours)]
    buys = [int(n) for n in re.findall(r'button "Buy (\d+)"', text)]
    assert buys == list(range(len(buys)))
    last = buys[-1]
    await driver.ok("click_trusted", element=f"Buy {last}", ref=deep_ref(text, f'button "Buy {last}"'))
    assert await driver.on_page("document.getElementById('out').textContent") == f"bought {last} true"
    await driver.ok("click_trusted", element="Five stars", ref=deep_ref(text, 'button "Five stars"'))
    # A bigger budget reads further.
    wider = (await driver.deep(maxTokens=6000))["text"]
    assert len(re.findall(r'button "Buy (\d+)"', wider)) > len(buys)


async def test_a_long_page_in_a_hidden_tab_is_read_whole(driver):
    await driver.open_l2("long.html")  # a background tab draws no frames
    read = await driver.deep()
    text, details = read["text"], read["details"]
    assert "[the page has" not in text and details["frames"] == 3
    assert 'button "Five stars"' in text and 'button "Buy 0"' in text
    assert details["refCount"] == len(DEEP_REF.findall(text))
    ours = top_frame_refs(text)
    assert ours == (await whole_tree_refs(driver, driver.last_url))[: len(ours)]
