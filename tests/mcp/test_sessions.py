"""Sessions with a real MCP server that restarts, goes away or refuses the credentials: a new
session is started when the server no longer knows ours, `mcp.servers` says what is true, and
the model is told that a server is unavailable rather than that its tool does not exist."""

from __future__ import annotations

import pytest

from host.mcp.errors import McpFailure, classify
from tests.mcp.test_client import Tools, run
from tests.support.mcp_server import McpTestServer


@pytest.fixture
def executor(manager):
    return Tools(manager)


def states(manager):
    return {s["id"]: (s["state"], (s["lastError"] or {}).get("code")) for s in manager.status()["servers"]}


@pytest.mark.parametrize("refusal", [404, 400])
async def test_a_restarted_server_gets_a_new_session_and_the_call_goes_through(settings, executor, refusal):
    with McpTestServer(sessions=refusal) as server:
        settings.write({"solo": {"url": server.url}})
        assert (await run(executor, "mcp__solo__echo", {"text": "before"})).text == "before"
        old = executor.manager.servers["solo"].connection
        server.restart()  # same port, sessions forgotten: the next request with our session gets 404
        outcome = await run(executor, "mcp__solo__echo", {"text": "after"})
        assert (outcome.ok, outcome.text) == (True, "after")
        assert executor.manager.servers["solo"].connection is not old
        assert states(executor.manager) == {"solo": ("connected", None)}
        assert server.sessions[-1] is not None and server.sessions[-1] != server.sessions[1]


async def test_a_server_back_after_an_outage_offers_its_tools_at_the_next_turn(settings, executor):
    now = [1000.0]
    executor.manager.clock = lambda: now[0]
    with McpTestServer() as server:
        settings.write({"solo": {"url": server.url}})
        await executor.refresh_tools("t1")
        server.stop()
        outcome = await run(executor, "mcp__solo__echo", {"text": "x"})
        assert outcome.ok is False and outcome.code == "mcp_unreachable"
        assert states(executor.manager) == {"solo": ("failed", "mcp_unreachable")}
        assert executor.router.unavailable("mcp__solo__echo") == \
            "MCP server 'solo' is unavailable (mcp_unreachable); its tools cannot be called now"
        server.restart()
        now[0] += 3  # seconds, not the half minute a dead server used to be left alone
        await executor.refresh_tools("t2")
        assert "mcp__solo__echo" in [t.name for t in executor.tools()]
        assert states(executor.manager) == {"solo": ("connected", None)}
        assert executor.router.unavailable("mcp__solo__echo") is None


def test_a_refused_session_is_told_apart_from_other_errors():
    class RpcError(Exception):
        def __init__(self, code, message):
            super().__init__(message)
            self.code, self.message = code, message

    lost = classify(RpcError(-32600, "Bad Request: No valid session ID provided"), "s", [200, 400])
    assert lost.code == "mcp_session_expired" and "HTTP 400" in lost.message
    assert classify(RpcError(-32600, "Session terminated"), "s", [404]).code == "mcp_session_expired"
    assert classify(RpcError(-32602, "bad params"), "s", [400]).code == "mcp_protocol_error"
    assert classify(RpcError(-32600, "Session terminated"), "s", [200]).code == "mcp_protocol_error"
    assert isinstance(lost, McpFailure) and lost.sent is False


@pytest.mark.parametrize("corrupt,said", [
    ("not-json", "MCP server 'solo' sent a malformed answer: Failed to parse JSON response"),
    ("bad-result", "MCP server 'solo' sent a malformed answer: CallToolResult.content: Input should be a valid list"),
    ("wrong-type", "MCP server 'solo': Unexpected content type: text/html"),
])
async def test_a_malformed_answer_is_a_structured_error_naming_the_server(settings, executor, corrupt, said):
    with McpTestServer() as server:
        settings.write({"solo": {"url": server.url, "timeoutSeconds": 5}})
        await executor.refresh_tools("t1")
        server.corrupt = corrupt
        outcome = await run(executor, "mcp__solo__echo", {"text": "x"})
        assert outcome.ok is False and outcome.code == "mcp_protocol_error", outcome
        message = outcome.error.message
        assert message.startswith(said) and "\n" not in message and len(message) < 400, message
        assert outcome.effect_may_have_occurred  # it was sent: the server may have acted


async def test_a_server_back_mid_turn_is_revived_by_a_call_of_its_tool(settings, executor):
    now = [1000.0]
    executor.manager.clock = lambda: now[0]
    with McpTestServer() as server:
        settings.write({"solo": {"url": server.url}})
        server.stop()
        await executor.refresh_tools("t1")  # the turn starts while it is down
        assert executor.router.unavailable("mcp__solo__echo") is not None
        server.restart()
        await executor.router.revive("mcp__solo__echo")  # too soon after the failure: left alone
        assert "mcp__solo__echo" not in executor.router.offered_names()
        now[0] += 3
        await executor.router.revive("mcp__solo__echo")
        assert "mcp__solo__echo" in executor.router.offered_names()
        assert (await run(executor, "mcp__solo__echo", {"text": "back"})).text == "back"
