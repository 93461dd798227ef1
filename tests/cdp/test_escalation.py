"""The engine's automatic `type` -> `type_trusted` escalation: only after `l1_not_effective`,
as a call of its own that goes through the gatekeeper (and an approval) again, answering the
same model call; a declined escalation runs nothing."""

from __future__ import annotations

from typing import Any

import pytest

from host.tools.result import ToolResult
from host.tools.spec import ToolSpec
from tests.support.engine_harness import TOOLS, FakeExecutor, Harness, outcome
from tests.support.fake_model import FakeOpenAI, Reply, last_tool_result_text

TYPE = ("type", {"ref": "s1_1_2", "element": "Code field", "text": "1234"})


class TrustedExecutor(FakeExecutor):
    def offers(self, spec: ToolSpec) -> bool:
        return spec.name in (*TOOLS, "type_trusted")


def ineffective(params: dict[str, Any]) -> ToolResult:
    return outcome(ok=False, text="[tabId=7] Error l1_not_effective: the page reverted the typed value",
                   code="l1_not_effective", tab_id=7,
                   details={"escalationTool": "type_trusted", "dispatched": True, "effectMayHaveOccurred": True})


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def harness(tmp_path, server):
    executor = TrustedExecutor(results={"type": ineffective, "type_trusted": "Typed 4 characters with trusted input."})
    h = Harness(tmp_path, server.url, executor=executor)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


async def test_an_ineffective_type_escalates_through_the_gatekeeper_again(harness, server):
    server.add(Reply(tool_calls=[TYPE]), Reply(text="Done."))
    thread = await harness.new_thread()
    await harness.submit(thread, "enter the code")
    first = await harness.recorder.wait_for("approval.request")
    assert first["request"]["tool"] == "type"
    await harness.answer(first["approvalId"], "accept")
    second = await harness.recorder.wait_for("approval.request", count=2)
    assert second["request"]["tool"] == "type_trusted" and second["request"]["params"]["text"] == "1234"
    assert second["request"]["level"] == "L2" and "escalation_l2" in second["request"]["flags"]
    await harness.answer(second["approvalId"], "accept")
    await harness.turn_done()
    assert [tool for tool, _ in harness.executor.executed] == ["type", "type_trusted"]
    nodes = harness.engine.thread_snapshot(thread).nodes
    calls = [n for n in nodes if n.kind == "tool_call"]
    assert calls[1].id == f"{calls[0].id}:escalation:type_trusted"
    results = [n.body for n in nodes if n.kind == "tool_result"]
    assert results[0]["outcome"] == "escalated" and results[0].get("counted", False) is False
    assert results[1]["ok"] and results[1]["details"]["escalatedFrom"] == "type"
    assert results[0]["callId"] == results[1]["callId"]
    # The model reads the trusted attempt as the answer to its call.
    assert "Typed 4 characters with trusted input." in last_tool_result_text(server.requests[1]["body"])


async def test_a_declined_escalation_runs_nothing_more(harness, server):
    server.add(Reply(tool_calls=[TYPE]), Reply(text="I could not type it."))
    thread = await harness.new_thread()
    await harness.submit(thread, "enter the code")
    await harness.answer((await harness.recorder.wait_for("approval.request"))["approvalId"], "accept")
    second = await harness.recorder.wait_for("approval.request", count=2)
    await harness.answer(second["approvalId"], "decline", "not with the debugger")
    await harness.turn_done()
    assert [tool for tool, _ in harness.executor.executed] == ["type"]
    assert "declined" in last_tool_result_text(server.requests[1]["body"])


async def test_other_failures_do_not_escalate(harness, server):
    harness.executor.results["type"] = lambda params: outcome(ok=False, text="Error stale_ref", code="stale_ref")
    server.add(Reply(tool_calls=[TYPE]), Reply(text="ok"))
    thread = await harness.new_thread()
    await harness.submit(thread, "enter the code")
    await harness.answer((await harness.recorder.wait_for("approval.request"))["approvalId"], "accept")
    await harness.turn_done()
    assert [tool for tool, _ in harness.executor.executed] == ["type"]
    assert len(harness.recorder.of("approval.request")) == 1
