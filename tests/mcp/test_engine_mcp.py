"""MCP tools through the whole loop: a fake model over real HTTP calls tools of a real MCP
server; the real gatekeeper judges each call as a write at the server origin, whatever the
server's annotations claim; results come back fenced as untrusted MCP output."""

from __future__ import annotations

import json

import pytest

from host.mcp.service import McpTools
from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeOpenAI, Reply, last_tool_result_text
from tests.support.waiting import until


@pytest.fixture
def model():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def policy(tmp_path):
    """Writes the user policy file the harness's gatekeeper reads at start."""
    def write(**document):
        (tmp_path / "user.json").write_text(json.dumps({"version": 1, **document}), encoding="utf-8")
    return write


@pytest.fixture
async def start(tmp_path, model, manager, settings, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    harnesses = []

    async def go() -> Harness:
        h = Harness(tmp_path, model.url, services={"mcp": McpTools(manager)})
        await h.start()
        harnesses.append(h)
        return h

    yield go
    for h in harnesses:
        await h.stop()


def results(harness, thread):
    return [n.body for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"]


async def test_a_read_only_annotated_tool_is_still_a_write_that_asks(start, model, mcp_server):
    harness = await start()
    model.add(Reply(tool_calls=[("mcp__local__lookup", {"q": "weather"})]), Reply(text="It is sunny."))
    thread = await harness.new_thread()  # the default `untrusted` policy: reads pass, writes ask
    await harness.submit(thread, "look it up")
    request = await harness.recorder.wait_for("approval.request")
    assert request["request"]["tool"] == "mcp__local__lookup" and request["request"]["label"] == "Look up"
    assert request["request"]["targetOrigin"] == mcp_server.origin and request["request"]["level"] == "mcp"
    assert not any(e.startswith("lookup:") for e in mcp_server.events)  # nothing ran before the answer
    await harness.answer(request["approvalId"], "accept")
    await harness.turn_done()
    assert "lookup:weather" in mcp_server.events
    # The model was offered the server's tools, with the server's schema.
    offered = {t["function"]["name"]: t["function"] for t in model.requests[0]["body"]["tools"]}
    assert offered["mcp__local__add"]["parameters"]["required"] == ["a", "b"]
    # The result is fenced as untrusted content from the server origin.
    sent = last_tool_result_text(model.requests[1]["body"])
    assert sent.startswith("<<<web_content_") and f'origin="{mcp_server.origin}"' in sent
    assert 'tool="mcp__local__lookup"' in sent and "found weather" in sent
    [result] = results(harness, thread)
    assert result["ok"] and result["trust"] == "untrusted" and result["provenance"] == "mcp"
    assert result["details"] == {"server": "local", "tool": "lookup", "isError": False}


async def test_an_allow_rule_for_the_server_lets_its_tools_run(start, model, policy, mcp_server):
    policy(rules=[{"tool": "mcp__local__*", "origin": mcp_server.origin, "verdict": "allow"}])
    harness = await start()
    model.add(Reply(tool_calls=[("mcp__local__add", {"a": 20, "b": 22})]), Reply(text="42."))
    thread = await harness.new_thread()
    await harness.submit(thread, "add")
    await harness.turn_done()
    assert harness.recorder.of("approval.request") == []
    [result] = results(harness, thread)
    assert result["ok"] and result["text"] == "42"


async def test_the_users_own_email_goes_to_the_mcp_server_they_configured_without_a_question(start, model, policy,
                                                                                            mcp_server):
    policy(rules=[{"tool": "mcp__local__*", "origin": mcp_server.origin, "verdict": "allow"}])
    harness = await start()
    before = len(mcp_server.events)
    model.add(Reply(tool_calls=[("mcp__local__lookup", {"q": "ada@example.com"})]), Reply(text="Found her."))
    thread = await harness.new_thread()
    # Hers, from her own words, to a server she configured: no unknown destination for her values.
    await harness.submit(thread, "look up ada@example.com")
    await harness.turn_done()
    assert harness.recorder.of("approval.request") == []
    assert results(harness, thread)[0]["ok"] is True and len(mcp_server.events) > before


async def test_a_rule_for_another_origin_does_not_apply(start, model, policy, mcp_server):
    policy(rules=[{"tool": "mcp__local__*", "origin": "https://elsewhere.example", "verdict": "allow"}])
    harness = await start()
    model.add(Reply(tool_calls=[("mcp__local__add", {"a": 1, "b": 1})]), Reply(text="ok"))
    thread = await harness.new_thread()
    await harness.submit(thread, "add")
    request = await harness.recorder.wait_for("approval.request")
    await harness.answer(request["approvalId"], "decline")
    await harness.turn_done()
    assert results(harness, thread)[0]["code"] == "declined"


async def test_a_blocked_server_origin_denies_without_asking(start, model, policy, mcp_server):
    policy(sensitive_origins=[mcp_server.origin],
           rules=[{"tool": "mcp__local__*", "origin": "*", "verdict": "allow"}])  # nothing overrides a block
    harness = await start()
    before = list(mcp_server.events)
    model.add(Reply(tool_calls=[("mcp__local__lookup", {"q": "secrets"})]), Reply(text="Cannot."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "look")
    await harness.turn_done()
    [result] = results(harness, thread)
    assert result["ok"] is False and result["code"] == "sensitive_origin"
    assert result["text"].startswith("Action denied by policy:")
    assert harness.recorder.of("approval.request") == [] and mcp_server.events == before


async def test_a_server_side_failure_reaches_the_model_as_a_failed_result(start, model, policy, mcp_server):
    policy(rules=[{"tool": "category:mcp", "origin": "*", "verdict": "allow"}])
    harness = await start()
    model.add(Reply(tool_calls=[("mcp__local__boom", {"text": "no"})]), Reply(text="It failed."))
    thread = await harness.new_thread()
    await harness.submit(thread, "try")
    await harness.turn_done()
    [result] = results(harness, thread)
    assert result["ok"] is False and result["code"] == "mcp_tool_error" and "boom: no" in result["text"]
    assert "boom: no" in last_tool_result_text(model.requests[1]["body"])


async def test_an_interrupted_turn_cancels_the_running_call(start, model, policy, mcp_server):
    policy(rules=[{"tool": "mcp__local__slow", "origin": mcp_server.origin, "verdict": "allow"}])
    harness = await start()
    before = len(mcp_server.events)
    model.add(Reply(tool_calls=[("mcp__local__slow", {"seconds": 30})]), Reply(text="unused"))
    thread = await harness.new_thread()
    await harness.submit(thread, "wait")
    await until(lambda: "slow:start" in mcp_server.events[before:], 10, "the server to start the call")
    await harness.op({"type": "turn.interrupt", "threadId": thread})
    await harness.turn_done()
    await until(lambda: "slow:cancelled" in mcp_server.events[before:], 10, "the server to cancel the call")


async def test_tool_levels_can_leave_mcp_out(start, model):
    harness = await start()
    model.add(Reply(text="No tools."))
    thread = await harness.new_thread()
    await harness.submit(thread, "hi", overrides={"enabledToolLevels": ["L0"]})
    await harness.turn_done()
    names = [t["function"]["name"] for t in model.requests[0]["body"]["tools"]]
    assert names and not any(n.startswith("mcp__") for n in names)


async def test_a_call_of_a_down_servers_tool_tells_the_model_the_server_is_unavailable(start, model, settings):
    from tests.support.mcp_server import free_port

    settings.write({"gone": {"url": f"http://127.0.0.1:{free_port()}/mcp"}})
    harness = await start()
    # The model calls a tool it saw in an earlier turn; the server is down now.
    model.add(Reply(tool_calls=[("mcp__gone__echo", {"text": "x"})]), Reply(text="It is down."))
    thread = await harness.new_thread()
    await harness.submit(thread, "try")
    await harness.turn_done()
    [result] = results(harness, thread)
    assert result["code"] == "unavailable"
    sent = last_tool_result_text(model.requests[1]["body"])
    assert "MCP server 'gone' is unavailable (mcp_unreachable)" in sent and "no tool named" not in sent


async def test_progress_from_the_server_reaches_the_tool_card(start, model, policy, settings):
    from tests.support.mcp_server import McpTestServer

    with McpTestServer(extras=True) as server:
        settings.write({"local": {"url": server.url}})
        policy(rules=[{"tool": "mcp__local__steps", "origin": server.origin, "verdict": "allow"}])
        harness = await start()
        model.add(Reply(tool_calls=[("mcp__local__steps", {"count": 3})]), Reply(text="Done."))
        thread = await harness.new_thread()
        await harness.submit(thread, "go")
        await harness.turn_done()
        lines = [e["delta"].get("toolProgress") for e in harness.recorder.of("item.delta")]
        assert "3/3 — step 3" in lines, lines
