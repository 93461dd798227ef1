"""Frames are origins, in a real browser: an L2 write is judged, checked for site access and
audited at the origin of the frame its input lands in, not at the tab's.

A shop page (A, 127.0.0.1) embeds a payment form from another origin (B): once from another
site (localhost: an out-of-process frame) and once from the same site on another port (an
in-process frame). With A's thread scope-locked to A, or with B on the blocked list, trusted
clicks and typing on deep refs inside B, and clicks, drags and keys that land in B, are denied
before anything reaches B's document (which counts every event it gets), and the audit names
B. With B allowed they work as before. A frame that moves to another origin between the
approval and the dispatch ends the call as `target_changed`; a frame at an origin the
extension may not script (127.0.0.2) makes the call ask for that access."""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.support.browser_tools import Site, browser_site, module_fixtures, ref_of
from tests.support.browser_tools_l2 import L2Driver, deep_ref, new_l2_driver
from tests.support.cdp import PageSession, evaluate_target
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.pages import PageServer
from tests.support.waiting import until

pytestmark = pytest.mark.browser

# Where things are in checkout.html and payment.html (their CSS places them): top-level CSS px.
TOP_BUTTON = (40, 55)
PAY_BUTTON = (30, 140)  # payment frame at (0, 80); its Pay button at (10, 50) in the frame
PAY_TRACK = ((20, 200), (200, 200))  # the payment frame's track: y 180-220
NOTHING = {"mousedown": 0, "keydown": 0, "input": 0, "submit": 0}
L2_WRITES = frozenset({"click_trusted", "type_trusted", "click_xy", "drag", "press_key", "upload_file"})


@dataclass
class FramesSite:
    browser: Site  # two page servers whose hosts the extension may script
    far: PageServer  # 127.0.0.2: a host it may not
    model: FakeOpenAI

    def payment_base(self, kind: str) -> str:
        """The payment site: another site (out-of-process frame) or this site on another port."""
        host = "localhost" if kind == "cross-site" else "127.0.0.1"
        return f"http://{host}:{self.browser.other.port}"

    @property
    def shop(self) -> str:
        return f"http://127.0.0.1:{self.browser.main.port}"


@contextmanager
def frames_site(run_dir: Path) -> Iterator[FramesSite]:
    with PageServer(host="127.0.0.2") as far, FakeOpenAI() as model:
        with browser_site(run_dir, ["http://127.0.0.1/*", "http://localhost/*"], model.url) as browser:
            yield FramesSite(browser, far, model)


async def _driver(site: FramesSite, thread_id: str) -> L2Driver:
    return await new_l2_driver(site.browser, thread_id)


site, driver = module_fixtures(frames_site, _driver, "l2-frames")


@pytest.fixture(params=["cross-site", "same-site"])
def kind(request) -> str:
    return request.param


async def checkout(driver: L2Driver, pay_base: str) -> dict[str, Any]:
    """Open the shop page with its payment frame from `pay_base`; its tab and the deep refs of
    its fields."""
    tab = await driver.open_l2("checkout.html", pay=pay_base.split("://", 1)[1])

    async def loaded() -> str | None:
        text = (await driver.deep())["text"]
        return text if 'button "Pay"' in text else None

    text = await until(loaded, 10, "the payment frame in the deep read")
    return {"tab": tab, "text": text, "card": deep_ref(text, 'textbox "Payment reference"'),
            "pay": deep_ref(text, 'button "Pay"'), "top": deep_ref(text, 'button "Top button"')}


async def in_payment(driver: L2Driver, expression: str, *, settling: bool = False) -> Any:
    """`expression` (reading the DOM only) in the payment frame of the page opened last, through
    the test's own DevTools connection: in the frame's own target when it is out of process,
    else in an isolated world of the page's. `settling`: the frame may be loading again (moved in
    the page), so finding it nowhere yet is None, to ask again."""
    port = driver._port
    page = await PageSession.open(port, driver.last_url)
    try:
        tree = (await page.send("Page.getFrameTree"))["frameTree"]
        local = [child["frame"] for child in tree.get("childFrames") or [] if "payment.html" in child["frame"]["url"]]
        if local:
            world = await page.send("Page.createIsolatedWorld", {"frameId": local[0]["id"], "worldName": "test-check"})
            answer = await page.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                          "contextId": world["executionContextId"]})
            return answer["result"].get("value")
    finally:
        await page.close()
    tag = f"payment.html?tag={driver.visit}"
    try:
        return await evaluate_target(port, lambda t: t.get("type") == "iframe" and tag in t.get("url", ""), expression)
    except AssertionError:
        if settling:
            return None  # an in-process frame between its documents: neither local yet nor a target of its own
        raise


async def what_reached_payment(driver: L2Driver) -> dict[str, Any]:
    state = await in_payment(driver, "JSON.stringify({seen: JSON.parse(document.documentElement.dataset.seen), "
                                     "card: document.getElementById('card').value, "
                                     "paid: document.getElementById('paid').textContent})")
    return json.loads(state)


async def focus_the_payment_frame(driver: L2Driver) -> None:
    """The shop hands the focus to the payment frame and the frame to its card field, as pages
    may do on their own (nothing of Tabwarden's is involved)."""
    await driver.on_page("document.getElementById('pay').contentWindow.focus(), true")
    await in_payment(driver, "document.getElementById('card').focus(), true")
    await until(lambda: in_payment(driver, "document.activeElement && document.activeElement.id === 'card'"), 5,
                "the card field to hold the focus")
    assert await driver.on_page("document.activeElement.id") == "pay"


async def audit_rows(driver: L2Driver, kind: str) -> list[dict[str, Any]]:
    """The thread's audit rows of one kind for the L2 writes (opening and reading pages aside)."""
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=200)
    return [row for row in rows if row["kind"] == kind and row["tool"] in L2_WRITES]


def denied(result: dict, code: str, origin: str) -> None:
    assert not result["ok"], result
    error = result["error"]
    assert error["code"] == "denied" and error["details"]["reasonCode"] == code, error
    assert error["details"]["targetOrigin"] == origin and error["details"]["dispatched"] is False


async def engine_thread(driver: L2Driver, **fields: Any) -> str:
    """A thread the engine knows (a scope lock needs one), made this driver's thread."""
    created = await driver.control.call("engine.op", op={"type": "thread.create", "submissionId": f"c-{driver.thread_id}",
                                                         **fields})
    driver.thread_id = created["threadId"]
    return driver.thread_id


async def test_the_deep_read_names_the_origin_of_another_origins_frame(driver, site, kind):
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    line = next(line for line in refs["text"].split("\n") if 'iframe "Payment"' in line)
    assert line.endswith(f"[origin={pay}]") and ("[out-of-process]" in line) == (kind == "cross-site")
    assert "origin=" not in next(line for line in refs["text"].split("\n") if "Top button" in line)
    # L1 never enters it: the page executor reads and acts in the tab's own origin only.
    shallow = (await driver.read())["text"]
    assert "[cross-origin, not visible]" in shallow and "Payment reference" not in shallow


async def lock_to_the_shop(driver: L2Driver, site: FramesSite, tab: int | None = None) -> None:
    """A new engine thread, locked to the shop (and driving `tab`, when given)."""
    thread = await engine_thread(driver)
    await driver.control.call("engine.op", op={"type": "scope.setLock", "submissionId": f"l-{thread}", "threadId": thread,
                                               "patterns": [site.shop]})
    if tab is not None:
        await driver.control.call("browser.bind_target", thread_id=thread, tab_id=tab)


async def test_under_a_scope_lock_another_origins_frame_is_never_loaded(driver, site, kind):
    pay = site.payment_base(kind)
    await lock_to_the_shop(driver, site)
    await driver.open_l2("checkout.html", pay=pay.split("://", 1)[1])  # the shop's page itself loads
    opened = driver.last_result
    assert opened["ok"] and "navigation_blocked" in opened["text"], opened
    assert f'to "{pay}/l2/payment.html?tag={driver.visit}": blocked' in opened["text"]
    assert [b["origin"] for b in opened["details"]["blocked"]] == [pay]
    assert not [line for line in site.browser.other.requests if f"tag={driver.visit}" in line]
    deep = (await driver.deep())["text"]
    assert "Payment reference" not in deep and 'button "Top button"' in deep


async def test_a_scope_lock_keeps_trusted_input_out_of_another_origins_frame(driver, site, kind):
    # The frame was there before the lock (a lock set during a task): the guard does not unload
    # it, so every input that would land in it is judged at its origin and denied.
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    await lock_to_the_shop(driver, site, refs["tab"])
    denied(await driver.call("type_trusted", element="Payment reference", ref=refs["card"], text="4111 1111 1111 1111"),
           "scope_lock", pay)
    denied(await driver.call("click_trusted", element="Pay", ref=refs["pay"]), "scope_lock", pay)
    denied(await driver.call("click_xy", x=PAY_BUTTON[0], y=PAY_BUTTON[1]), "scope_lock", pay)
    start, end = PAY_TRACK
    denied(await driver.call("drag", **{"from": {"x": start[0], "y": start[1]}, "to": {"x": end[0], "y": end[1]}}),
           "scope_lock", pay)
    assert await what_reached_payment(driver) == {"seen": NOTHING, "card": "", "paid": ""}
    decisions = await audit_rows(driver, "decision")
    assert [(r["tool"], r["target_origin"], r["verdict"]) for r in decisions] == [
        (tool, pay, "deny") for tool in ("type_trusted", "click_trusted", "click_xy", "drag")]
    # The lock's own origin is still open to the same tools.
    clicked = await driver.ok("click_xy", x=TOP_BUTTON[0], y=TOP_BUTTON[1])
    assert clicked["details"]["frameOrigin"] == site.shop and "landed in a frame" not in clicked["text"]
    assert await driver.on_page("document.getElementById('top-out').textContent") == "top clicked true"
    await driver.ok("click_trusted", element="Top button", ref=refs["top"])


async def test_a_blocked_origin_gets_no_trusted_input_in_its_frame(driver, site, kind):
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    await driver.control.call("gatekeeper.add_origin", pattern=pay, list="blocked")
    try:
        denied(await driver.call("type_trusted", element="Payment reference", ref=refs["card"], text="4111"), "sensitive_origin",
               pay)
        denied(await driver.call("click_trusted", element="Pay", ref=refs["pay"]), "sensitive_origin", pay)
        denied(await driver.call("click_xy", x=PAY_BUTTON[0], y=PAY_BUTTON[1]), "sensitive_origin", pay)
        await focus_the_payment_frame(driver)
        denied(await driver.call("press_key", key="x"), "sensitive_origin", pay)
        assert await what_reached_payment(driver) == {"seen": NOTHING, "card": "", "paid": ""}
        assert [r["target_origin"] for r in await audit_rows(driver, "decision")] == [pay] * 4
        # An L1 ref of the shop's own page resolves to the shop's frame, which is not blocked.
        page = (await driver.read())["text"]
        clicked = await driver.ok("click_trusted", element="Top button", ref=ref_of(page, 'button "Top button"'))
        assert clicked["details"]["frameOrigin"] == site.shop
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=pay, list="blocked")


async def test_a_point_on_a_scrolled_page_is_judged_where_the_input_lands(driver, site, kind):
    # The browser's hit test takes document coordinates. Scrolled by 100 px, the payment frame's
    # button is at the same place in the viewport as before; tested at the viewport point taken
    # as a document point, the click was judged on the shop's heading above it and allowed.
    pay = site.payment_base(kind)
    await checkout(driver, pay)
    assert await driver.on_page("document.body.style.position = 'relative'; document.body.style.top = '100px'; "
                                "document.body.style.paddingBottom = '2000px'; window.scrollTo(0, 100); scrollY") == 100
    await driver.control.call("gatekeeper.add_origin", pattern=pay, list="blocked")
    try:
        denied(await driver.call("click_xy", x=PAY_BUTTON[0], y=PAY_BUTTON[1]), "sensitive_origin", pay)
        assert await what_reached_payment(driver) == {"seen": NOTHING, "card": "", "paid": ""}
        clicked = await driver.ok("click_xy", x=TOP_BUTTON[0], y=TOP_BUTTON[1])
        assert clicked["details"]["frameOrigin"] == site.shop
        assert await driver.on_page("document.getElementById('top-out').textContent") == "top clicked true"
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=pay, list="blocked")


async def test_repeated_keys_stop_where_the_focus_leaves_the_frame_judged(driver, site, kind):
    # Tab pressed three times from the shop's own button: the first press moves the focus into
    # the blocked payment frame, and the look before the next finds it there; nothing more is sent.
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    await driver.control.call("gatekeeper.add_origin", pattern=pay, list="blocked")
    try:
        pressed = await driver.ok("press_key", key="Tab", ref=refs["top"], repeat=3)
        assert "Pressed Tab 1 of 3 times on" in pressed["text"] and "so the rest were not sent" in pressed["text"], \
            pressed["text"]
        assert pressed["details"]["pressed"] == 1
        assert await what_reached_payment(driver) == {"seen": NOTHING, "card": "", "paid": ""}
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=pay, list="blocked")


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_keys_for_a_frame_inside_a_shadow_root_are_judged_at_the_frames_origin(driver, site, kind, mode):
    # The shop moves its payment frame into a shadow root and hands it the focus: the document's
    # activeElement is then the shadow host, not the frame, yet keys go into the frame. A closed
    # root hides it from every script but the debugger.
    pay = site.payment_base(kind)
    await checkout(driver, pay)
    await driver.on_page("(() => { const host = document.createElement('div'); host.id = 'host'; "
                         f"document.body.prepend(host); window.shadowOfHost = host.attachShadow({{mode: '{mode}'}}); "
                         "window.shadowOfHost.append(document.getElementById('pay')); return true; })()")
    await until(lambda: in_payment(driver, "!!document.getElementById('card')", settling=True), 15,
                "the moved frame to load again")

    async def focused() -> bool:
        await driver.on_page("(() => { const frame = window.shadowOfHost.getElementById('pay'); "
                             "frame.focus(); frame.contentWindow.focus(); return true; })()")
        await in_payment(driver, "document.getElementById('card').focus(), true")
        return await in_payment(driver, "!!document.activeElement && document.activeElement.id === 'card'")

    await until(focused, 10, "the card field of the moved frame to hold the focus")
    assert await driver.on_page("document.activeElement.id") == "host"
    await driver.control.call("gatekeeper.add_origin", pattern=pay, list="blocked")
    try:
        denied(await driver.call("press_key", key="x"), "sensitive_origin", pay)
        assert (await what_reached_payment(driver))["card"] == ""
    finally:
        await driver.control.call("gatekeeper.remove_origin", pattern=pay, list="blocked")
    pressed = await driver.ok("press_key", key="7")
    assert pressed["details"]["frameOrigin"] == pay and (await what_reached_payment(driver))["card"] == "7"


async def test_with_the_frames_origin_allowed_trusted_input_works_and_is_audited_there(driver, site, kind):
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    typed = await driver.ok("type_trusted", element="Payment reference", ref=refs["card"], text="4242")
    assert typed["details"]["evidence"]["outcome"] == "verified" and typed["details"]["frameOrigin"] == pay
    assert typed["text"].endswith(f"It landed in a frame of {pay}.")
    await driver.ok("click_trusted", element="Pay", ref=refs["pay"])
    assert (await what_reached_payment(driver))["paid"] == "paid with 4242"
    await driver.ok("click_xy", x=PAY_BUTTON[0], y=PAY_BUTTON[1])
    start, end = PAY_TRACK
    await driver.ok("drag", **{"from": {"x": start[0], "y": start[1]}, "to": {"x": end[0], "y": end[1]}})
    await focus_the_payment_frame(driver)
    pressed = await driver.ok("press_key", key="5")
    assert pressed["details"]["frameOrigin"] == pay
    state = await what_reached_payment(driver)
    assert state["card"] == "42425" and state["seen"]["submit"] == 2 and state["seen"]["mousedown"] == 4
    outcomes = await audit_rows(driver, "outcome")
    assert [(r["tool"], r["target_origin"], r["tool_outcome"]) for r in outcomes] == [
        (tool, pay, "ok") for tool in ("type_trusted", "click_trusted", "click_xy", "drag", "press_key")]


async def test_a_frame_at_an_origin_without_site_access_asks_for_it(driver, site):
    far = f"http://127.0.0.2:{site.far.port}"
    refs = await checkout(driver, far)
    for tool, params in (("click_trusted", {"element": "Pay", "ref": refs["pay"]}),
                         ("click_xy", {"x": PAY_BUTTON[0], "y": PAY_BUTTON[1]})):
        asked = await driver.call(tool, **params)
        assert not asked["ok"] and asked["error"]["code"] == "approval_required", asked
        assert "host_permission" in asked["error"]["details"]["flags"] and far in asked["error"]["message"]
    assert await what_reached_payment(driver) == {"seen": NOTHING, "card": "", "paid": ""}


async def test_a_frame_that_moves_to_another_origin_after_the_approval_is_target_changed(driver, site, kind):
    pay = site.payment_base(kind)
    refs = await checkout(driver, pay)
    tab = refs["tab"]
    thread = await engine_thread(driver, permissionPolicy="untrusted")
    site.model.replies.clear()
    site.model.add(Reply(text="Paying.", tool_calls=[("click_trusted", {"element": "Pay", "ref": refs["pay"],
                                                                        "tabId": tab})]),
                   Reply(text="The frame moved; I stop here."))
    await driver.control.call("host.subscribe", topics=["engine"])
    await driver.control.call("engine.op", op={"type": "turn.submit", "submissionId": f"s-{thread}", "threadId": thread,
                                               "input": {"text": "pay", "browserContext": {"defaultTab": {
                                                   "tabId": tab, "url": driver.last_url}}}})
    seen: list[dict[str, Any]] = []

    async def next_of(event_type: str) -> dict[str, Any]:
        while True:
            for event in seen:
                if event.get("type") == event_type:
                    seen.remove(event)
                    return event
            event = await asyncio.wait_for(driver.control.events.get(), 60)
            if event.topic == "engine" and event.data.get("threadId") == thread:
                seen.append(event.data)

    request = await next_of("approval.request")
    assert request["request"]["tool"] == "click_trusted" and request["request"]["targetOrigin"] == pay
    assert f"in a frame of {pay}, embedded in {site.shop}" in request["request"]["targetLine"]
    # Before the user answers, the frame goes to the shop's own origin.
    moved = f"{site.shop}/l2/payment.html?tag={driver.visit}&moved=1"
    await in_payment(driver, f"location.href = {json.dumps(moved)}, true")

    async def arrived() -> bool:
        try:
            return await in_payment(driver, "location.search.includes('moved=1') && document.readyState === 'complete'")
        except Exception:  # the frame's old target went away while it was looked at
            return False

    await until(arrived, 10, "the payment frame at its new origin")
    await driver.control.call("engine.answer", approval_id=request["approvalId"], kind="accept")
    while True:
        done = await next_of("item.complete")
        if "tool-call:" in done.get("itemId", ""):
            break
    assert done["result"]["ok"] is False and done["result"]["code"] == "target_changed", done
    assert (await what_reached_payment(driver))["seen"] == NOTHING
    outcomes = await audit_rows(driver, "outcome")
    assert [(r["tool"], r["tool_outcome"]) for r in outcomes] == [("click_trusted", "refused:target_changed")]
    await next_of("turn.complete")
