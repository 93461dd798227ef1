"""The built-ins in a real host process (`python -m host host` on stdio, as Chrome starts it) with
the fake model over real HTTP; this test plays the extension and a side-panel page, and attaches
to the host's control socket as the REPL does.

fetch_url reaches a page on 127.0.0.1 only through the test configuration (TABWARDEN_TEST_HOOKS
with a name mapped to it); by default loopback and metadata addresses are denied in every
spelling, and a redirect from a public-looking server (127.0.0.2) to 127.0.0.1 is refused.
Questions are answered from the control socket, a request_user_action survives kill -9, a
scheduled resume fires on its own, and the memory round-trips between model and user.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from host.builtins.netguard import TEST_HOOKS_ENV
from host.transport.errors import RemoteError
from protocol import ui
from protocol.schema import schema_hash
from tests.support.fake_model import FakeOpenAI, Reply, last_tool_result_text
from tests.support.hosts import attach, tabwarden_home, write_settings
from tests.support.scripted_site import Site, html, redirect
from tests.support.stdio_browser import PAGE_URL, StdioBrowser
from tests.support.waiting import until


@pytest.fixture(scope="module")
def sites():
    private = Site("127.0.0.1", {"/report.html": html("<title>Report</title><h1>Q3</h1><p>Revenue rose.</p>")})
    public = Site("127.0.0.2")
    with private, public:
        public.routes["/moved"] = redirect(f"http://127.0.0.1:{private.port}/report.html")
        yield public, private


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def hooks(monkeypatch):
    """The test configuration: pages.test is the 127.0.0.1 site, public.test the 127.0.0.2 one."""
    monkeypatch.setenv(TEST_HOOKS_ENV, "1")
    monkeypatch.setenv("TABWARDEN_TEST_FETCH_HOSTS", json.dumps({
        "pages.test": {"address": "127.0.0.1", "public": True},
        "public.test": {"address": "127.0.0.2", "public": True}}))


async def open_panel(browser: StdioBrowser, n: int = 1) -> None:
    browser.op({"type": "initialize", "submissionId": f"init-{n}", "protocol": ui.ENGINE_PROTOCOL,
                "schemaHash": schema_hash(), "clientId": "panel-1"})
    await browser.wait_for("initialized", n)


async def submit(browser: StdioBrowser, text: str, policy: str = "auto", n: int = 1) -> str:
    browser.op({"type": "thread.create", "submissionId": f"create-{n}", "permissionPolicy": policy})
    thread = (await wait_ack(browser, f"create-{n}"))["threadId"]
    browser.op({"type": "turn.submit", "submissionId": f"submit-{n}", "threadId": thread,
                "input": {"text": text, "browserContext": {"capturedAt": 1, "defaultTab": {
                    "tabId": 1, "url": PAGE_URL, "title": "Cart"}}}})
    await wait_ack(browser, f"submit-{n}")
    return thread


async def wait_ack(browser: StdioBrowser, submission: str, timeout: float = 30.0) -> dict:
    def answer() -> dict | None:
        return next((e for e in browser.events
                     if e.get("type") in ("command.ack", "command.rejected") and e.get("submissionId") == submission),
                    None)

    event = await until(answer, timeout, f"an answer to {submission}", interval=0.02)
    assert event["type"] == "command.ack", event
    return event


def tool_texts(browser: StdioBrowser, thread: str) -> list[dict]:
    return [e["result"] for e in browser.of("item.complete")
            if e.get("threadId") == thread and "tool-call:" in e.get("itemId", "")]


async def test_fetch_url_through_the_test_configuration_and_denied_by_default(tmp_path, server, sites, hooks):
    public, private = sites
    denied = [f"http://127.0.0.1:{private.port}/report.html", f"http://localhost:{private.port}/report.html",
              f"http://0x7f.1:{private.port}/report.html", f"http://[::1]:{private.port}/report.html",
              f"http://2130706433:{private.port}/report.html", "http://169.254.169.254/latest/meta-data/",
              "http://metadata.google.internal/computeMetadata/v1/"]
    # Two turns in two threads: five denials in a minute would pause a thread as a denial burst.
    first = [("fetch_url", {"url": f"http://pages.test:{private.port}/report.html"})]
    first += [("fetch_url", {"url": url}) for url in denied[:3]]
    first += [("fetch_url", {"url": f"http://public.test:{public.port}/moved"})]
    second = [("fetch_url", {"url": url}) for url in denied[3:]]
    server.add(*[Reply(tool_calls=[call]) for call in first], Reply(text="Done."),
               *[Reply(tool_calls=[call]) for call in second], Reply(text="Done."))
    home = tmp_path / "tw"
    write_settings(home, server.url)
    browser = StdioBrowser(home)
    await browser.start()
    try:
        await open_panel(browser)
        # The user names the addresses: a URL only the model chose would ask first.
        one = await submit(browser, f"read the report at http://pages.test:{private.port}/report.html, or else at "
                                    f"http://public.test:{public.port}/moved", n=1)
        assert (await browser.wait_for("turn.complete", timeout=60))["stopReason"] == "end"
        two = await submit(browser, "read it another way", n=2)
        assert (await browser.wait_for("turn.complete", 2, timeout=60))["stopReason"] == "end"
        fetched, *refused, moved = tool_texts(browser, one)
        refused += tool_texts(browser, two)
        assert fetched["ok"] and "Title: Report" in fetched["text"] and "# Q3\n\nRevenue rose." in fetched["text"]
        assert len(refused) == len(denied)
        for url, result in zip(denied, refused):
            assert result["ok"] is False and result["code"] == "ssrf_blocked", (url, result)
            assert result["text"].startswith("Action denied by policy")
        assert moved["ok"] is False and moved["code"] == "ssrf_blocked"
        assert f"redirects to http://127.0.0.1:{private.port}/report.html" in moved["text"]
        assert public.hits == ["/moved"] and private.hits == ["/report.html"]  # only the allowed fetch got there
        sent = last_tool_result_text(server.requests[1]["body"])
        assert sent.startswith("<<<web_content_") and f'origin="http://pages.test:{private.port}"' in sent
    finally:
        await browser.close()


async def test_ask_user_answered_from_the_control_socket(tmp_path, server):
    server.add(Reply(tool_calls=[("ask_user", {"question": "Which size?", "options": ["S", "M", "L"]})]),
               Reply(text="Size M it is."))
    home = tmp_path / "tw"
    write_settings(home, server.url)
    browser = StdioBrowser(home)
    await browser.start()
    try:
        with tabwarden_home(home):
            control = await attach(timeout=30)
            try:
                await open_panel(browser)
                thread = await submit(browser, "buy a shirt")
                asked = await browser.wait_for("interaction.request")
                [pending] = await control.call("interactions.list", thread_id=thread)
                assert pending["interactionId"] == asked["interactionId"]
                assert pending["request"] == {"kind": "ask_user", "question": "Which size?", "options": ["S", "M", "L"]}
                ack = await control.call("interactions.answer", interaction_id=asked["interactionId"], kind="submit",
                                         value="M")
                assert ack["type"] == "command.ack"
                again = await control.call("interactions.answer", interaction_id=asked["interactionId"],
                                           kind="cancel")
                assert again["code"] == "already_decided"
                assert (await browser.wait_for("turn.complete"))["stopReason"] == "end"
                assert last_tool_result_text(server.requests[1]["body"]) == "The user answered: M"
                assert await control.call("interactions.list") == []
            finally:
                await control.close()
    finally:
        await browser.close()


async def test_request_user_action_survives_kill_9_and_resumes_once(tmp_path, server):
    action = {"action": "Log in to shop.example", "reason": "it needs your password"}
    server.add(Reply(tool_calls=[("request_user_action", action)]))
    home = tmp_path / "tw"
    write_settings(home, server.url)
    first = StdioBrowser(home)
    await first.start()
    await open_panel(first)
    thread = await submit(first, "buy it", policy="untrusted")
    asked = await first.wait_for("interaction.request")
    first.kill()
    await first.wait_exit()

    server.add(Reply(text="Logged in; continuing."))
    second = StdioBrowser(home)
    await second.start()
    try:
        second.op({"type": "initialize", "submissionId": "init-2", "protocol": ui.ENGINE_PROTOCOL,
                   "schemaHash": schema_hash(), "clientId": "panel-1", "subscribeThreadId": thread})
        snapshot = (await second.wait_for("initialized"))["snapshot"]
        [pending] = snapshot["pendingInteractions"]
        assert pending["interactionId"] == asked["interactionId"] and pending["request"]["action"] == action["action"]
        assert snapshot["thread"]["activeRun"]["state"] == "waiting_interaction"
        for n in (1, 2):  # the same answer twice: one resume
            second.op({"type": "interaction.response", "submissionId": f"done-{n}",
                       "interactionId": asked["interactionId"], "response": {"kind": "submit", "value": "pw: hunter2"}})
        await wait_ack(second, "done-1")
        assert (await second.wait_for("turn.complete"))["stopReason"] == "end"
        await asyncio.sleep(0.3)
        assert len(second.of("turn.complete")) == 1 and len(server.requests) == 2
        sent = last_tool_result_text(server.requests[1]["body"])
        assert sent.startswith("The user reports it done: Log in to shop.example") and "hunter2" not in sent
    finally:
        await second.close()


async def test_schedule_resume_fires_after_its_delay(tmp_path, server):
    server.add(Reply(tool_calls=[("schedule_resume", {"delaySeconds": 1, "reason": "the export is running"})]),
               Reply(text="The export is ready."))
    home = tmp_path / "tw"
    write_settings(home, server.url)
    browser = StdioBrowser(home)
    await browser.start()
    try:
        await open_panel(browser)
        thread = await submit(browser, "export, then check")
        asked = await browser.wait_for("interaction.request")
        assert asked["request"]["summary"].endswith(": the export is running")
        done = await browser.wait_for("turn.complete")
        assert done["stopReason"] == "end"
        [resolved] = browser.of("interaction.resolved")
        assert (resolved["response"], resolved["by"]) == ("timeout", "timeout")
        assert tool_texts(browser, thread)[0]["text"].startswith("Resumed as scheduled")
    finally:
        await browser.close()


async def test_memory_round_trip_between_the_model_and_the_user(tmp_path, server):
    server.add(Reply(tool_calls=[("memory_write", {"key": "shirt size", "value": "M"})]), Reply(text="Noted."),
               Reply(tool_calls=[("memory_read", {})]), Reply(text="You wear M and live in Arlington."))
    home = tmp_path / "tw"
    write_settings(home, server.url)
    browser = StdioBrowser(home)
    await browser.start()
    try:
        with tabwarden_home(home):
            control = await attach(timeout=30)
            try:
                await open_panel(browser)
                await submit(browser, "remember my size", n=1)
                await browser.wait_for("turn.complete")
                [entry] = await control.call("memory.list")
                assert (entry["key"], entry["value"], entry["source"]) == ("shirt size", "M", "model")
                await control.call("memory.set", key="city", value="Arlington")
                with pytest.raises(RemoteError) as refused:
                    await control.call("memory.set", key="bio", value="x" * 2001)
                assert refused.value.info.details == {"reason": "value_too_long"}
                await submit(browser, "what do you know about me?", n=2)
                await browser.wait_for("turn.complete", 2)
                sent = last_tool_result_text(server.requests[-1]["body"])
                assert "- city: Arlington" in sent and "- shirt size: M" in sent
                assert (await control.call("memory.clear")) == {"cleared": 2}
                assert await control.call("memory.list") == []
            finally:
                await control.close()
    finally:
        await browser.close()
