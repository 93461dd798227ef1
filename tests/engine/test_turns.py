"""Whole turns through the engine against both fake providers (real HTTP + SSE): approval ask →
accept → result → final answer, decline with a note, cancel, timeout, denial, steering, queueing,
interrupts of the model stream and of a running tool, provider errors."""

from __future__ import annotations

import asyncio
import threading

from tests.support.engine_harness import Harness
from tests.support.fake_model import Reply, last_tool_result_text
from tests.support.waiting import until

CLICK = ("click", {"ref": "s1_1_2", "element": "Buy button"})


async def test_ask_accept_result_final(harness, server):
    server.add(Reply(text="I will click.", tool_calls=[CLICK]), Reply(text="Bought."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy the thing")
    request = await harness.recorder.wait_for("approval.request")
    payload = request["request"]
    assert payload["tool"] == "click" and payload["params"] == CLICK[1]
    assert payload["targetOrigin"] == "https://shop.example"
    assert payload["targetLine"] == '- button "Buy" [ref=s1_1_2]'
    # The facts the card's sentence is built from: the element as the ref map knows it, the policy.
    assert (payload["targetRole"], payload["targetName"], payload["policy"]) == ("button", "Buy", "untrusted")
    assert "pageOrigin" not in payload  # the page's own origin is the target's
    assert "passwordTarget" not in payload  # the host's facts know no password field there (omitted: false)
    assert request["remainingMs"] > 290_000
    assert harness.executor.executed == []  # nothing runs before the answer
    ack = await harness.answer(request["approvalId"], "accept")
    assert ack["type"] == "command.ack"
    done = await harness.turn_done()
    assert done["stopReason"] == "end"
    assert harness.executor.executed == [("click", CLICK[1])]
    second = server.requests[1]["body"]
    assert "click done" in last_tool_result_text(second)
    assert "<<<web_content_" in last_tool_result_text(second)  # page results are fenced
    final = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "assistant_message"][-1]
    assert final.body["text"] == "Bought."
    entries = harness.gatekeeper.audit.entries(thread=thread)
    kinds = [(e.kind, e.verdict or e.approval_decision or e.tool_outcome) for e in entries]
    assert ("decision", "ask") in kinds and ("approval", "accept") in kinds and ("outcome", "ok") in kinds
    assert [e.detail for e in entries if e.kind == "decision"] == ["initial", "dispatch"]


async def test_decline_with_note_reaches_the_model_and_is_not_run(harness, server):
    server.add(Reply(tool_calls=[CLICK]), Reply(text="OK, I will not buy it."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    await harness.answer(request["approvalId"], "decline", note="too expensive")
    done = await harness.turn_done()
    assert done["stopReason"] == "end"
    assert harness.executor.executed == []
    text = last_tool_result_text(server.requests[1]["body"])
    assert text == ("The user declined this action. User said: too expensive Do not retry it unchanged. "
                    "Adapt or ask.")
    assert "<<<" not in text  # the engine's own words are not fenced


async def test_cancel_declines_and_ends_the_turn_interrupted(harness, server):
    server.add(Reply(tool_calls=[CLICK]))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    await harness.answer(request["approvalId"], "cancel")
    done = await harness.turn_done()
    assert done["stopReason"] == "interrupted"
    assert harness.executor.executed == [] and len(server.requests) == 1
    run = harness.engine.store.run(done["runId"])
    assert run.state == "interrupted"


async def test_first_decision_stands(harness, server):
    server.add(Reply(tool_calls=[CLICK]), Reply(text="done"))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    assert (await harness.answer(request["approvalId"], "decline"))["type"] == "command.ack"
    late = await harness.answer(request["approvalId"], "accept")
    assert late["type"] == "command.rejected" and late["code"] == "already_decided"
    await harness.turn_done()
    assert harness.executor.executed == []
    decisions = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "approval_decision"]
    assert len(decisions) == 1 and decisions[0].body["decision"] == {"kind": "decline"}


async def test_an_approval_times_out_from_its_deadline(tmp_path, server, kind):
    h = Harness(tmp_path, server.url, kind=kind, approval_timeout_s=0.3)
    await h.start()
    try:
        server.add(Reply(tool_calls=[CLICK]), Reply(text="nobody answered"))
        thread = await h.new_thread()
        await h.submit(thread, "buy")
        request = await h.recorder.wait_for("approval.request")
        await h.turn_done()
        resolved = h.recorder.of("approval.resolved")[0]
        assert resolved["by"] == "timeout" and resolved["decision"] == "decline"
        assert h.executor.executed == []
        assert "approval timed out after 0.3 seconds" in last_tool_result_text(server.requests[1]["body"])
        late = await h.answer(request["approvalId"], "accept")
        assert late["type"] == "command.rejected" and late["code"] == "already_decided"
        assert h.executor.executed == []
    finally:
        await h.stop()


async def test_a_denial_is_reported_with_its_rule_and_not_counted(harness, server):
    harness.gatekeeper.add_rule({"tool": "click", "origin": "https://shop.example", "verdict": "deny"})
    server.add(Reply(tool_calls=[CLICK]), Reply(text="I may not click there."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    await harness.turn_done()
    text = last_tool_result_text(server.requests[1]["body"])
    assert text.startswith("Action denied by policy: ") and "click @ https://shop.example" in text
    assert harness.recorder.of("approval.request") == []
    result = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"][0]
    assert result.body["outcome"] == "denied" and not result.body.get("counted", False)


async def test_reads_run_without_asking_and_allowed_writes_recheck_at_dispatch(harness, server):
    server.add(Reply(tool_calls=[("read_page", {}), CLICK]), Reply(text="done"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "look at the page and buy it")  # the user asked for the purchase
    await harness.turn_done()
    assert [t for t, _ in harness.executor.executed] == ["read_page", "click"]
    phases = [(e.tool, e.detail) for e in harness.gatekeeper.audit.entries(thread=thread) if e.kind == "decision"]
    # A read judged the same again just before it runs is one row; a write's check under its held
    # tab stays a row of its own.
    assert phases == [("read_page", "initial"), ("click", "initial"), ("click", "dispatch")]


async def test_target_drift_between_approval_and_dispatch_blocks_the_call(harness, server):
    server.add(Reply(tool_calls=[CLICK]), Reply(text="the page changed"))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    harness.executor.dispatch_origin = "https://elsewhere.example"
    await harness.answer(request["approvalId"], "accept")
    await harness.turn_done()
    assert harness.executor.executed == []
    assert 'moved to "https://elsewhere.example"' in last_tool_result_text(server.requests[1]["body"])


async def test_steering_is_read_before_the_next_model_call(harness, server):
    gate = threading.Event()
    server.add(Reply(text="working on it", tool_calls=[("read_page", {})], hold=gate), Reply(text="used your hint"))
    thread = await harness.new_thread()
    ack = await harness.submit(thread, "find the price")
    start = await harness.recorder.wait_for("turn.start")
    await harness.model_text()
    steer = await harness.op({"type": "turn.steer", "threadId": thread, "expectedTurnId": start["turnId"],
                              "input": {"text": "look in the footer"}})
    assert steer["type"] == "command.ack", steer
    wrong = await harness.op({"type": "turn.steer", "threadId": thread, "expectedTurnId": "nope",
                              "input": {"text": "x"}})
    assert wrong["code"] == "turn_mismatch"
    gate.set()
    await harness.turn_done()
    assert ack["runId"]
    second = server.requests[1]["body"]
    flat = str(second["messages"])
    assert "look in the footer" in flat
    assert "look in the footer" not in str(server.requests[0]["body"]["messages"])


async def test_submit_while_busy_is_refused_and_enqueued_turns_run_in_order(harness, server):
    gate = threading.Event()
    server.add(Reply(text="first", hold=gate), Reply(text="second"), Reply(text="third"))
    thread = await harness.new_thread()
    await harness.submit(thread, "one")
    await harness.recorder.wait_for("turn.start")
    busy = await harness.op({"type": "turn.submit", "threadId": thread, "input": {"text": "two"}})
    assert busy["type"] == "command.rejected" and busy["code"] == "thread_busy"
    for text in ("two", "three"):
        queued = await harness.op({"type": "turn.enqueue", "threadId": thread, "input": {"text": text}})
        assert queued["type"] == "command.ack"
    pending = harness.recorder.of("queue.updated")[-1]["pending"]
    assert [p["inputText"] for p in pending] == ["two", "three"]
    gate.set()
    await harness.turn_done(3)
    users = [str(r["body"]["messages"][-1]) for r in server.requests]
    assert "one" in users[0] and "two" in users[1] and "three" in users[2]


async def test_the_queue_holds_at_most_eight_and_queued_turns_can_be_edited_or_removed(harness, server):
    gate = threading.Event()
    server.add(Reply(text="first", hold=gate))
    thread = await harness.new_thread()
    await harness.submit(thread, "busy")
    await harness.recorder.wait_for("turn.start")
    runs = []
    for n in range(8):
        ack = await harness.op({"type": "turn.enqueue", "threadId": thread, "input": {"text": f"q{n}"}})
        runs.append(ack["runId"])
    full = await harness.op({"type": "turn.enqueue", "threadId": thread, "input": {"text": "q8"}})
    assert full["code"] == "queue_full"
    edit = await harness.op({"type": "queue.update", "threadId": thread, "runId": runs[0], "input": {"text": "edited"}})
    gone = await harness.op({"type": "queue.remove", "threadId": thread, "runId": runs[1]})
    assert edit["type"] == gone["type"] == "command.ack"
    pending = harness.engine.thread_snapshot(thread).queue
    assert [r.input_text for r in pending][:2] == ["edited", "q2"] and len(pending) == 7
    await harness.op({"type": "turn.interrupt", "threadId": thread})
    gate.set()


async def test_interrupt_aborts_the_model_stream(harness, server):
    gate = threading.Event()
    server.add(Reply(text="a very long answer", hold=gate))
    thread = await harness.new_thread()
    await harness.submit(thread, "talk")
    await harness.model_text()
    ack = await harness.op({"type": "turn.interrupt", "threadId": thread})
    assert ack["type"] == "command.ack"
    done = await harness.turn_done()
    assert done["stopReason"] == "interrupted"
    await until(lambda: server.disconnects == 1, 10, "the model stream to be closed")
    gate.set()
    again = await harness.op({"type": "turn.interrupt", "threadId": thread})
    assert again["code"] == "no_active_turn"


async def test_interrupt_cancels_a_running_tool(harness, server):
    harness.executor.gate = asyncio.Event()
    server.add(Reply(tool_calls=[("read_page", {})]))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    await asyncio.wait_for(harness.executor.running.wait(), 10)
    await harness.op({"type": "turn.interrupt", "threadId": thread})
    done = await harness.turn_done()
    assert done["stopReason"] == "interrupted" and harness.executor.cancelled == 1
    result = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"][0]
    assert result.body["outcome"] == "interrupted" and "may have taken effect" in result.body["text"]


async def test_interrupt_settles_a_pending_approval_as_cancel(harness, server):
    server.add(Reply(tool_calls=[CLICK]))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    await harness.op({"type": "turn.interrupt", "threadId": thread})
    await harness.turn_done()
    late = await harness.answer(request["approvalId"], "accept")
    assert late["code"] == "already_decided"
    assert harness.executor.executed == []
    resolved = harness.recorder.of("approval.resolved")[0]
    assert resolved["decision"] == "cancel" and resolved["by"] == "interrupt"


async def test_provider_auth_error_is_attributed_and_fails_the_run(harness, server):
    server.add(Reply(status=401, error_body={"error": {"message": "invalid x-api-key", "type": "authentication_error"}}))
    thread = await harness.new_thread()
    await harness.submit(thread, "hi")
    done = await harness.turn_done()
    error = harness.recorder.of("error")[0]
    assert done["stopReason"] == "error"
    assert error["code"] == "provider_error" and error["errorKind"] == "auth"
    assert error["providerDetails"]["status"] == 401 and error["providerDetails"]["provider"] == "fake"
    assert "invalid x-api-key" in error["message"]
    assert harness.engine.store.run(done["runId"]).state == "failed"


async def test_provider_rate_limit_and_unknown_model_are_told_apart(harness, server):
    server.add(Reply(status=429, error_body={"error": {"message": "slow down"}}, headers={"retry-after": "0"}),
               Reply(status=404, error_body={"error": {"message": "model `m-1` does not exist"}}))
    thread = await harness.new_thread()
    await harness.submit(thread, "one")
    await harness.turn_done()
    await harness.submit(thread, "two")
    await harness.turn_done(2)
    kinds = [e["errorKind"] for e in harness.recorder.of("error")]
    assert kinds == ["rate_limit", "bad_model"]
    assert harness.recorder.of("error")[0]["retryable"] is True


async def test_an_unreachable_provider_is_a_network_error(tmp_path, kind):
    from tests.support.fake_model import FakeOpenAI

    closed = FakeOpenAI()
    closed.httpd.server_close()
    h = Harness(tmp_path, closed.url if kind == "openai" else closed.url.removesuffix("/v1"), kind=kind)
    await h.start()
    try:
        thread = await h.new_thread()
        await h.submit(thread, "hi")
        await h.turn_done()
        assert h.recorder.of("error")[0]["errorKind"] == "network"
    finally:
        await h.stop()


async def test_no_provider_configured_is_not_configured(tmp_path):
    from host.providers.config import parse_config

    h = Harness(tmp_path, "http://127.0.0.1:9")
    h.settings = lambda: parse_config({})
    await h.start()
    try:
        thread = await h.new_thread()
        await h.submit(thread, "hi")
        await h.turn_done()
        error = h.recorder.of("error")[0]
        assert error["code"] == "not_configured"
        assert error["message"] == ("No model is set up yet. Open Settings → Model providers (from the side panel), "
                                    "add a provider and make it the default.")
    finally:
        await h.stop()


async def test_tool_calls_in_a_truncated_answer_are_refused_before_any_side_effect(harness, server, kind):
    finish = "length" if kind == "openai" else "max_tokens"
    server.add(Reply(tool_calls=[CLICK], finish=finish))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "buy")
    done = await harness.turn_done()
    assert done["stopReason"] == "error" and harness.executor.executed == []
    assert harness.executor.prepared == []


async def test_invalid_tool_arguments_are_a_counted_failure_the_model_reads(harness, server):
    server.add(Reply(tool_calls=[CLICK], raw_arguments='{"ref": "s1_'), Reply(text="sorry"))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    await harness.turn_done()
    text = last_tool_result_text(server.requests[1]["body"])
    assert text.startswith("Invalid parameters for click") and harness.executor.prepared == []


async def test_accept_for_session_and_for_site_silence_later_asks(harness, server):
    other = ("click", {"ref": "s1_1_3", "element": "Add"})
    server.add(Reply(tool_calls=[CLICK]), Reply(tool_calls=[other]), Reply(text="both clicked"))
    thread = await harness.new_thread()
    await harness.submit(thread, "click twice")
    request = await harness.recorder.wait_for("approval.request")
    await harness.answer(request["approvalId"], "acceptForSession")
    await harness.turn_done()
    assert len(harness.recorder.of("approval.request")) == 1 and len(harness.executor.executed) == 2
    server.add(Reply(tool_calls=[("type", {"ref": "s1_1_4", "element": "Qty", "text": "2"})]), Reply(text="typed"),
               Reply(tool_calls=[("type", {"ref": "s1_1_4", "element": "Qty", "text": "3"})]), Reply(text="typed"))
    await harness.submit(thread, "type")
    request = await harness.recorder.wait_for("approval.request", 2)
    await harness.answer(request["approvalId"], "acceptForSite")
    await harness.turn_done(2)
    second = await harness.new_thread()
    await harness.submit(second, "type again")
    await harness.turn_done(3)
    assert len(harness.recorder.of("approval.request")) == 2  # the site rule covers the new thread
    assert [t for t, _ in harness.executor.executed] == ["click", "click", "type", "type"]
    rules = [v.rule for v in harness.gatekeeper.list_rules() if v.rule.source == "approval_persist"]
    assert [(r.tool, r.origin) for r in rules] == [("type", "https://shop.example")]


async def test_a_sensitive_payload_still_asks_under_auto_and_dispatches_after_accept_for_site(harness, server):
    secret = ("type", {"ref": "s1_1_9", "element": "Password", "text": "hunter2"})
    server.add(Reply(tool_calls=[secret]), Reply(text="typed"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "log in")
    request = await harness.recorder.wait_for("approval.request")
    assert "sensitive_payload" in request["request"]["flags"]
    assert request["request"]["policy"] == "auto"
    # The card masks the text because the host's facts say password, though the line says button.
    assert request["request"]["passwordTarget"] is True and "password" not in request["request"]["targetLine"]
    await harness.answer(request["approvalId"], "acceptForSite")
    await harness.turn_done()
    assert harness.executor.executed == [("type", secret[1])]


async def test_no_site_access_asks_with_the_host_permission_flag(harness, server):
    harness.executor.site_access = False
    server.add(Reply(tool_calls=[("read_page", {})]), Reply(text="no access"))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    request = await harness.recorder.wait_for("approval.request")
    assert request["request"]["flags"] == ["host_permission"]
    await harness.answer(request["approvalId"], "accept")  # but access was still not granted
    await harness.turn_done()
    assert harness.executor.executed == []
    assert 'has no access to "https://shop.example"' in last_tool_result_text(server.requests[1]["body"])


async def test_a_storage_failure_before_dispatch_sends_nothing_and_fails_the_run(harness, server):
    from host.store.db import StoreError

    original = harness.engine.store.update_run

    def failing(conn, run_id, **fields):
        pending = fields.get("pending_tool")
        if pending is not None and pending.started_at is not None:
            raise StoreError("disk full")
        return original(conn, run_id, **fields)

    harness.engine.store.update_run = failing
    server.add(Reply(tool_calls=[("read_page", {})]))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    done = await harness.turn_done()
    assert done["stopReason"] == "error" and harness.executor.executed == []
    assert harness.recorder.of("error")[0]["code"] == "storage_unavailable"


async def test_an_unavailable_gatekeeper_runs_nothing(harness, server):
    harness.gatekeeper.mark_unavailable(RuntimeError("policy store corrupt"))
    server.add(Reply(tool_calls=[("read_page", {})]), Reply(text="cannot"))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    await harness.turn_done()
    assert harness.executor.executed == []
    text = last_tool_result_text(server.requests[1]["body"])
    assert text.startswith("Permission state is unavailable, so nothing runs") and "corrupt" in text


async def test_the_first_message_titles_the_thread(harness, server):
    server.add(Reply(text="hi"))
    thread = await harness.new_thread()
    await harness.submit(thread, "Find me a cheap flight to Lisbon\nin May please")
    await harness.turn_done()
    assert harness.engine.store.thread(thread).title == "Find me a cheap flight to Lisbon"
    assert harness.recorder.of("thread.updated")[0]["patch"] == {"title": "Find me a cheap flight to Lisbon"}


async def test_an_interrupt_before_the_run_starts_leaves_the_thread_free(harness, server):
    thread = await harness.new_thread()
    run_ops = [{"type": "turn.submit", "submissionId": "race-1", "threadId": thread, "input": {"text": "one"}},
               {"type": "turn.interrupt", "submissionId": "race-2", "threadId": thread}]
    for op in run_ops:  # both queued before the worker (and the runner) get a turn
        await harness.commands.handle(harness.client, op)
    await until(lambda: len([a for a in harness.answers if getattr(a, "submission_id", "").startswith("race")]) == 2,
                10, "answers to both ops")
    await until(lambda: not harness.engine.busy(thread), 10, "the thread to be free")
    server.add(Reply(text="second try works"))
    await harness.submit(thread, "two")
    done = await harness.recorder.wait_for("turn.complete", 1, stopReason="end")
    assert done["stopReason"] == "end"


async def test_a_manual_takeover_pauses_the_running_turn(harness, server):
    harness.executor.gate = asyncio.Event()
    server.add(Reply(tool_calls=[("read_page", {})]))
    thread = await harness.new_thread()
    await harness.submit(thread, "read")
    await asyncio.wait_for(harness.executor.running.wait(), 10)
    harness.engine.on_takeover(thread, {"tabId": 7, "kind": "mousedown"})
    done = await harness.turn_done()
    assert done["stopReason"] == "interrupted"
    kinds = [n.body.get("noticeKind") for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "system_notice"]
    assert kinds == ["paused"]


async def test_ask_user_waits_for_the_answer_and_the_first_answer_stands(harness, server):
    server.add(Reply(tool_calls=[("ask_user", {"question": "Which colour?", "options": ["red", "blue"]})]),
               Reply(text="Blue it is."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy a shirt")
    asked = await harness.recorder.wait_for("interaction.request")
    assert asked["request"] == {"kind": "ask_user", "question": "Which colour?", "options": ["red", "blue"]}
    assert harness.engine.store.run(harness.engine.runners[thread].run_id).state == "waiting_interaction"
    answer = {"type": "interaction.response", "interactionId": asked["interactionId"],
              "response": {"kind": "submit", "value": "blue"}}
    assert (await harness.op(answer))["type"] == "command.ack"
    again = await harness.op({**answer, "response": {"kind": "cancel"}})
    assert again["code"] == "already_decided"
    await harness.turn_done()
    assert last_tool_result_text(server.requests[1]["body"]) == "The user answered: blue"
    assert "ask_user" in [t["function"]["name"] if "function" in t else t["name"] for t in server.requests[0]["body"]["tools"]]


async def test_ask_user_must_be_alone_in_its_answer(harness, server):
    server.add(Reply(tool_calls=[("ask_user", {"question": "ok?"}), ("read_page", {})]), Reply(text="fine"))
    thread = await harness.new_thread()
    await harness.submit(thread, "go")
    await harness.turn_done()
    assert harness.recorder.of("interaction.request") == []
    assert [t for t, _ in harness.executor.executed] == ["read_page"]
    assert "must be the only tool call" in str(server.requests[1]["body"]["messages"])


async def test_a_question_survives_a_restart_and_an_interrupt_cancels_it(tmp_path, server, kind):
    h = Harness(tmp_path, server.url, kind=kind)
    await h.start()
    try:
        server.add(Reply(tool_calls=[("ask_user", {"question": "Which size?"})]), Reply(text="Size M."))
        thread = await h.new_thread()
        await h.submit(thread, "buy")
        asked = await h.recorder.wait_for("interaction.request")
        await h.restart()
        again = await h.recorder.wait_for("interaction.request")
        assert again["interactionId"] == asked["interactionId"] and again["remainingMs"] <= asked["remainingMs"]
        pending = h.engine.engine_snapshot().pending_interactions
        assert [p.interaction_id for p in pending] == [asked["interactionId"]]
        await h.op({"type": "interaction.response", "interactionId": asked["interactionId"],
                    "response": {"kind": "submit", "value": "M"}})
        await h.turn_done()
        assert "The user answered: M" in str(server.requests[-1]["body"]["messages"])
        server.add(Reply(tool_calls=[("ask_user", {"question": "Gift wrap?"})]))
        await h.submit(thread, "and wrap it?")
        second = await h.recorder.wait_for("interaction.request", 2)
        await h.op({"type": "turn.interrupt", "threadId": thread})
        assert (await h.turn_done(2))["stopReason"] == "interrupted"
        resolved = h.recorder.of("interaction.resolved")[-1]
        assert resolved["interactionId"] == second["interactionId"] and resolved["response"] == "cancel"
    finally:
        await h.stop()


async def test_the_card_says_where_the_element_leads_and_why(harness, server):
    harness.executor.destinations = [{"url": "https://pay.partner.example/checkout", "method": "POST"},
                                     {"url": "https://shop.example/cart"}]
    server.add(Reply(tool_calls=[CLICK]), Reply(text="Asked."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = (await harness.recorder.wait_for("approval.request"))["request"]
    # Only the destination that leaves the tab's origin is shown, and the question names it.
    assert request["destinations"] == ["POST https://pay.partner.example/checkout"]
    assert request["targetOrigin"] == "https://pay.partner.example"
    assert request["pageOrigin"] == "https://shop.example"  # where the click itself happens
    assert request["reason"].startswith('it leads to "https://pay.partner.example"')
    await harness.answer((await harness.recorder.wait_for("approval.request"))["approvalId"], "decline")
    await harness.turn_done()


async def test_an_approval_does_not_carry_over_to_an_element_that_leads_elsewhere(harness, server):
    harness.executor.destinations = [{"url": "https://pay.partner.example/checkout", "method": "POST"}]
    server.add(Reply(tool_calls=[CLICK]), Reply(text="It changed."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy")
    request = await harness.recorder.wait_for("approval.request")
    # The page points the element elsewhere while the user reads the card.
    harness.executor.destinations = [{"url": "https://collector.example/take", "method": "POST"}]
    await harness.answer(request["approvalId"], "accept")
    await harness.turn_done()
    assert harness.executor.executed == []
    text = last_tool_result_text(server.requests[-1]["body"])
    assert "target_changed" in text
    assert '"https://collector.example/take"' in text and '"https://pay.partner.example/checkout"' in text


async def test_a_refusal_reaches_the_user_as_the_answer_and_runs_nothing(harness, server):
    server.add(Reply(tool_calls=[CLICK], refusal="I can't help with buying that."))
    thread = await harness.new_thread()
    await harness.submit(thread, "buy the thing")
    done = await harness.turn_done()
    assert done["stopReason"] == "refusal"
    assert harness.executor.executed == []  # the call that came with the refusal never ran
    final = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "assistant_message"][-1]
    assert final.body["text"] == "I can't help with buying that." and final.body["stopReason"] == "refusal"
    assert not final.body.get("calls")
    # The conversation goes on: the next turn sends the refusal back as the assistant's words.
    server.add(Reply(text="Here is what I can do instead."))
    await harness.submit(thread, "then just tell me the price")
    assert (await harness.turn_done(2))["stopReason"] == "end"
    sent = server.requests[-1]["body"]["messages"]
    assert any(m["role"] == "assistant" and "I can't help with buying that." in str(m.get("content")) for m in sent)
