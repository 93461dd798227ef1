"""The messages between the service worker and the page executor in a real browser: each end acts
only on the declared messages (protocol/content.py) and refuses an undeclared type or a bad
field with a clear error, never acting on it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets

from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of
from tests.support.cdp import debugging_port, evaluate_in_content_world, evaluate_in_worker, page_targets

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "l1-messages")


async def with_executor(driver) -> int:
    tab = await driver.open("form.html")
    await driver.read()  # injects the executor
    return tab


async def to_page(driver, tab: int, message: Any) -> Any:
    """What the page answers `message` sent by the worker (as the content relay sends)."""
    port = debugging_port(driver.site.run.profile)
    return await evaluate_in_worker(port, f"chrome.tabs.sendMessage({tab}, {json.dumps(message)}, {{ frameId: 0 }})")


async def in_content_world(driver, url_part: str, expression: str) -> Any:
    """The JSON value of `expression` in our extension's isolated world of the page's top frame,
    where the executor runs."""
    return await evaluate_in_content_world(debugging_port(driver.site.run.profile), url_part, expression)


def refused(problem: str) -> dict:
    return {"code": "invalid_message", "message": problem, "phase": "precheck", "retryable": False}


async def test_the_executor_answers_a_declared_ping(driver):
    tab = await with_executor(driver)
    assert await to_page(driver, tab, {"type": "executor.ping", "requestId": "p1"}) == {
        "ok": True, "requestId": "p1", "result": "pong"}


async def test_the_executor_refuses_an_undeclared_type_naming_the_request(driver):
    tab = await with_executor(driver)
    old_envelope = await to_page(driver, tab, {"protocol": "tabwarden/content-v1", "kind": "ping", "requestId": "p2"})
    assert old_envelope == {"ok": False, "requestId": "p2", "error": "the message has no type",
                            "failure": refused("the message has no type")}
    unknown = await to_page(driver, tab, {"type": "executor.teleport", "requestId": "p3"})
    assert unknown["failure"] == refused('unknown message type "executor.teleport"')


async def test_the_executor_refuses_a_bad_field_and_runs_nothing(driver):
    tab = await with_executor(driver)
    message = {"type": "executor.execute", "requestId": "x1", "tool": "type", "deadlineAt": -1,
               "params": {"ref": "sabc_1_1", "text": "never typed"}}
    reply = await to_page(driver, tab, message)
    assert reply["requestId"] == "x1" and reply["failure"] == refused("executor.execute: deadlineAt must be at least 0")
    extra = await to_page(driver, tab, {"type": "executor.cancel", "requestId": "c1", "cancelRequestId": "x1", "now": 1})
    assert extra["failure"] == refused("executor.cancel: unknown field now")
    no_id = await to_page(driver, tab, {"type": "executor.ping", "requestId": ""})
    assert "requestId" not in no_id and no_id["error"] == "executor.ping: requestId must not be empty"


async def over_read_port(driver, tab: int, messages: list) -> list:
    """What the page answers each of `messages`, sent in turn on one port named as the worker's
    kept read port."""
    port = debugging_port(driver.site.run.profile)
    return await evaluate_in_worker(port, f"""(async () => {{
      const port = chrome.tabs.connect({tab}, {{ frameId: 0, name: "executor.reads" }});
      const answers = [];
      for (const message of {json.dumps(messages)}) {{
        answers.push(await new Promise((resolve) => {{
          port.onMessage.addListener(function heard(reply) {{ port.onMessage.removeListener(heard); resolve(reply); }});
          port.postMessage(message);
        }}));
      }}
      port.disconnect();
      return answers;
    }})()""")


async def test_the_read_port_takes_reads_only_and_runs_no_write(driver):
    tab = await driver.open("form.html")
    name = ref_of((await driver.read())["text"], 'textbox "Full name"')
    deadline = 2**52
    read, write, ping = await over_read_port(driver, tab, [
        {"type": "executor.execute", "requestId": "r1", "tool": "find_in_page", "params": {"query": "Email"},
         "deadlineAt": deadline},
        {"type": "executor.execute", "requestId": "w1", "tool": "type", "deadlineAt": deadline,
         "params": {"ref": name, "text": "never typed"}},
        {"type": "executor.ping", "requestId": "p1"},
    ])
    assert read["ok"] is True and read["requestId"] == "r1" and "Email" in read["result"]["resultText"], read
    assert write["requestId"] == "w1" and write["failure"] == refused("type is a write: it is not taken on the read port")
    assert ping["failure"] == refused("only executor.execute is taken on this port")
    assert await driver.evaluate("form.html", "document.getElementById('name').value") == ""


async def test_reads_follow_the_tab_from_document_to_document(driver):
    tab = await with_executor(driver)
    # The worker's kept port belongs to the document it reached: after a load nobody asked us for,
    # the next read opens one to the new document (injecting the executor there) and reads it.
    await driver.read()
    for page in ("child.html", "search.html"):
        url = driver.site.url(page, visit="moved")
        port = debugging_port(driver.site.run.profile)
        await evaluate_in_worker(port, f"chrome.tabs.update({tab}, {{ url: {json.dumps(url)} }}).then(() => true)")
        for _ in range(100):
            tabs = {t["id"]: t for t in await driver.control.call("browser.tabs")}
            if tabs[tab]["url"] == url and tabs[tab]["status"] == "complete":
                break
            await asyncio.sleep(0.05)
        text = (await driver.read())["text"]
        assert f"URL: {url}" in text, text

async def test_a_loaded_page_opens_its_read_port_itself_and_the_read_after_the_load_takes_it(driver):
    tab = await with_executor(driver)
    port = debugging_port(driver.site.run.profile)
    before = await evaluate_in_worker(port, "tabwarden.readPorts()")
    url = driver.site.url("search.html", visit="own-port")
    loaded = await driver.ok("navigate", url=url)
    assert f"URL: {url}" in loaded["text"], loaded["text"]
    after = await evaluate_in_worker(port, "tabwarden.readPorts()")
    # The new document's executor opened the port while its page loaded; the read that answered
    # the navigation went over it, and so does the next one: the worker opened none.
    assert after["kept"][f"{tab}:0"] == "page", after
    assert after["opened"]["byPage"] > before["opened"]["byPage"], (before, after)
    assert (await driver.read())["text"].count(f"URL: {url}") == 1
    assert (await evaluate_in_worker(port, "tabwarden.readPorts()"))["opened"]["byWorker"] == before["opened"]["byWorker"]


async def navigate_answered_by_the_page(driver, page: str, visit: str) -> dict:
    """Navigate to `page` (from a page the executor is in); its answer, which must be the read
    the new document took of itself: sent unasked, or, when the worker heard of the load before
    the page said it was reading, shared with the worker's read under the same id. Either way
    the page read once."""
    await with_executor(driver)
    loaded = await driver.ok("navigate", url=driver.site.url(page, visit=visit))
    state = await in_content_world(driver, f"visit={visit}", "[globalThis.__tabwarden.state.readAtLoad, "
                                                             "globalThis.__tabwarden.state.snapshotCounter]")
    assert state == [True, 1], state
    return loaded


async def test_a_page_the_agent_loads_reads_itself_after_its_load_and_that_read_answers(driver):
    # Asked for at the commit, the new document read itself once its load was over; the
    # navigation's answer is that read, which ran once in the page.
    loaded = await navigate_answered_by_the_page(driver, "search.html", "self-read")
    assert "visit=self-read" in loaded["text"] and 'textbox "Query"' in loaded["text"], loaded["text"]
    # The refs of that read act.
    assert (await driver.ok("type", ref=ref_of(loaded["text"], 'textbox "Query"'), element="Query", text="kept refs"))["ok"]
    assert await driver.evaluate("visit=self-read", "document.querySelector('input').value") == "kept refs"
    # A later read with the very parameters of the load's read is read afresh, not given that one.
    await driver.evaluate("visit=self-read", "document.body.append(Object.assign(document.createElement('h2'), "
                                             "{ textContent: 'Added later' })) && true")
    assert 'heading "Added later"' in (await driver.read(maxTokens=1500))["text"]


async def test_a_page_that_stops_its_load_event_is_still_read_for_the_navigation(driver):
    # The page's own read still runs once it has loaded, and answers.
    loaded = await navigate_answered_by_the_page(driver, "load-stopped.html", "stopped")
    assert 'button "Still here"' in loaded["text"], loaded["text"]
    assert (await driver.read())["ok"]


async def test_the_indicator_refuses_a_bad_field_and_shows_nothing(driver):
    tab = await with_executor(driver)
    assert await to_page(driver, tab, {"type": "indicator.show", "now": True}) == {
        "ok": False, "error": "indicator.show: unknown field now"}
    assert await to_page(driver, tab, {"type": "indicator.hide"}) == {"ok": True, "shown": False}


async def test_the_worker_times_a_declared_sleep_and_refuses_a_bad_one(driver):
    await with_executor(driver)
    ask = ("chrome.runtime.sendMessage({message}).then((answer) => ({{ answer }}), "
           "(err) => ({{ refused: String(err.message || err) }}))")
    slept = await in_content_world(driver, "form.html", ask.format(message='{ type: "timer.sleep", ms: 10 }'))
    assert slept == {"answer": True}
    for message in ('{ type: "timer.sleep", ms: 60001 }', '{ type: "timer.sleep", ms: "10" }',
                    '{ type: "tabwarden.sleep", ms: 10 }', '{ type: "timer.sleep", ms: 10, extra: 1 }'):
        answer = await in_content_world(driver, "form.html", ask.format(message=message))
        # Nobody answered (Chrome resolves the promise empty): the page falls back to its own timer.
        assert answer.get("answer") is None, (message, answer)


async def test_the_declaration_in_the_page_cannot_be_changed(driver):
    await with_executor(driver)
    frozen = await in_content_world(driver, "form.html", "(() => { const C = globalThis.__tabwardenContent; "
                                    "return [Object.isFrozen(C), Object.isFrozen(C.MESSAGES['timer.sleep'].ms), "
                                    "C.TYPES.TIMER_SLEEP]; })()")
    assert frozen == [True, True, "timer.sleep"]


async def test_what_we_draw_on_the_page_never_animates_without_end(driver):
    # While anything on a shown page animates, Chromium renders every frame and runs the page's
    # next task only after one: the agent's next input would wait, the page would be redrawn.
    tab = await with_executor(driver)
    page = (await driver.read())["text"]
    field = next(line for line in page.split("\n") if "textbox" in line).split("[ref=")[1].split("]")[0]
    target = next(t for t in page_targets(debugging_port(driver.site.run.profile)) if "form.html" in t.get("url", ""))
    started: list[dict] = []
    async with websockets.connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Animation.enable"}))

        async def listen() -> None:
            while True:
                event = json.loads(await ws.recv())
                if event.get("method") == "Animation.animationStarted":
                    started.append(event["params"]["animation"])

        listening = asyncio.ensure_future(listen())
        try:
            assert (await to_page(driver, tab, {"type": "indicator.show"}))["ok"] is True
            await driver.call("type", element="field", ref=field, text="x")  # draws the action highlight
            await asyncio.sleep(0.5)
        finally:
            listening.cancel()
    assert started, "the indicator's dot pulses when it appears"
    assert all(isinstance(a["source"]["iterations"], (int, float)) and a["source"]["iterations"] <= 3
               for a in started), started
    await to_page(driver, tab, {"type": "indicator.hide"})
