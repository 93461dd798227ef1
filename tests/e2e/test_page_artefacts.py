"""Nothing of ours that a page can see or set, in a real browser: pages that look for the agent
(our elements by name, our state on `window`, a patched `alert` by its text, the write's events),
that pre-seed the dialog guard's state to switch it off, that forge dialog and pop-up reports and
the write's events, and that stop a person's input (on the page, or on the indicator's Stop)
before our listeners hear it. Every page here is hostile on purpose; each does its looking from
its own main-world scripts, as a real page would."""

from __future__ import annotations

import asyncio
import json
import threading
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import urlencode

import pytest
import websockets

from tests.support.browser import BrowserRun
from tests.support.browser_tools import Driver, hooks_enabled, module_fixtures, new_driver, ref_of
from tests.support.cdp import PageSession, debugging_port, evaluate_in_worker, our_elements, page_targets
from tests.support.engine_control import EngineOverControl, open_tab, tab_of
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.hosts import tabwarden_home, write_settings
from tests.support.scripted_site import Site, html
from tests.support.waiting import until

pytestmark = pytest.mark.browser

# Looks for anything of ours by name, from the page's first script on: every element and attribute
# (now, and as a MutationObserver sees them come and change), window's own property names and
# symbols. `spy.found` lists what it saw, with where.
SPY = """<script>
(() => {
  const found = [];
  const ours = (text) => /tabwarden/i.test(String(text));
  const inspect = (node, where) => {
    if (!node || node.nodeType !== 1) return;
    if (ours(node.localName)) found.push(`${where}: <${node.localName}>`);
    for (const attr of node.attributes) {
      if (ours(attr.name) || ours(attr.value)) found.push(`${where}: ${node.localName}[${attr.name}="${attr.value}"]`);
    }
  };
  const added = [];
  new MutationObserver((records) => {
    for (const record of records) {
      inspect(record.target, "observed");
      for (const node of record.addedNodes) {
        if (node.nodeType === 1) added.push(node.localName);
        inspect(node, "observed");
        if (node.querySelectorAll) for (const inner of node.querySelectorAll("*")) inspect(inner, "observed");
      }
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const scan = (where) => {
    for (const node of document.querySelectorAll("*")) inspect(node, where);
    for (const symbol of Object.getOwnPropertySymbols(window)) {
      if (ours(symbol.description)) found.push(`${where}: window[${String(symbol)}]`);
    }
    for (const name of Object.getOwnPropertyNames(window)) if (ours(name)) found.push(`${where}: window.${name}`);
    if (Symbol.for("tabwarden.dialogPatch") in window) found.push(`${where}: Symbol.for("tabwarden.dialogPatch") in window`);
    if (Symbol.for("tabwarden.takeoverWatch") in window) found.push(`${where}: Symbol.for("tabwarden.takeoverWatch") in window`);
    // The text a page can get at: rendered, whole, as a selection, by the browser's own search.
    if (ours(document.documentElement.innerText)) found.push(`${where}: the page's innerText`);
    const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      if (text.parentNode.localName !== "script" && ours(text.data)) found.push(`${where}: text "${text.data}"`);
    }
    const selection = getSelection();
    selection.selectAllChildren(document.documentElement);
    if (ours(selection.toString())) found.push(`${where}: a selection of the whole page`);
    selection.removeAllRanges();
    if (window.find("Tabwarden", false, false, true)) found.push(`${where}: window.find`);
    selection.removeAllRanges();
  };
  window.spy = { found, scan, added };
})();
</script>"""

# The page's own dialog functions, kept before anything of ours runs.
KEEP = """<script>
window.own = { alert: window.alert, confirm: window.confirm, prompt: window.prompt, open: window.open,
               toString: Function.prototype.toString };
</script>"""

# How the dialog functions look while the agent's write runs (its click handler calls this).
LOOK = """<script>
window.look = () => {
  window.looks = {};
  for (const name of ["alert", "confirm", "prompt", "open"]) {
    const fn = window[name];
    window.looks[name] = { text: String(fn), call: Function.prototype.toString.call(fn), name: fn.name,
                           length: fn.length, prototype: "prototype" in fn };
  }
  window.looks.toString = Function.prototype.toString.call(Function.prototype.toString);
};
</script>"""

# Hears every event type that passes through the page's own functions, from its first script on:
# made (CustomEvent), sent (dispatchEvent) or listened for (addEventListener), and listens for the
# names our write events once had. `ears.types` lists each type once; `ears.foreign()` those that
# are no DOM event's (a DOM event's name is letters only).
EARS = """<script>
(() => {
  const types = [];
  const note = (type) => { if (!types.includes(String(type))) types.push(String(type)); };
  const dispatch = EventTarget.prototype.dispatchEvent;
  EventTarget.prototype.dispatchEvent = function dispatchEvent(event) {
    note(event && event.type);
    return dispatch.call(this, event);
  };
  const listen = EventTarget.prototype.addEventListener;
  EventTarget.prototype.addEventListener = function addEventListener(type, ...rest) {
    note(type);
    return listen.call(this, type, ...rest);
  };
  const Custom = window.CustomEvent;
  window.CustomEvent = class CustomEvent extends Custom {
    constructor(type, init) {
      note(type);
      super(type, init);
    }
  };
  for (const type of ["tabwarden:pending", "tabwarden:frame", "tabwarden:probe", "tabwarden:patched"]) {
    listen.call(window, type, () => note(`heard ${type}`));
  }
  window.ears = { types, foreign: () => types.filter((type) => /[^A-Za-z]/.test(type)) };
})();
</script>"""

PAGES = {
    # (a), (b), (c): the page looks while the agent writes, with the indicator up.
    "/spy.html": f"""<!doctype html><html><head><meta charset="utf-8"><title>Spy</title>{SPY}{KEEP}{LOOK}</head><body>
<h1>Spy</h1>
<button id="save" onclick="spy.scan('during the write'); look();
  document.getElementById('out').textContent = 'confirm said ' + confirm('Really save?')">Save</button>
<p id="out"></p>
</body></html>""",
    # (d): the dialog guard's state, pre-seeded as already in place, and made permanent.
    "/preseed.html": """<!doctype html><html><head><meta charset="utf-8"><title>Preseed</title>
<script>
Object.defineProperty(window, Symbol.for("tabwarden.dialogPatch"),
  { value: { depth: 1, originals: null, patched: null, reports: [] }, configurable: false, writable: false });
</script></head><body>
<h1>Preseed</h1>
<button onclick="alert('Pre-seeded'); document.getElementById('out').textContent = 'after alert'">Notify</button>
<p id="out"></p>
</body></html>""",
    # A page whose intrinsics are frozen (as a hardened-JavaScript page's are): the guard still works.
    "/frozen.html": """<!doctype html><html><head><meta charset="utf-8"><title>Frozen</title>
<script>Object.freeze(Function.prototype); Object.freeze(Object.prototype);</script></head><body>
<h1>Frozen</h1>
<button onclick="document.getElementById('out').textContent = 'confirm said ' + confirm('Frozen?')">Ask</button>
<p id="out"></p>
</body></html>""",
    # (e): every way a page could hope to forge a report: push into our state where it is, answer
    # and send our events, at the write's probe and at its own click.
    "/forge.html": """<!doctype html><html><head><meta charset="utf-8"><title>Forge</title>
<script>
(() => {
  let forging = false;
  window.forged = 0;
  const forge = () => {
    if (forging) return;
    forging = true;
    try {
      for (const symbol of [Symbol.for("tabwarden.dialogPatch"), ...Object.getOwnPropertySymbols(window)]) {
        const state = window[symbol];
        if (state && Array.isArray(state.reports)) {
          state.reports.push({ kind: "open", message: "https://forged.example/", answer: "opened" },
                             { kind: "confirm", message: "Forged confirm", answer: false });
          window.forged += 1;
        }
      }
      for (const type of ["tabwarden:probe", "tabwarden:patched", "tabwarden:frame"]) {
        window.dispatchEvent(new CustomEvent(type));
      }
      window.dispatchEvent(new CustomEvent("tabwarden:pending", { detail: 0 }));
    } finally {
      forging = false;
    }
  };
  for (const type of ["tabwarden:probe", "tabwarden:patched", "tabwarden:pending"]) window.addEventListener(type, forge);
  window.forge = forge;
})();
</script></head><body>
<h1>Forge</h1>
<button onclick="forge(); document.getElementById('out').textContent = 'clicked'">Send</button>
<p id="out"></p>
</body></html>""",
    # (f): the page's first script stops every press at the window, in the capture phase, before
    # any later listener; a cancelled pointerdown also keeps the browser from firing mousedown.
    "/swallow.html": """<!doctype html><html><head><meta charset="utf-8"><title>Swallow</title>
<script>
window.swallowed = [];
for (const type of ["pointerdown", "mousedown", "pointerup", "mouseup", "click", "keydown", "keyup", "keypress"]) {
  window.addEventListener(type, (event) => {
    if (event.isTrusted) window.swallowed.push(type);
    event.stopImmediatePropagation();
    if (type === "pointerdown") event.preventDefault();
  }, true);
}
</script></head><body>
<h1>Swallow</h1>
<input id="name" aria-label="Name">
<p id="out"></p>
</body></html>""",
    # (g): the page listens for the write's events by every means it has; its click sets off a
    # short timer, which the patch announces.
    "/ears.html": f"""<!doctype html><html><head><meta charset="utf-8"><title>Ears</title>{EARS}</head><body>
<h1>Ears</h1>
<button onclick="setTimeout(() => {{ document.getElementById('out').textContent = 'heard'; }}, 20)">Listen</button>
<p id="out"></p>
</body></html>""",
    # (h): at its click the page sets off a timer that changes it a quarter second later, then
    # sends, with a count of nothing in flight, every event name it knows (the old fixed ones, the
    # ones it heard in earlier writes and this one's so far) and names it made up.
    "/forge-names.html": f"""<!doctype html><html><head><meta charset="utf-8"><title>Forge names</title>{EARS}
<script>
window.sends = 0;
window.send = () => {{
  const made = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
  const names = [...ears.foreign(), "tabwarden:pending", "tabwarden:frame", "tabwarden:probe", "tabwarden:patched",
                 made(), made()];
  const count = ++window.sends;
  setTimeout(() => {{ document.getElementById('out').textContent = 'Saved ' + count; }}, 250);
  for (const name of names) window.dispatchEvent(new CustomEvent(name, {{ detail: 0 }}));
}};
</script></head><body>
<h1>Forge names</h1>
<button onclick="send()">Save</button>
<p id="out">Not saved</p>
</body></html>""",
    # Styles every element it can away, under a policy that lets only its own styles in.
    "/styled.html": """<!doctype html><html><head><meta charset="utf-8"><title>Styled</title>
<style nonce="page">
html > *:not(head):not(body), div { display: none !important; position: static !important; z-index: 0 !important;
  pointer-events: auto !important; opacity: 0 !important; }
</style></head><body>
<h1>Styled</h1>
<button onclick="document.getElementById('out').textContent = 'saved'">Save</button>
<p id="out"></p>
</body></html>""",
}
HEADERS = {"/styled.html": {"Content-Security-Policy": "style-src 'nonce-page'"}}


class Pages:
    """The hostile pages on one loopback site, and the browser run, as the Driver wants them; the
    fake model the host's engine talks to, for the tests that need an agent turn."""

    def __init__(self, run: BrowserRun, site: Site, model: FakeOpenAI):
        self.run = run
        self.site = site
        self.model = model

    def url(self, page: str, **query: str) -> str:
        return self.site.url("127.0.0.1", f"/{page}") + (f"?{urlencode(query)}" if query else "")


@contextmanager
def pages_site(run_dir) -> Iterator[Pages]:
    routes = {path: html(body, **HEADERS.get(path, {})) for path, body in PAGES.items()}
    with Site("127.0.0.1", routes) as site, FakeOpenAI() as model, hooks_enabled():
        run = BrowserRun(run_dir, host_permissions=["http://127.0.0.1/*"], start_url="about:blank")
        run.prepare()
        write_settings(run.tw_home, model.url)
        run.start()
        with tabwarden_home(run.tw_home):
            try:
                yield Pages(run, site, model)
            except BaseException:
                print(run.diagnostics())
                raise
            finally:
                run.stop()


site, driver = module_fixtures(pages_site, new_driver, "page-artefacts")


async def fresh(driver, page: str) -> tuple[int, str, str]:
    """Open `page` in a new tab bound to the test's thread: its tab id, the part of its URL no
    other tab has, and its first snapshot."""
    tab = await driver.open(page)
    where = f"{page}?visit={Driver._visits}"
    await until(lambda: driver.evaluate(where, "document.readyState === 'complete'"), 10, f"{page} to load", interval=0.05)
    return tab, where, (await driver.read())["text"]


async def to_page(driver, tab: int, message: Any) -> Any:
    """What the page executor answers `message` sent by the worker."""
    port = debugging_port(driver.site.run.profile)
    return await evaluate_in_worker(port, f"chrome.tabs.sendMessage({tab}, {json.dumps(message)}, {{ frameId: 0 }})")


class RealDialogs:
    """A DevTools session on one page that sees every real dialog the page opens (one the guard
    let through) and closes it, so a page the guard failed on does not hang the test."""

    def __init__(self, ws):
        self.ws = ws
        self.seen: list[dict] = []
        self._ids = iter(range(1, 1 << 30))
        self._task: asyncio.Task | None = None

    @classmethod
    async def watch(cls, driver, url_part: str) -> "RealDialogs":
        port = debugging_port(driver.site.run.profile)
        target = next(t for t in page_targets(port) if url_part in t.get("url", ""))
        self = cls(await websockets.connect(target["webSocketDebuggerUrl"], max_size=2**24))
        await self.ws.send(json.dumps({"id": next(self._ids), "method": "Page.enable"}))
        self._task = asyncio.ensure_future(self._listen())
        return self

    async def _listen(self) -> None:
        async for raw in self.ws:
            event = json.loads(raw)
            if event.get("method") == "Page.javascriptDialogOpening":
                self.seen.append(event["params"])
                await self.ws.send(json.dumps({"id": next(self._ids), "method": "Page.handleJavaScriptDialog",
                                               "params": {"accept": False}}))

    async def close(self) -> None:
        if self._task:
            self._task.cancel()
        await self.ws.close()


async def paused_info(driver) -> dict:
    async def pause() -> dict | None:
        paused = await driver.control.call("browser.paused")
        return next((p for p in paused if p["threadId"] == driver.thread_id), None)

    return await until(pause, 5, f"{driver.thread_id} to be paused", interval=0.05)


# ---------------------------------------------------------------- seeing us


async def test_a_page_finds_nothing_of_ours_by_name_while_the_agent_writes_with_the_indicator_up(driver):
    bound, where, page = await fresh(driver, "spy.html")
    assert (await to_page(driver, bound, {"type": "indicator.show"}))["ok"] is True
    clicked = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    assert 'confirm("Really save?")' in clicked["text"]  # the guard was in place while the page looked
    await driver.evaluate(where, "spy.scan('after the write, indicator up')")
    await to_page(driver, bound, {"type": "indicator.hide"})
    await driver.evaluate(where, "spy.scan('after the indicator went')")
    assert await driver.evaluate(where, "spy.found") == []
    # The overlay and the indicator were really there: the page saw elements come, just not ours by name.
    assert await driver.evaluate(where, "spy.added.length") >= 2


async def test_window_holds_no_symbol_of_ours_during_or_after_a_write(driver):
    _, where, page = await fresh(driver, "spy.html")
    await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    await driver.evaluate(where, "spy.scan('after the write')")
    found = await driver.evaluate(where, "spy.found")
    assert not [f for f in found if "window" in f], found
    assert await driver.evaluate(where, "Object.getOwnPropertySymbols(window).map(String)") == []


async def test_the_patched_dialogs_look_native_during_a_write_and_are_the_pages_own_after(driver):
    _, where, page = await fresh(driver, "spy.html")
    clicked = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    assert clicked["details"]["dialogs"] == [{"kind": "confirm", "message": "Really save?", "answer": False}]
    assert await driver.evaluate(where, "document.getElementById('out').textContent") == "confirm said false"
    looks = await driver.evaluate(where, "window.looks")
    for name in ("alert", "confirm", "prompt", "open"):
        native = f"function {name}() {{ [native code] }}"
        assert looks[name] == {"text": native, "call": native, "name": name, "length": 0, "prototype": False}, looks
    assert looks["toString"] == "function toString() { [native code] }"
    # Restored exactly: the very functions the page had before.
    assert await driver.evaluate(where, "['alert', 'confirm', 'prompt', 'open'].every((n) => window[n] === own[n])"
                                 " && Function.prototype.toString === own.toString")


async def test_a_page_hears_no_event_of_ours_by_name_and_no_two_writes_alike(driver):
    _, where, page = await fresh(driver, "ears.html")
    heard = []
    for _ in range(2):
        before = set(await driver.evaluate(where, "ears.foreign()"))
        await driver.ok("click", element="Listen", ref=ref_of(page, 'button "Listen"'))
        heard.append(set(await driver.evaluate(where, "ears.foreign()")) - before)
    types = await driver.evaluate(where, "ears.types")
    assert not [t for t in types if "tabwarden" in t.lower()], types
    # What a page that hooks its own functions still sees: the write's events, under names that
    # say nothing and are new for every write.
    assert heard[0] and heard[1] and not heard[0] & heard[1], heard


async def test_events_a_page_sends_under_our_old_names_or_any_it_knows_do_not_cut_the_settle_short(driver):
    _, where, page = await fresh(driver, "forge-names.html")
    for count in (1, 2):  # the second write also tries the names the page heard during the first
        result = await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
        # The settle waited for the timer the click set off: the write reports what it did.
        assert f"Saved {count}" in result["text"], result["text"]
        assert result["details"].get("pageStabilized") is not False, result["details"]
    assert await driver.evaluate(where, "window.sends") == 2


# ---------------------------------------------------------------- setting our state


async def test_a_pre_seeded_dialog_state_does_not_switch_the_guard_off(driver):
    _, where, page = await fresh(driver, "preseed.html")
    dialogs = await RealDialogs.watch(driver, where)
    try:
        result = await driver.ok("click", element="Notify", ref=ref_of(page, 'button "Notify"'))
    finally:
        await dialogs.close()
    assert dialogs.seen == [], "a real dialog reached the person"
    assert result["details"]["dialogs"] == [{"kind": "alert", "message": "Pre-seeded", "answer": "closed"}]
    assert await driver.evaluate(where, "document.getElementById('out').textContent") == "after alert"


async def test_frozen_intrinsics_do_not_switch_the_guard_off(driver):
    _, where, page = await fresh(driver, "frozen.html")
    dialogs = await RealDialogs.watch(driver, where)
    try:
        result = await driver.ok("click", element="Ask", ref=ref_of(page, 'button "Ask"'))
    finally:
        await dialogs.close()
    assert dialogs.seen == []
    assert result["details"]["dialogs"] == [{"kind": "confirm", "message": "Frozen?", "answer": False}]
    assert await driver.evaluate(where, "document.getElementById('out').textContent") == "confirm said false"


async def test_a_page_cannot_forge_a_dialog_or_pop_up_report(driver):
    _, where, page = await fresh(driver, "forge.html")
    result = await driver.ok("click", element="Send", ref=ref_of(page, 'button "Send"'))
    assert await driver.evaluate(where, "document.getElementById('out').textContent") == "clicked"
    assert not result["details"].get("dialogs"), result["details"]  # none reported: the page opened none
    assert "forged" not in result["text"].lower()
    assert await driver.evaluate(where, "window.forged") == 0  # nothing of ours to push into


# ---------------------------------------------------------------- hiding a person from us


async def test_a_person_is_heard_through_a_page_that_stops_every_press_first(driver):
    tab, where, page = await fresh(driver, "swallow.html")
    await driver.ok("type", element="Name", ref=ref_of(page, 'textbox "Name"'), text="Ada")
    session = await driver.page(where)
    try:
        await session.trusted_click(5, 5)
        info = await paused_info(driver)
        assert info["tabId"] == tab and info["kind"] == "mousedown", info
        assert "pointerdown" in await session.evaluate("window.swallowed")  # the page did stop it
        assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True
        await asyncio.sleep(1.2)  # the watcher tells of one press a second
        for kind in ("keyDown", "keyUp"):
            await session.send("Input.dispatchKeyEvent", {"type": kind, "key": "q", "code": "KeyQ", "text": "q",
                                                          "windowsVirtualKeyCode": 81})
        info = await paused_info(driver)
        assert info["tabId"] == tab and info["kind"] == "keydown", info
    finally:
        await session.close()
    assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True


async def test_a_page_open_before_the_watcher_was_registered_is_still_heard(driver):
    # As for a tab that was open before the extension started: the watcher comes with the
    # executor, after the page's own listeners, which stop every press before it.
    port = debugging_port(driver.site.run.profile)
    saved = await evaluate_in_worker(port, "chrome.scripting.getRegisteredContentScripts()"
                                           ".then((scripts) => chrome.scripting.unregisterContentScripts().then(() => scripts))")
    assert saved, "the takeover watcher is registered to run before every page"
    try:
        tab, where, page = await fresh(driver, "swallow.html")
    finally:
        await evaluate_in_worker(port, f"chrome.scripting.registerContentScripts({json.dumps(saved)}).then(() => true)")
    await driver.ok("tab_focus", tabId=tab)  # a person works in a shown tab
    await driver.ok("type", element="Name", ref=ref_of(page, 'textbox "Name"'), text="Ada")
    session = await driver.page(where)
    try:
        await session.trusted_click(5, 5)
        info = await paused_info(driver)
        assert info["tabId"] == tab and info["kind"] == "mousedown", info
        assert "pointerdown" in await session.evaluate("window.swallowed")
    finally:
        await session.close()
    assert (await driver.control.call("browser.resume", thread_id=driver.thread_id))["resumed"] is True


async def test_the_indicators_stop_works_through_a_page_that_stops_every_press_first(driver):
    # The page's first script stops every press at the window in the capture phase, as in (f):
    # our listener there comes before it and takes the press on Stop.
    port = debugging_port(driver.site.run.profile)
    model = driver.site.model
    url = driver.site.url("swallow.html", indicator="1")
    open_tab(port, url)
    engine = await EngineOverControl.attach()
    hold = threading.Event()
    page = await PageSession.open(port, "indicator=1")
    try:
        await until(lambda: page.evaluate("document.readyState === 'complete'"), 10, "the page to load", interval=0.05)
        model.replies.clear()
        model.add(Reply(tool_calls=[("read_page", {})]), Reply(text="Thinking", hold=hold))
        thread = await engine.start("look at the page", await tab_of(engine, "indicator=1"))

        async def indicator() -> list[dict]:
            return [box for box in await our_elements(port, "indicator=1") if box["bottom"] == "12px"]

        [box] = await until(indicator, 30, "the page indicator", interval=0.1)
        await page.trusted_click(box["x"] + box["w"] - 30, box["y"] + box["h"] / 2)  # Stop: the last 52 px
        done = await engine.wait("turn.complete", thread, timeout=15)
        assert done["stopReason"] == "interrupted"
        notices = [n["body"]["text"] for n in (await engine.control.call("engine.snapshot", thread_id=thread))["nodes"]
                   if n["kind"] == "system_notice"]
        assert notices == ["Stopped from the page indicator."]
        assert await page.evaluate("window.swallowed") == []  # the page never saw the press
    finally:
        hold.set()
        await page.close()
        await engine.control.close()


async def test_the_watcher_is_quiet_in_a_page_nobody_drives(driver):
    port = debugging_port(driver.site.run.profile)
    await evaluate_in_worker(port, """(() => {
        globalThis.heardTakeovers = [];
        chrome.runtime.onMessage.addListener((message, sender) => {
            if (message && message.type === "takeover.manualInput") globalThis.heardTakeovers.push(sender.url);
            return false;
        });
        return true;
    })()""")
    opened = await driver.ok("tab_open", url=driver.site.url("swallow.html", quiet="1"))
    await until(lambda: driver.evaluate("quiet=1", "document.readyState === 'complete'"), 10, "the page to load",
                interval=0.05)
    session = await driver.page("quiet=1")
    try:
        await session.trusted_click(5, 5)
        await asyncio.sleep(0.5)
        assert await evaluate_in_worker(port, "globalThis.heardTakeovers") == []
        # Driven (read by a thread), the same page is heard.
        await driver.control.call("browser.bind_target", thread_id=driver.thread_id, tab_id=opened["tabId"])
        await driver.read()
        await session.trusted_click(5, 5)
        heard = await until(lambda: evaluate_in_worker(port, "globalThis.heardTakeovers"), 5, "a takeover report",
                            interval=0.05)
        assert "quiet=1" in heard[0]
    finally:
        await session.close()
    await driver.control.call("browser.resume", thread_id=driver.thread_id)


async def test_the_indicator_holds_its_place_against_the_pages_styles_and_policy(driver):
    tab, where, page = await fresh(driver, "styled.html")
    port = debugging_port(driver.site.run.profile)
    assert (await to_page(driver, tab, {"type": "indicator.show"}))["ok"] is True
    [box] = await our_elements(port, where)
    width, height = await driver.evaluate(where, "[innerWidth, innerHeight]")
    assert box["position"] == "fixed" and box["display"] == "block" and box["pointerEvents"] == "none", box
    assert box["w"] > 100 and box["h"] > 15, box
    assert abs(box["x"] + box["w"] - (width - 12)) < 1 and abs(box["y"] + box["h"] - (height - 12)) < 1, (box, width, height)
    # Not part of what the agent reads, and the page's own button still works under the write.
    assert (await driver.read())["text"].split("\n")[1:] == page.split("\n")[1:]
    await driver.ok("click", element="Save", ref=ref_of(page, 'button "Save"'))
    assert await driver.evaluate(where, "document.getElementById('out').textContent") == "saved"
    await to_page(driver, tab, {"type": "indicator.hide"})
    # The action highlight goes too, after its moment.
    async def none_left() -> bool:
        return await our_elements(port, where) == []

    await until(none_left, 5, "nothing of ours left on the page", interval=0.1)
