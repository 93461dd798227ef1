"""An MCP server's request for a model answer (sampling) through the engine: declared only where
the server's settings allow it, shown on a card with the exact request, sent with the thread's
own model connection once allowed (its tokens counted in the turn) and refused otherwise. The
real SDK server asks (`ask_model`), a fake model answers over real HTTP."""

from __future__ import annotations

import json

import pytest

from host.mcp.manager import McpManager
from host.mcp.service import McpTools
from host.providers.secrets import FileKeyStore
from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeOpenAI, Reply, tool_results
from tests.support.mcp_server import McpTestServer


@pytest.fixture(scope="module")
def mcp_server():
    with McpTestServer(sessions=404, extras=True) as server:
        yield server


async def sampled_turn(tmp_path, mcp_server, response, *, sampling=True):
    """One turn in which the model calls `ask_model`; the card (if any) is answered with
    `response`. (the card's request, the fake model's requests, the tool's result, token events)."""
    from host.mcp.config import load_mcp_config

    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"local": {"url": mcp_server.url, "sampling": sampling}}}),
                                       encoding="utf-8")
    manager = McpManager(lambda: load_mcp_config(tmp_path / "mcp.json"),
                         key_store=lambda: FileKeyStore(tmp_path / "keys.json"))
    with FakeOpenAI() as fake:
        fake.add(Reply(tool_calls=[("mcp__local__ask_model", {"question": "Capital of France?"})]),
                 Reply(text="Paris.", usage=(30, 4)), Reply(text="Done."))
        h = Harness(tmp_path, fake.url, services={"mcp": McpTools(manager)})
        await h.start()
        request = None
        try:
            thread = await h.new_thread(permissionPolicy="auto")
            await h.submit(thread, "ask the server")
            if response is not None:
                asked = await h.recorder.wait_for("interaction.request")
                request = asked["request"]
                ack = await h.op({"type": "interaction.response", "interactionId": asked["interactionId"],
                                  "response": response})
                assert ack["type"] == "command.ack", ack
            assert (await h.turn_done())["stopReason"] == "end"
            usage = h.recorder.of("token.usage")
        finally:
            await h.stop()
            await manager.close()
        bodies = [r["body"] for r in fake.requests]
        return request, bodies, tool_results(bodies[-1])[-1], usage


async def test_an_allowed_request_is_answered_by_the_threads_model_and_counted(tmp_path, mcp_server):
    request, bodies, result, usage = await sampled_turn(tmp_path, mcp_server, {"kind": "submit"})
    assert request == {"kind": "sampling", "server": "local", "system": "", "maxTokens": 10,
                       "messages": [{"role": "user", "text": "Capital of France?"}]}
    # The second model request is the server's, exactly as shown: its message, its cap, no tools.
    sampled = bodies[1]
    assert sampled["messages"][-1] == {"role": "user", "content": "Capital of France?"}
    assert sampled.get("max_tokens") == 10 and "tools" not in sampled
    assert "Paris." in result and "<<<web_content_" in result  # the server's answer is fenced as ever
    assert any(u["usage"]["input"] == 30 and u["usage"]["output"] == 4 for u in usage)


async def test_a_declined_request_never_reaches_the_model(tmp_path, mcp_server):
    _, bodies, result, _ = await sampled_turn(tmp_path, mcp_server, {"kind": "cancel"})
    # Two model requests, both the agent's own: none was the server's.
    assert len(bodies) == 2 and all(b["messages"][0]["content"].startswith("You are Tabwarden") for b in bodies)
    assert "rejected" in result.lower()


async def test_without_the_setting_nothing_is_asked_and_the_server_is_told(tmp_path, mcp_server):
    _, bodies, result, _ = await sampled_turn(tmp_path, mcp_server, None, sampling=False)
    assert "sampling" in result and "does not support" in result
