"""Interaction tools through the loop: the run waits in `waiting_interaction` with a persisted
request, resumes exactly once when answered, timed out or cancelled, and survives a restart.
request_user_action never passes on what the user typed; watch_page is judged at its tab and
ends when the page changes; schedule_resume fires by itself."""

from __future__ import annotations

import re

import pytest

from tests.support.builtin_harness import BuiltinHarness
from tests.support.fake_model import Reply, last_tool_result_text
from tests.support.waiting import until

LOGIN = ("request_user_action", {"action": "Log in to shop.example in tab 7", "reason": "it needs your password"})


def results(harness, thread):
    return [n.body for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"]


def run_state(harness, thread):
    return harness.engine.store.runs(thread)[-1].state


async def answer(harness, asked, kind="submit", **fields):
    op = {"type": "interaction.response", "interactionId": asked["interactionId"], "response": {"kind": kind, **fields}}
    return await harness.op(op)


async def test_request_user_action_says_only_that_it_was_done(harness, server, bridge):
    server.add(Reply(tool_calls=[("read_page", {})]), Reply(tool_calls=[LOGIN]), Reply(text="Logged in, going on."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy it")
    asked = await harness.recorder.wait_for("interaction.request")
    assert asked["request"] == {"kind": "request_user_action", **LOGIN[1]}
    assert run_state(harness, thread) == "waiting_interaction"
    # Waiting on the user, the run drives no tab: no indicator, no takeover pause.
    await until(lambda: "indicator.hide" in bridge.names(), 10, "the indicator to be hidden")
    assert harness.browser.indicator.tabs_of(thread) == []
    assert (await answer(harness, asked, value="hunter2 and the 2FA code 123456"))["type"] == "command.ack"
    assert (await answer(harness, asked, "cancel"))["code"] == "already_decided"
    await harness.turn_done()
    sent = last_tool_result_text(server.requests[2]["body"])
    assert sent == ("The user reports it done: Log in to shop.example in tab 7. Look at the page again before you "
                    "continue.")
    assert "hunter2" not in str(harness.engine.thread_snapshot(thread).nodes)
    resolved = harness.recorder.of("interaction.resolved")
    assert [(r["response"], r["by"]) for r in resolved] == [("submit", "user")]


@pytest.mark.parametrize("tool,params", [
    ("request_user_action", {"action": "Solve the captcha"}),
    ("schedule_resume", {"delaySeconds": 60, "reason": "wait for the export"}),
    ("watch_page", {"textAppears": "Delivered"}),
])
async def test_an_interaction_must_be_alone_in_its_answer(harness, server, tool, params):
    server.add(Reply(tool_calls=[(tool, params), ("read_page", {})]), Reply(text="fine"))
    thread = await harness.new_thread()
    await harness.submit(thread, "go")
    await harness.turn_done()
    assert harness.recorder.of("interaction.request") == []
    first = results(harness, thread)[0]
    assert first["code"] == "invalid_params" and "must be the only tool call" in first["text"]


@pytest.mark.parametrize("tool,params,problem", [
    ("watch_page", {}, "give at least one condition"),
    ("watch_page", {"textAppears": "x", "timeoutSeconds": 0}, "timeoutSeconds"),
    ("schedule_resume", {"delaySeconds": 8 * 86400, "reason": "later"}, "delaySeconds"),
    ("request_user_action", {"action": ""}, "action"),
    ("ask_user", {"question": "ok?", "extra": 1}, "extra"),
])
async def test_bad_parameters_are_refused_and_nothing_waits(harness, server, tool, params, problem):
    server.add(Reply(tool_calls=[(tool, params)]), Reply(text="fine"))
    thread = await harness.new_thread()
    await harness.submit(thread, "go")
    await harness.turn_done()
    result = results(harness, thread)[0]
    assert result["code"] == "invalid_params" and problem in result["text"]
    assert harness.engine.interactions.pending() == [] and harness.recorder.of("interaction.request") == []


async def test_schedule_resume_fires_by_itself(harness, server):
    server.add(Reply(tool_calls=[("schedule_resume", {"delaySeconds": 1, "reason": "the export takes a moment"})]),
               Reply(text="Back, checking the export."))
    thread = await harness.new_thread()
    await harness.submit(thread, "export and check")
    asked = await harness.recorder.wait_for("interaction.request")
    assert asked["request"]["reason"] == "the export takes a moment" and asked["remainingMs"] <= 1000
    done = await harness.turn_done()
    assert done["stopReason"] == "end"
    # The wait is 1 s; a busy machine may resume it a moment late.
    assert re.match(r"Resumed as scheduled, after [12] s", last_tool_result_text(server.requests[1]["body"]))
    assert [(r["response"], r["by"]) for r in harness.recorder.of("interaction.resolved")] == [("timeout", "timeout")]


async def test_schedule_resume_due_while_the_host_was_down_resumes_late(tmp_path, server, bridge):
    clock = [1000.0]
    h = BuiltinHarness(tmp_path, server.url, bridge=bridge, clock=lambda: clock[0])
    await h.start()
    try:
        server.add(Reply(tool_calls=[("schedule_resume", {"delaySeconds": 3600, "reason": "tomorrow's prices"})]),
                   Reply(text="Checked the prices."))
        thread = await h.new_thread()
        await h.submit(thread, "check prices in an hour")
        await h.recorder.wait_for("interaction.request")
        await h.stop()
        clock[0] += 7200
        await h.start()
        await h.turn_done()
        assert last_tool_result_text(server.requests[-1]["body"]).startswith("Resumed late")
        assert len(server.requests) == 2  # resumed exactly once
    finally:
        await h.stop()


async def test_watch_page_ends_when_the_page_changes(harness, server, bridge):
    server.add(Reply(tool_calls=[("watch_page", {"textAppears": "Delivered", "note": "the parcel"})]),
               Reply(text="It arrived."))
    thread = await harness.new_thread()
    await harness.submit(thread, "tell me when it is delivered")
    asked = await harness.recorder.wait_for("interaction.request")
    assert asked["request"] == {"kind": "watch_page", "textAppears": "Delivered", "note": "the parcel", "tabId": 7,
                                "origin": "https://shop.example", "summary": 'Waiting until "Delivered" appears on '
                                                                           'tab 7 (https://shop.example), for at most 5 min'}
    await until(lambda: any(n == "content:wait_for" for n in bridge.names()), 10,
                "the watcher to check the page")
    assert run_state(harness, thread) == "waiting_interaction"
    bridge.text[7] = "Order 1: Delivered"
    await harness.turn_done()
    result = results(harness, thread)[0]
    assert result["ok"] and result["text"].startswith('The condition held after') and result["trust"] == "untrusted"
    assert [(r["response"], r["by"]) for r in harness.recorder.of("interaction.resolved")] == [("submit", "watch")]


async def test_watch_page_on_a_url_and_its_endings(harness, server, bridge):
    server.add(Reply(tool_calls=[("watch_page", {"urlMatches": "https://shop.example/orders/*/done",
                                                 "timeoutSeconds": 60})]),
               Reply(tool_calls=[("watch_page", {"textGone": "preparing"})]), Reply(text="ok"))
    thread = await harness.new_thread()
    await harness.submit(thread, "watch")
    await harness.recorder.wait_for("interaction.request")
    bridge.tabs[7]["url"] = "https://shop.example/orders/1/done"
    second = await harness.recorder.wait_for("interaction.request", 2)
    del bridge.tabs[7]  # the tab is closed while watched
    await harness.turn_done()
    first, closed = results(harness, thread)
    assert first["ok"] and "(now at https://shop.example/orders/1/done)" in first["text"]
    assert closed["ok"] is False and closed["text"] == "The watch on tab 7 stopped: tab 7 was closed."
    assert second["request"]["textGone"] == "preparing"


async def test_watch_page_without_site_access_asks_first(harness, server, bridge):
    bridge.site_access = False
    server.add(Reply(tool_calls=[("watch_page", {"textAppears": "Delivered"})]), Reply(text="ok"))
    thread = await harness.new_thread()
    await harness.submit(thread, "watch")
    approval = await harness.recorder.wait_for("approval.request")
    assert "host_permission" in approval["request"]["flags"]
    await harness.answer(approval["approvalId"], "decline")
    await harness.turn_done()
    assert results(harness, thread)[0]["outcome"] == "declined"
    assert harness.recorder.of("interaction.request") == []


async def test_watch_page_under_the_always_policy_waits_after_its_approval(harness, server, bridge):
    server.add(Reply(tool_calls=[("watch_page", {"textAppears": "Delivered"})]), Reply(text="ok"))
    thread = await harness.new_thread(permissionPolicy="always")
    await harness.submit(thread, "watch")
    approval = await harness.recorder.wait_for("approval.request")
    await harness.answer(approval["approvalId"], "accept")
    asked = await harness.recorder.wait_for("interaction.request")
    assert run_state(harness, thread) == "waiting_interaction"
    # The page moves to another origin: under `always` watching there would need a new approval.
    bridge.tabs[7]["url"] = "https://bank.example/login"
    await harness.turn_done()
    result = results(harness, thread)[0]
    assert result["ok"] is False and 'the tab moved to "https://bank.example"' in result["text"]
    assert asked["request"]["origin"] == "https://shop.example"


async def test_a_watch_survives_a_restart_and_the_user_can_end_it(tmp_path, server, bridge):
    h = BuiltinHarness(tmp_path, server.url, bridge=bridge)
    await h.start()
    try:
        server.add(Reply(tool_calls=[("watch_page", {"textAppears": "Delivered"})]), Reply(text="ok"))
        thread = await h.new_thread()
        await h.submit(thread, "watch")
        asked = await h.recorder.wait_for("interaction.request")
        await h.restart()
        again = await h.recorder.wait_for("interaction.request")
        assert again["interactionId"] == asked["interactionId"]
        await until(lambda: bridge.names().count("content:wait_for") >= 2, 10,
                    "the watcher to check the page again")  # watching again
        await answer(h, again, "cancel")
        await h.turn_done()
        assert results(h, thread)[0]["text"] == "The user stopped the watch on tab 7."
    finally:
        await h.stop()


async def test_an_approval_before_a_watch_survives_a_restart(tmp_path, server, bridge):
    h = BuiltinHarness(tmp_path, server.url, bridge=bridge)
    await h.start()
    try:
        server.add(Reply(tool_calls=[("watch_page", {"urlMatches": "*/done"})]), Reply(text="ok"))
        thread = await h.new_thread(permissionPolicy="always")
        await h.submit(thread, "watch")
        approval = await h.recorder.wait_for("approval.request")
        await h.restart()
        again = await h.recorder.wait_for("approval.request")
        assert again["approvalId"] == approval["approvalId"]
        await h.answer(again["approvalId"], "accept")
        asked = await h.recorder.wait_for("interaction.request")
        assert asked["request"]["urlMatches"] == "*/done" and run_state(h, thread) == "waiting_interaction"
        bridge.tabs[7]["url"] = "https://shop.example/orders/1/done"
        await h.turn_done()
        assert results(h, thread)[0]["ok"] is True
    finally:
        await h.stop()
