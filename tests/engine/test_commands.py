"""Command identity and input hygiene: replays get the stored answer and change nothing, a
changed payload under a used id is refused, bad ops are refused with the path of the bad field
and change no state, a thread's queue refuses op #33 with `overloaded`, pages must initialize."""

from __future__ import annotations

import pytest

from host.ui.client import Client
from protocol.schema import schema_hash
from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.waiting import until


@pytest.fixture
async def h(tmp_path):
    with FakeOpenAI() as server:
        harness = Harness(tmp_path, server.url)
        harness.server = server
        await harness.start()
        try:
            yield harness
        finally:
            await harness.stop()


def count_threads(h: Harness) -> int:
    return len(h.engine.store.threads())


async def send(h: Harness, op: dict) -> dict:
    before = len(h.answers)
    await h.commands.handle(h.client, op)
    from host.engine.views import to_wire

    await until(lambda: len(h.answers) > before, 5, f"an answer to {op['type']}", interval=0.005)
    return to_wire(h.answers[before])


async def test_a_replayed_command_returns_the_stored_answer_and_changes_nothing(h):
    op = {"type": "thread.create", "submissionId": "create-1", "title": "Groceries"}
    first = await send(h, op)
    again = await send(h, dict(op))
    assert first["type"] == "command.ack" and again["type"] == "command.ack"
    assert again["threadId"] == first["threadId"] and again["replayed"] is True and "replayed" not in first
    assert count_threads(h) == 1


async def test_the_same_id_with_another_payload_is_refused(h):
    await send(h, {"type": "thread.create", "submissionId": "x-1", "title": "A"})
    changed = await send(h, {"type": "thread.create", "submissionId": "x-1", "title": "B"})
    assert changed["type"] == "command.rejected" and changed["code"] == "invalid_command"
    assert "already used" in changed["message"]
    other_type = await send(h, {"type": "turn.interrupt", "submissionId": "x-1", "threadId": "t"})
    assert other_type["code"] == "invalid_command"
    assert [t.title for t in h.engine.store.threads()] == ["A"]


async def test_receipts_survive_a_restart(h):
    first = await send(h, {"type": "thread.create", "submissionId": "keep-1"})
    await h.restart()
    again = await send(h, {"type": "thread.create", "submissionId": "keep-1"})
    assert again["threadId"] == first["threadId"] and again["replayed"] is True
    assert count_threads(h) == 1


async def test_an_approval_answer_replayed_after_it_was_applied_is_acked_again(h):
    h.server.add(Reply(tool_calls=[("click", {"ref": "s1_1_1", "element": "x"})]), Reply(text="ok"))
    thread = await h.new_thread()
    await h.submit(thread, "go")
    request = await h.recorder.wait_for("approval.request")
    op = {"type": "approval.response", "submissionId": "answer-1", "approvalId": request["approvalId"],
          "decision": {"kind": "accept"}}
    assert (await send(h, op))["type"] == "command.ack"
    await h.turn_done()
    replay = await send(h, dict(op))
    assert replay["type"] == "command.ack" and replay["replayed"] is True
    assert len(h.executor.executed) == 1


@pytest.mark.parametrize("op,path", [
    ({"type": "turn.submit", "submissionId": "b1", "threadId": 5, "input": {"text": "x"}}, "$.threadId"),
    ({"type": "turn.submit", "submissionId": "b2", "threadId": "t", "input": {"text": "x", "evil": 1}}, "$.input"),
    ({"type": "approval.response", "submissionId": "b3", "approvalId": "a", "decision": {"kind": "allow-everything"}},
     "$.decision"),
    ({"type": "warp.drive", "submissionId": "b4"}, "$.type"),
    ({"type": "thread.create", "submissionId": "b5", "permissionPolicy": "yolo"}, "$.permissionPolicy"),
])
async def test_bad_ops_are_refused_with_the_path_and_change_nothing(h, op, path):
    answer = await send(h, op)
    assert answer["type"] == "command.rejected" and answer["code"] == "invalid_command"
    assert path in answer["message"]
    assert count_threads(h) == 0 and h.engine.store.receipt("test", op["submissionId"]) is None


async def test_an_op_without_a_submission_id_gets_an_error_event(h):
    answer = await send(h, {"type": "thread.create"})
    assert answer["type"] == "error" and answer["code"] == "invalid_command" and "submissionId" in answer["message"]
    deep = {"type": "thread.create", "submissionId": "deep"}
    nested: dict = {}
    deep["title"] = nested
    for _ in range(80):
        nested["x"] = {}
        nested = nested["x"]
    refused = await send(h, deep)
    assert refused["type"] == "command.rejected" and "deeper than 64" in refused["message"]


async def test_a_thread_with_32_ops_waiting_refuses_more_as_overloaded(h):
    thread = await h.new_thread()
    before = len(h.answers)
    for n in range(40):  # queued without yielding: the worker has not taken any yet
        await h.commands.handle(h.client, {"type": "thread.selectBranch", "submissionId": f"o{n}",
                                           "threadId": thread, "nodeId": "nope"})
    overloaded = [a for a in h.answers[before:] if getattr(a, "code", None) == "overloaded"]
    assert len(overloaded) == 8
    await until(lambda: len(h.answers) - before == 40, 10, "an answer to each of the 40 ops")
    codes = {getattr(a, "code", None) for a in h.answers[before:]}
    assert codes == {"overloaded", "node_not_found"}


async def test_a_page_must_initialize_with_the_current_schema(h):
    got: list = []
    page = Client(got.append)
    await h.commands.handle(page, {"type": "thread.create", "submissionId": "p1"})
    assert got[-1].code == "not_initialized"
    await h.commands.handle(page, {"type": "initialize", "submissionId": "p2", "protocol": "tabwarden/engine-v1",
                                   "schemaHash": "0" * 64, "clientId": "page-a"})
    assert type(got[-1]).__name__ == "ReloadRequired" and got[-1].schema_hash == schema_hash()
    await h.commands.handle(page, {"type": "initialize", "submissionId": "p3", "protocol": "tabwarden/engine-v1",
                                   "schemaHash": schema_hash(), "clientId": "page-a"})
    assert type(got[-1]).__name__ == "Initialized" and page.key == "ui:page-a"
    await h.commands.handle(page, {"type": "ping", "submissionId": "p4"})
    assert type(got[-1]).__name__ == "PongEvent"


async def test_unknown_threads_runs_and_approvals_are_named(h):
    cases = [
        ({"type": "turn.submit", "threadId": "ghost", "input": {"text": "x"}}, "thread_not_found"),
        ({"type": "approval.response", "approvalId": "ghost", "decision": {"kind": "accept"}}, "approval_not_found"),
        ({"type": "interaction.response", "interactionId": "ghost", "response": {"kind": "cancel"}}, "invalid_state"),
    ]
    for op, code in cases:
        assert (await h.op(op))["code"] == code
    thread = await h.new_thread()
    for op, code in [({"type": "run.resume", "threadId": thread, "runId": "ghost"}, "run_not_found"),
                     ({"type": "thread.fork", "threadId": thread, "atNodeId": "ghost"}, "node_not_found"),
                     ({"type": "turn.steer", "threadId": thread, "expectedTurnId": "t", "input": {"text": "x"}},
                      "no_active_turn")]:
        assert (await h.op(op))["code"] == code


async def test_fork_branch_and_edit_keep_the_tree_append_only(h):
    h.server.add(Reply(text="answer one"), Reply(text="answer two"), Reply(text="edited answer"))
    thread = await h.new_thread()
    await h.submit(thread, "question one")
    await h.turn_done()
    await h.submit(thread, "question two")
    await h.turn_done(2)
    nodes = h.engine.thread_snapshot(thread).nodes
    first_user, first_answer, second_user = nodes[0], nodes[1], nodes[2]
    fork = await h.op({"type": "thread.fork", "threadId": thread, "atNodeId": first_answer.id})
    forked = h.engine.thread_snapshot(fork["threadId"])
    assert [n.body.get("text") for n in forked.nodes] == ["question one", "answer one"]
    assert forked.meta.parent_thread_id == thread
    edit = await h.op({"type": "turn.fork", "threadId": thread, "siblingOfNodeId": second_user.id,
                       "input": {"text": "question two, better"}})
    assert edit["type"] == "command.ack"
    await h.turn_done(3)
    branch = [n.body.get("text") for n in h.engine.thread_snapshot(thread).nodes]
    assert branch == ["question one", "answer one", "question two, better", "edited answer"]
    back = await h.op({"type": "thread.selectBranch", "threadId": thread, "nodeId": second_user.id})
    assert back["type"] == "command.ack"
    branch = [n.body.get("text") for n in h.engine.thread_snapshot(thread).nodes]
    assert branch == ["question one", "answer one", "question two", "answer two"]
    assert len(h.engine.store.nodes(thread)) == 6  # nothing was overwritten
    assert first_user.id == h.engine.thread_snapshot(thread).nodes[0].id


async def test_deleting_a_thread_forgets_it_and_its_grants(h):
    thread = await h.new_thread()
    h.gatekeeper.grants.grant(thread, "click", "https://shop.example")
    ack = await h.op({"type": "thread.delete", "threadId": thread})
    assert ack["type"] == "command.ack"
    assert not h.engine.store.has_thread(thread)
    assert not h.gatekeeper.grants.for_thread(thread)
    assert h.recorder.of("thread.deleted")[0]["threadId"] == thread


async def test_subscribe_returns_a_snapshot_with_the_current_cursor(h):
    h.server.add(Reply(text="hello"))
    thread = await h.new_thread()
    await h.submit(thread, "hi")
    await h.turn_done()
    snap = await h.op({"type": "thread.subscribe", "threadId": thread})
    assert snap["type"] == "thread.snapshot"
    last = [e for e in h.recorder.events if e.get("threadId") == thread and "stream" in e][-1]["stream"]
    assert snap["stream"] == last
    assert [n["kind"] for n in snap["snapshot"]["nodes"]] == ["user_message", "assistant_message"]
