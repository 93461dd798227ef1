"""The engine end to end in headless Chromium: an extension page (our own side-panel document,
opened as a tab) connects a runtime Port to the service worker and sends `ui.op`s; the worker
relays them to the real host over native messaging; the engine runs a scripted task from the
fake OpenAI-compatible server (real HTTP + SSE) on a fixture page — read, type, click — with the
approvals answered from that page; and the page really changes."""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request

import pytest

from install.extension_id import default_extension_id
from protocol import ui
from protocol.schema import schema_hash
from tests.support.browser import BrowserRun
from tests.support.cdp import PageSession, debugging_port
from tests.support.fake_model import FakeOpenAI, Reply, tool_results
from tests.support.hosts import attach, tabwarden_home, write_settings
from tests.support.pages import PageServer
from tests.support.waiting import until

pytestmark = pytest.mark.browser

REF = r"\[ref=(s[0-9a-z]+_\d+_\d+)\]"


def ref_in(text: str, line_part: str) -> str:
    for line in text.split("\n"):
        if line_part in line:
            found = re.search(REF, line)
            if found:
                return found.group(1)
    raise AssertionError(f"no ref on a line with {line_part!r} in {text[:2000]}")


def form_filler(body: dict) -> Reply:
    """Read the page, type the name, click Save, report. Each step uses the newest ref shown for
    its element, as a model would (a write's answer lists only the refs that are new)."""
    results = tool_results(body)
    if not results:
        return Reply(text="Let me read the page.", tool_calls=[("read_page", {})])
    last = results[-1]
    if "Typed" in last and "Saved" not in last:
        return Reply(text="Now Save.", tool_calls=[("click", {"element": "Save button",
                                                              "ref": ref_in("\n".join(reversed(results)),
                                                                            'button "Save"')})])
    if "Saved Grace Hopper" in last:
        return Reply(text="Done: the form says Saved Grace Hopper.")
    return Reply(text="Typing the name.", tool_calls=[("type", {"element": "Full name field", "text": "Grace Hopper",
                                                                "ref": ref_in(last, 'textbox "Full name"')})])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with PageServer() as pages, FakeOpenAI() as model:
        run = BrowserRun(tmp_path_factory.mktemp("engine-e2e"), host_permissions=["http://127.0.0.1/*"],
                         start_url=pages.url("l1/form.html"))
        run.prepare()
        write_settings(run.tw_home, model.url)
        run.start()
        with tabwarden_home(run.tw_home):
            try:
                yield run, pages, model
            except BaseException:
                print(run.diagnostics())
                raise
            finally:
                run.stop()


class Panel:
    """Our extension's own page, driven over CDP: it holds a Port to the service worker."""

    def __init__(self, session: PageSession):
        self.session = session

    @classmethod
    async def open(cls, port: int) -> "Panel":
        url = f"chrome-extension://{default_extension_id()}/ui/sidepanel.html"
        request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{url}", method="PUT")
        with urllib.request.urlopen(request, timeout=10):
            pass
        panel = cls(await PageSession.open(port, "ui/sidepanel.html"))
        # The target is listed before its document commits; until then the session evaluates in
        # the initial blank document, which has no extension APIs.
        await until(lambda: panel.session.evaluate("location.protocol === 'chrome-extension:' "
                                                   "&& !!globalThis.chrome?.runtime?.id"),
                    10, "the side panel page to load", interval=0.05)
        await panel.session.evaluate("""(() => {
            window.__events = [];
            window.__port = chrome.runtime.connect({name: "e2e-panel"});
            window.__port.onMessage.addListener((event) => window.__events.push(event));
            return true;
        })()""")
        return panel

    async def send(self, op: dict) -> None:
        await self.session.evaluate(f"window.__port.postMessage({json.dumps(op)}), true")

    async def events(self) -> list[dict]:
        return await self.session.evaluate("window.__events")

    async def wait_for(self, event_type: str, count: int = 1, timeout: float = 60.0, **match) -> dict:
        async def counted() -> dict | None:
            found = [e for e in await self.events()
                     if e.get("type") == event_type and all(e.get(k) == v for k, v in match.items())]
            return found[count - 1] if len(found) >= count else None

        async def seen() -> str:
            return f"{event_type} #{count} (the page saw {[e.get('type') for e in await self.events()][-30:]})"

        return await until(counted, timeout, seen, interval=0.05)


async def test_a_scripted_task_runs_on_a_fixture_page_through_the_extension(site):
    run, pages, model = site
    control = await attach(timeout=30)
    await control.close()
    port = debugging_port(run.profile)
    model.replies.clear()
    model.add(*[form_filler] * 4)
    panel = await Panel.open(port)
    try:
        await panel.send({"type": "initialize", "submissionId": "init", "protocol": ui.ENGINE_PROTOCOL,
                          "schemaHash": schema_hash(), "clientId": "e2e-panel"})
        await panel.wait_for("initialized")
        await panel.send({"type": "thread.create", "submissionId": "create", "title": "Fill the form"})
        thread = (await panel.wait_for("command.ack", submissionId="create"))["threadId"]
        tab = await panel.session.evaluate(
            "chrome.tabs.query({}).then(tabs => tabs.find(t => (t.url || '').includes('form.html')))")
        await panel.send({"type": "turn.submit", "submissionId": "submit", "threadId": thread, "input": {
            "text": "Put Grace Hopper in the full name and save the form.",
            "browserContext": {"capturedAt": 1, "defaultTab": {"tabId": tab["id"], "url": tab["url"],
                                                               "title": tab["title"]}}}})
        assert (await panel.wait_for("command.ack", submissionId="submit"))["threadId"] == thread
        for n, tool in ((1, "type"), (2, "click")):
            request = await panel.wait_for("approval.request", n)
            assert request["request"]["tool"] == tool
            assert request["request"]["targetOrigin"] == pages.url("")[:-1]
            assert request["request"]["targetLine"].startswith("- textbox \"Full name\"" if tool == "type"
                                                                else "- button \"Save\"")
            await panel.send({"type": "approval.response", "submissionId": f"answer-{n}",
                              "approvalId": request["approvalId"], "decision": {"kind": "accept"}})
        done = await panel.wait_for("turn.complete")
        assert done["stopReason"] == "end"
    finally:
        await panel.session.close()
    page = await PageSession.open(port, "form.html")
    try:
        assert await page.evaluate("document.getElementById('name').value") == "Grace Hopper"
        assert await page.evaluate("document.getElementById('status').textContent") == "Saved Grace Hopper"
    finally:
        await page.close()
    last = model.requests[-1]["body"]
    results = tool_results(last)
    assert len(results) == 3 and all(r.startswith("<<<web_content_") for r in results)
    assert "Done: the form says Saved Grace Hopper." not in str(last)  # the final answer came after it
    from host.gatekeeper.storage.audit import AuditLog
    from host.store import Store

    store = Store(run.tw_home / "data" / "tabwarden.sqlite3")
    try:
        entries = AuditLog(store).entries(thread=thread)
        outcomes = [(e.tool, e.tool_outcome) for e in entries if e.kind == "outcome"]
        assert outcomes == [("read_page", "ok"), ("type", "ok"), ("click", "ok")]
        assert [e.approval_decision for e in entries if e.kind == "approval"] == ["accept", "accept"]
    finally:
        store.close()


async def test_the_control_socket_drives_the_engine_and_streams_its_events(site):
    run, pages, model = site
    model.replies.clear()
    model.add(Reply(text="Saving.", tool_calls=[("click", {"element": "Save button", "ref": "s0_0_1"})]),
              Reply(text="Understood, I will not save."))
    control = await attach(timeout=30)
    try:
        tab = next(t for t in await control.call("browser.tabs") if "form.html" in t.get("url", ""))
        await control.call("host.subscribe", topics=["engine"])
        created = await control.call("engine.op", op={"type": "thread.create", "submissionId": "c-1"})
        thread = created["threadId"]
        replay = await control.call("engine.op", op={"type": "thread.create", "submissionId": "c-1"})
        assert replay["threadId"] == thread and replay["replayed"] is True
        await control.call("engine.op", op={"type": "turn.submit", "submissionId": "s-1", "threadId": thread,
                                             "input": {"text": "save", "browserContext": {"defaultTab": {
                                                 "tabId": tab["id"], "url": tab["url"]}}}})
        # The ref is unknown to the host (no read yet): refused as stale before anything is asked.
        events = []
        while not any(e.get("type") == "turn.complete" for e in events):
            event = await asyncio.wait_for(control.events.get(), 60)
            if event.topic == "engine" and event.data.get("threadId") == thread:
                events.append(event.data)
        results = [e["result"] for e in events if e["type"] == "item.complete" and "tool-call:" in e["itemId"]]
        assert results[0]["ok"] is False and results[0]["code"] == "stale_ref"
        assert not [e for e in events if e["type"] == "approval.request"]
        status = await control.call("engine.status")
        assert thread not in status["running"]
        snapshot = await control.call("engine.snapshot", thread_id=thread)
        assert [n["kind"] for n in snapshot["nodes"]] == ["user_message", "assistant_message", "tool_call",
                                                         "tool_result", "assistant_message"]
    finally:
        await control.close()
