"""Restart recovery in process: the engine stops (without touching its runs, as in a crash) and a
new one starts over the same files. Pending approvals come back with the same id and the time
that remains, expired ones are declined, a write that may have happened is never replayed."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.engine_harness import FakeExecutor, Harness
from tests.support.fake_model import FakeOpenAI, Reply, last_tool_result_text

CLICK = ("click", {"ref": "s1_1_2", "element": "Buy"})


class Clock:
    """A wall clock that stands still unless a test moves it (persisted deadlines use it; the
    event loop's own timers do not)."""

    def __init__(self) -> None:
        import time

        self.offset = 0.0
        self._start = time.time()

    def __call__(self) -> float:
        return self._start + self.offset


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


async def test_a_pending_approval_is_offered_again_with_its_remaining_time(tmp_path, server):
    clock = Clock()
    h = Harness(tmp_path, server.url, clock=clock)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]), Reply(text="bought"))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    first = await h.recorder.wait_for("approval.request")
    clock.offset = 100  # the host is down for 100 s
    await h.restart()
    again = await h.recorder.wait_for("approval.request")
    assert again["approvalId"] == first["approvalId"]
    assert again["deadlineAt"] == first["deadlineAt"]
    assert again["remainingMs"] == 200_000
    assert again["stream"]["epoch"] == first["stream"]["epoch"] + 1
    pending = h.engine.thread_snapshot(thread).pending_approvals
    assert [p.approval_id for p in pending] == [first["approvalId"]]
    await h.answer(again["approvalId"], "accept")
    await h.turn_done()
    assert h.executor.executed == [("click", CLICK[1])]
    await h.stop()


async def test_an_approval_whose_deadline_passed_while_down_is_declined(tmp_path, server):
    clock = Clock()
    h = Harness(tmp_path, server.url, clock=clock)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]), Reply(text="ok, not bought"))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    first = await h.recorder.wait_for("approval.request")
    clock.offset = 301
    await h.restart()
    await h.turn_done()
    assert h.recorder.of("approval.request") == []
    resolved = h.recorder.of("approval.resolved")[0]
    assert resolved["by"] == "recovery" and resolved["decision"] == "decline"
    assert "timed out while the host was not running" in last_tool_result_text(server.requests[1]["body"])
    late = await h.answer(first["approvalId"], "accept")
    assert late["code"] == "already_decided"
    assert h.executor.executed == []
    await h.stop()


async def test_a_decision_made_just_before_the_stop_is_carried_out_once(tmp_path, server):
    h = Harness(tmp_path, server.url)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]), Reply(text="bought"))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    request = await h.recorder.wait_for("approval.request")
    # Decide in storage only, as if the host died between the commit and waking the loop.
    await h.engine.close()
    h.engine.approvals.settle(request["approvalId"], {"kind": "accept"}, "user")
    h.store.close()
    h.engine = None
    await h.start()
    await h.turn_done()
    assert h.executor.executed == [("click", CLICK[1])]
    assert h.recorder.of("approval.request") == []  # decided: not offered again
    await h.stop()


async def test_a_write_in_flight_pauses_as_uncertain_and_is_never_replayed(tmp_path, server):
    executor = FakeExecutor(gate=asyncio.Event())
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]))
    thread = await h.new_thread(permissionPolicy="auto")
    await h.submit(thread, "buy")
    await asyncio.wait_for(executor.running.wait(), 10)
    await h.restart()  # the click was sent; its answer never came
    required = await h.recorder.wait_for("run.recovery_required")
    assert required["run"]["state"] == "paused_uncertain"
    assert required["run"]["pendingTool"]["tool"] == "click" and required["run"]["pendingTool"]["startedAt"]
    await asyncio.sleep(0.2)
    assert executor.executed == [("click", CLICK[1])]  # once, before the stop
    busy = await h.op({"type": "turn.submit", "threadId": thread, "input": {"text": "again"}})
    assert busy["code"] == "thread_busy"
    server.add(Reply(text="the click had worked"))
    ack = await h.op({"type": "run.resolveUncertain", "threadId": thread, "runId": required["run"]["runId"],
                      "resolution": "mark_done"})
    assert ack["type"] == "command.ack"
    await h.turn_done()
    assert executor.executed == [("click", CLICK[1])]
    assert "confirmed it took effect" in last_tool_result_text(server.requests[-1]["body"])
    await h.stop()


async def test_retrying_an_uncertain_write_goes_through_the_checks_again(tmp_path, server):
    executor = FakeExecutor(gate=asyncio.Event())
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    first = await h.recorder.wait_for("approval.request")
    await h.answer(first["approvalId"], "accept")
    await asyncio.wait_for(executor.running.wait(), 10)
    await h.restart()
    required = await h.recorder.wait_for("run.recovery_required")
    executor.gate = None
    server.add(Reply(text="clicked again"))
    await h.op({"type": "run.resolveUncertain", "threadId": thread, "runId": required["run"]["runId"],
                "resolution": "retry"})
    again = await h.recorder.wait_for("approval.request")  # a fresh approval: the old one is spent
    assert again["approvalId"] != first["approvalId"]
    await h.answer(again["approvalId"], "accept")
    await h.turn_done()
    assert executor.executed == [("click", CLICK[1]), ("click", CLICK[1])]
    await h.stop()


async def test_failing_an_uncertain_write_ends_the_run(tmp_path, server):
    executor = FakeExecutor(gate=asyncio.Event())
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]))
    thread = await h.new_thread(permissionPolicy="auto")
    await h.submit(thread, "buy")
    await asyncio.wait_for(executor.running.wait(), 10)
    await h.restart()
    required = await h.recorder.wait_for("run.recovery_required")
    ack = await h.op({"type": "run.resolveUncertain", "threadId": thread, "runId": required["run"]["runId"],
                      "resolution": "fail"})
    assert ack["type"] == "command.ack"
    assert (await h.turn_done())["stopReason"] == "error"
    assert h.engine.store.run(required["run"]["runId"]).state == "failed"
    wrong = await h.op({"type": "run.resolveUncertain", "threadId": thread, "runId": required["run"]["runId"],
                        "resolution": "retry"})
    assert wrong["code"] == "invalid_state"
    await h.stop()


async def test_a_read_in_flight_is_replayed(tmp_path, server):
    executor = FakeExecutor(gate=asyncio.Event())
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    server.add(Reply(tool_calls=[("read_page", {})]))
    thread = await h.new_thread()
    await h.submit(thread, "read")
    await asyncio.wait_for(executor.running.wait(), 10)
    executor.gate = None
    server.add(Reply(text="read it"))
    await h.restart()
    await h.turn_done()
    assert [t for t, _ in executor.executed] == ["read_page", "read_page"]
    await h.stop()


async def test_a_model_call_cut_by_the_stop_is_made_again(tmp_path, server):
    import threading

    gate = threading.Event()
    h = Harness(tmp_path, server.url)
    await h.start()
    server.add(Reply(text="half an answer", hold=gate))
    thread = await h.new_thread()
    await h.submit(thread, "talk")
    await h.model_text()
    server.add(Reply(text="a whole answer"))
    await h.restart()
    gate.set()
    await h.turn_done()
    answers = [n.body["text"] for n in h.engine.thread_snapshot(thread).nodes if n.kind == "assistant_message"]
    assert answers == ["a whole answer"]
    await h.stop()


async def test_queued_turns_survive_a_restart(tmp_path, server):
    import threading

    gate = threading.Event()
    h = Harness(tmp_path, server.url)
    await h.start()
    server.add(Reply(text="first", hold=gate))
    thread = await h.new_thread()
    await h.submit(thread, "one")
    await h.model_text()
    await h.op({"type": "turn.enqueue", "threadId": thread, "input": {"text": "two"}})
    server.add(Reply(text="first again"), Reply(text="second"))
    await h.restart()
    gate.set()
    await h.turn_done(2)
    users = [n.body["text"] for n in h.engine.thread_snapshot(thread).nodes if n.kind == "user_message"]
    assert users == ["one", "two"]
    await h.stop()


async def test_a_recovered_approval_is_not_reused_when_the_tab_moved_meanwhile(tmp_path, server):
    h = Harness(tmp_path, server.url)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]), Reply(text="the page changed"))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    first = await h.recorder.wait_for("approval.request")
    await h.engine.close()
    h.store.close()
    h.engine = None
    h.executor.origin = "https://elsewhere.example"  # the tab navigated while the host was down
    await h.start()
    await h.answer(first["approvalId"], "accept")
    await h.turn_done()
    assert h.executor.executed == []
    text = last_tool_result_text(server.requests[-1]["body"])
    assert "target changed after the permission check" in text and "do not reuse the previous approval" in text
    await h.stop()


async def test_an_approval_resumed_after_a_restart_is_not_used_where_the_element_now_leads(tmp_path, server):
    executor = FakeExecutor(destinations=[{"url": "https://pay.partner.example/checkout", "method": "POST"}])
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    server.add(Reply(tool_calls=[CLICK]))
    thread = await h.new_thread()
    await h.submit(thread, "buy")
    first = await h.recorder.wait_for("approval.request")
    assert first["request"]["destinations"] == ["POST https://pay.partner.example/checkout"]
    await h.restart()
    executor.destinations = [{"url": "https://collector.example/take", "method": "POST"}]
    again = await h.recorder.wait_for("approval.request")
    server.add(Reply(text="not sent"))
    await h.answer(again["approvalId"], "accept")
    await h.turn_done()
    assert executor.executed == []
    text = last_tool_result_text(server.requests[-1]["body"])
    assert "target_changed" in text and '"POST https://collector.example/take"' in text
    await h.stop()
