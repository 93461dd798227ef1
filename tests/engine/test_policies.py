"""Loop policies: three counted failures → one reminder, five → a final answer without tools;
denials and declines do not count; a repeated successful call → one stuck reminder; a
denial burst pauses the thread with an alert; the token budget pauses a turn until resumed."""

from __future__ import annotations

from tests.support.engine_harness import Harness, outcome
from tests.support.fake_model import Reply

BAD = ("click", {"ref": "", "element": "x"})  # an empty ref: refused as invalid parameters


def notices(h: Harness, thread: str) -> list[str]:
    return [n.body["noticeKind"] for n in h.engine.thread_snapshot(thread).nodes if n.kind == "system_notice"]


async def test_three_failures_remind_once_and_five_force_a_final_answer(harness, server):
    server.add(*[Reply(tool_calls=[BAD]) for _ in range(5)], Reply(text="I could not do it."))
    thread = await harness.new_thread()
    await harness.submit(thread, "click it")
    done = await harness.turn_done()
    assert done["stopReason"] == "error"
    assert notices(harness, thread) == ["reminder", "final"]
    requests = [r["body"] for r in server.requests]
    assert len(requests) == 6
    assert all(r.get("tools") for r in requests[:5]) and "tools" not in requests[5]
    assert "last 3 tool calls all failed" in str(requests[3]["messages"])
    assert "last 3 tool calls all failed" not in str(requests[2]["messages"])
    assert "tools are switched off" in str(requests[5]["messages"])


async def test_a_success_resets_the_count(harness, server):
    server.add(Reply(tool_calls=[BAD]), Reply(tool_calls=[BAD]), Reply(tool_calls=[("read_page", {})]),
               Reply(tool_calls=[BAD]), Reply(tool_calls=[BAD]), Reply(text="done"))
    thread = await harness.new_thread()
    await harness.submit(thread, "go")
    assert (await harness.turn_done())["stopReason"] == "end"
    assert notices(harness, thread) == []


async def test_denials_and_declines_are_not_failures(harness, server):
    harness.gatekeeper.add_rule({"tool": "navigate", "origin": "*", "verdict": "deny"})
    navigations = [Reply(tool_calls=[("navigate", {"url": f"https://a.example/{n}"})]) for n in range(4)]
    clicks = [Reply(tool_calls=[("click", {"ref": f"s1_1_{n}", "element": "x"})]) for n in range(2)]
    server.add(*navigations, *clicks, Reply(text="I am not allowed to do this"))
    thread = await harness.new_thread()
    await harness.submit(thread, "go places")
    for n in (1, 2):  # four denials (below the burst threshold), then two declines: six non-failures
        request = await harness.recorder.wait_for("approval.request", n)
        await harness.answer(request["approvalId"], "decline")
    done = await harness.turn_done()
    assert done["stopReason"] == "end"
    assert "final" not in notices(harness, thread) and "reminder" not in notices(harness, thread)
    assert "tools" in server.requests[-1]["body"]


async def test_the_same_successful_call_three_times_in_six_triggers_one_stuck_reminder(harness, server):
    same = ("read_page", {"maxTokens": 100})
    server.add(*[Reply(tool_calls=[same]) for _ in range(4)], Reply(text="done"))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    await harness.turn_done()
    assert notices(harness, thread) == ["stuck"]
    assert "You may be stuck" in str(server.requests[3]["body"]["messages"])


async def test_a_denial_burst_pauses_the_thread_and_raises_an_alert(harness, server):
    harness.gatekeeper.add_rule({"tool": "click", "origin": "*", "verdict": "deny"})
    server.add(*[Reply(tool_calls=[("click", {"ref": f"s1_1_{n}", "element": "x"})]) for n in range(8)])
    thread = await harness.new_thread()
    await harness.submit(thread, "click everything")
    done = await harness.turn_done()
    alert = harness.recorder.of("alert.raised")[0]
    assert alert["threadId"] == thread and alert["code"] == "denial_burst"
    assert done["stopReason"] == "interrupted"
    assert len(server.requests) == 5
    assert "alert" in notices(harness, thread)


async def test_the_token_budget_pauses_a_turn_until_it_is_resumed(tmp_path, server, kind):
    h = Harness(tmp_path, server.url, kind=kind, budget=10)
    await h.start()
    try:
        server.add(Reply(tool_calls=[("read_page", {})], usage=(30, 5)), Reply(text="finished"))
        thread = await h.new_thread()
        ack = await h.submit(thread, "read")
        done = await h.turn_done()
        assert done["stopReason"] == "budget_pause" and len(server.requests) == 1
        assert h.engine.store.run(ack["runId"]).state == "paused_budget"
        resumed = await h.op({"type": "run.resume", "threadId": thread, "runId": ack["runId"]})
        assert resumed["type"] == "command.ack"
        assert (await h.turn_done(2))["stopReason"] == "end"
    finally:
        await h.stop()


async def test_failed_results_of_page_tools_are_fenced_and_counted(harness, server):
    harness.executor.results["read_page"] = lambda params: outcome(ok=False, text="Error stale_ref: old", code="stale_ref")
    server.add(Reply(tool_calls=[("read_page", {})]), Reply(text="hmm"))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    await harness.turn_done()
    result = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"][0]
    assert result.body["counted"] is True and result.body["code"] == "stale_ref"
    assert "<<<web_content_" in str(server.requests[1]["body"]["messages"])
