"""The MCP service against a real MCP server over Streamable HTTP: tool exposure, calls,
server-side failures, dead servers, timeouts, cancellation and bearer tokens. Calls take the
host's one path (router and authorizer) with a gatekeeper that allows everything and records
what it judged."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from host.calls.authorize import Authorizer, Context, Ran
from host.calls.router import Router
from host.gatekeeper.decision import Decision
from host.mcp.auth import store_token
from host.mcp.service import McpTools
from host.providers.model import ToolSchema
from host.tools.call import ToolCall
from host.tools.failure import ToolFailure
from host.tools.result import ToolResult
from host.tools.schema import provider_schema
from tests.support.engine_harness import FakeExecutor
from tests.support.mcp_server import McpTestServer, free_port
from tests.support.waiting import until

ToolError = ToolFailure


class AllowAll:
    """A gatekeeper that allows every call and keeps the checks it was asked."""

    def __init__(self) -> None:
        self.checks: list[Any] = []

    def check(self, request: Any) -> Decision:
        self.checks.append(request)
        return Decision(verdict="allow", code="test_allow", reason="allowed by the test",
                        target_origin=request.origin)

    def record_outcome(self, **_: Any) -> None:
        return None


class Steps:
    def __init__(self, seen: list[ToolCall]):
        self.seen = seen

    async def approve(self, call, judgement):  # never asked: everything is allowed
        raise AssertionError("no approval expected")

    def allowed(self, call) -> None:
        return None

    def dispatching(self, call, judgement, approved) -> None:
        self.seen.append(call)


class Tools:
    """The MCP service in a router beside the engine tests' scripted browser."""

    def __init__(self, manager, browser: FakeExecutor | None = None):
        self.manager = manager
        self.router = Router({"browser": browser or FakeExecutor(), "mcp": McpTools(manager)})
        self.authorizer = Authorizer(self.router, AllowAll())

    @property
    def inner(self):
        return self.router.services["browser"]

    def tools(self) -> list[ToolSchema]:
        return [ToolSchema(s.name, s.description, provider_schema(s)) for s in self.router.offered()]

    async def refresh_tools(self, thread_id: str) -> None:
        await self.router.refresh(thread_id)

    async def prepare(self, thread_id: str, tool: str, params: dict[str, Any]) -> ToolCall:
        return await self.router.resolve(self.router.decode(thread_id, tool, params))

    async def execute(self, thread_id: str, call: ToolCall, seen: list[ToolCall]) -> ToolResult:
        ending = await self.authorizer.dispatch(call, Context(thread_id), Steps(seen), None)
        if not isinstance(ending, Ran):
            raise ending.failure()
        return ending.result


@pytest.fixture
def executor(manager):
    return Tools(manager)


def authorizer(seen: list[ToolCall]) -> list[ToolCall]:
    return seen


async def run(executor, tool, params, seen=None):
    prepared = await executor.prepare("t1", tool, params)
    return await executor.execute("t1", prepared, seen if seen is not None else [])


async def test_server_tools_are_offered_under_mcp_names_with_their_schemas(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    await executor.refresh_tools("t1")
    names = [s.name for s in executor.tools()]
    # The browser's tools (from the catalog, in its order) come first.
    assert names[:6] == ["tabs_list", "navigate", "read_page", "extract", "click", "type"]
    mcp = {s.name: s for s in executor.tools() if s.name.startswith("mcp__")}
    assert sorted(mcp) == ["mcp__local__add", "mcp__local__boom", "mcp__local__echo", "mcp__local__lookup",
                           "mcp__local__slow"]
    add = mcp["mcp__local__add"]
    assert add.parameters["type"] == "object" and add.parameters["required"] == ["a", "b"]
    assert add.description == "[MCP server 'local'] \"Add two integers.\""  # the server's words, quoted
    [skipped] = executor.manager.servers["local"].skipped
    assert skipped.tool == "dotted.name" and "not a valid model tool name" in skipped.reason


async def test_the_title_is_the_label_and_annotations_are_not_believed(settings, executor, mcp_server):
    from host.tools.catalog import lookup

    settings.write({"local": {"url": mcp_server.url}})
    await executor.refresh_tools("t1")
    spec = lookup("mcp__local__lookup")  # readOnlyHint=True on the server
    assert (spec.label, spec.effects, spec.level, spec.category) == ("Look up", "write", "mcp", "mcp")
    assert (spec.recovery, spec.result_trust, spec.result_provenance) == ("never-retry", "untrusted", "mcp")


async def test_an_allow_list_limits_what_is_offered(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url, "tools": ["echo"]}})
    await executor.refresh_tools("t1")
    assert [t.name for t in executor.manager.tools()] == ["mcp__local__echo"]
    with pytest.raises(ToolError) as err:
        await executor.prepare("t1", "mcp__local__add", {"a": 1, "b": 2})
    assert err.value.code == "unknown_tool"


async def test_a_call_runs_at_the_server_origin_and_returns_its_text(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    seen: list[ToolCall] = []
    outcome = await run(executor, "mcp__local__add", {"a": 2, "b": 40}, seen)  # connects on first need
    assert (outcome.ok, outcome.text) == (True, "42")
    assert outcome.details == {"server": "local", "tool": "add", "isError": False}
    assert [p.origin for p in seen] == [mcp_server.origin]  # authorised before the call, at the server origin


async def test_parameters_are_checked_against_the_schema_before_approval(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    await executor.refresh_tools("t1")
    with pytest.raises(ToolError) as err:
        await executor.prepare("t1", "mcp__local__add", {"a": "two"})
    assert err.value.code == "invalid_params"
    assert err.value.message == "Invalid parameters for mcp__local__add: $.b: required; $.a: expected integer, got string"


async def test_a_tool_error_is_a_failed_outcome_with_the_servers_text(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    outcome = await run(executor, "mcp__local__boom", {"text": "bad input"}, [])
    assert outcome.ok is False and outcome.code == "mcp_tool_error" and "boom: bad input" in outcome.text
    assert outcome.details["isError"] is True


async def test_other_tools_and_turn_hooks_reach_their_own_service(manager):
    class WithExtras(FakeExecutor):
        def hand_over(self, thread_id):
            self.handed = thread_id

    extras = Tools(manager, WithExtras())
    extras.router.hand_over("t9")
    assert extras.inner.handed == "t9"
    outcome = await run(extras, "click", {"ref": "s1_1_2", "element": "Buy"})
    assert outcome.text == "[tabId=7] click done" and extras.inner.executed == [("click", {"ref": "s1_1_2",
                                                                                              "element": "Buy"})]


async def test_a_dead_server_loses_its_tools_and_its_calls_fail_cleanly(settings, executor, mcp_server):
    dead = f"http://127.0.0.1:{free_port()}/mcp"
    settings.write({"local": {"url": mcp_server.url}, "gone": {"url": dead}})
    await executor.refresh_tools("t1")  # does not raise
    assert {t.server for t in executor.manager.tools()} == {"local"}
    status = {s["id"]: s for s in executor.manager.status()["servers"]}
    assert status["gone"]["state"] == "failed" and status["gone"]["lastError"]["code"] == "mcp_unreachable"
    assert status["local"]["state"] == "connected"
    with pytest.raises(ToolError) as err:  # a first call tries it again: still down, nothing sent
        await executor.prepare("t1", "mcp__gone__add", {"a": 1, "b": 2})
    assert err.value.code == "mcp_unreachable" and "MCP server 'gone' is not available (mcp_unreachable)" in err.value.message


async def test_a_server_that_dies_after_connecting_fails_the_call_and_comes_back(settings, executor):
    with McpTestServer() as server:
        settings.write({"solo": {"url": server.url}})
        assert (await run(executor, "mcp__solo__echo", {"text": "hi"})).text == "hi"
    outcome = await run(executor, "mcp__solo__echo", {"text": "again"})
    assert outcome.ok is False and outcome.code == "mcp_unreachable"
    assert executor.manager.status()["servers"][0]["state"] == "failed"


async def test_a_slow_call_times_out_and_is_cancelled_on_the_server(settings, executor, mcp_server):
    # The timeout also bounds the call after it, one HTTP round trip right after the cancellation.
    settings.write({"local": {"url": mcp_server.url, "timeoutSeconds": 2}})
    before = len(mcp_server.events)
    outcome = await run(executor, "mcp__local__slow", {"seconds": 30})
    assert outcome.ok is False and outcome.code == "mcp_timeout" and outcome.effect_may_have_occurred
    await until(lambda: "slow:cancelled" in mcp_server.events[before:], 10, "the server to cancel the call")
    assert (await run(executor, "mcp__local__add", {"a": 1, "b": 1})).text == "2"  # the session still works


async def test_an_interrupted_call_is_cancelled_on_the_server(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    before = len(mcp_server.events)
    task = asyncio.ensure_future(run(executor, "mcp__local__slow", {"seconds": 30}))
    await until(lambda: "slow:start" in mcp_server.events[before:], 10, "the server to start the call")
    task.cancel()  # what an interrupted turn does to its running call
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: "slow:cancelled" in mcp_server.events[before:], 10, "the server to cancel the call")
    assert "slow:done" not in mcp_server.events[before:]


async def test_the_bearer_token_comes_from_the_key_store(settings, executor, key_store):
    with McpTestServer(token="s3cret") as server:
        settings.write({"auth": {"url": server.url}})
        await executor.refresh_tools("t1")
        status = executor.manager.status()["servers"][0]
        assert status["lastError"]["code"] == "mcp_auth_failed" and "HTTP 401" in status["lastError"]["message"]
        store_token(key_store, "auth", server.url, "s3cret")
        await executor.manager.reconnect("auth")
        outcome = await run(executor, "mcp__auth__echo", {"text": "x"})
        assert outcome.text == "x"
        assert server.authorizations[-1] == "Bearer s3cret"


async def test_a_stored_token_is_not_sent_to_another_origin(settings, executor, key_store):
    with McpTestServer(token="s3cret") as first, McpTestServer(token="s3cret") as second:
        settings.write({"auth": {"url": first.url}})
        store_token(key_store, "auth", first.url, "s3cret")
        assert (await run(executor, "mcp__auth__echo", {"text": "x"})).text == "x"
        # mcp.json edited by hand: the same id now points at another origin (another port).
        settings.write({"auth": {"url": second.url}})
        await executor.refresh_tools("t1")
        status = executor.manager.status()["servers"][0]
        assert status["lastError"]["code"] == "mcp_token_origin_changed", status
        assert second.authorizations == []  # the token never went there
        store_token(key_store, "auth", second.url, "s3cret")  # given again, for the new origin
        await executor.manager.reconnect("auth")
        assert (await run(executor, "mcp__auth__echo", {"text": "y"})).text == "y"
        assert second.authorizations[-1] == "Bearer s3cret"


async def test_the_bearer_token_can_come_from_the_environment(settings, executor, monkeypatch):
    monkeypatch.setenv("TW_TEST_MCP_TOKEN", "from-env")
    with McpTestServer(token="from-env") as server:
        settings.write({"env": {"url": server.url, "bearerTokenEnv": "TW_TEST_MCP_TOKEN"}})
        assert (await run(executor, "mcp__env__add", {"a": 1, "b": 2})).text == "3"
        assert set(server.authorizations) == {"Bearer from-env"}


async def test_a_turn_start_that_changes_what_pages_show_tells_them(settings, executor, mcp_server):
    changes = []
    executor.manager.on_change = lambda: changes.append(executor.manager.status()["servers"][0]["state"])
    settings.write({"local": {"url": mcp_server.url}})
    await executor.refresh_tools("t1")  # connects and lists: a change
    assert changes == ["connected"]
    await executor.refresh_tools("t2")  # nothing new: no message
    assert changes == ["connected"]


async def test_a_server_moved_after_the_check_gets_nothing(settings, executor, mcp_server):
    with McpTestServer() as elsewhere:
        settings.write({"local": {"url": mcp_server.url}})
        prepared = await executor.prepare("t1", "mcp__local__lookup", {"q": "x"})  # judged (and approved) here
        settings.write({"local": {"url": elsewhere.url}})  # then mcp.json points the id at another origin
        await executor.manager.reload()
        seen = []
        with pytest.raises(ToolError) as err:
            await executor.execute("t1", prepared, authorizer(seen))
        assert err.value.code == "target_changed" and seen == []
        assert not any(e.startswith("lookup") for e in elsewhere.events + mcp_server.events)


async def test_a_tool_taken_off_the_allow_list_after_the_check_is_not_called(settings, executor, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    prepared = await executor.prepare("t1", "mcp__local__lookup", {"q": "late"})
    settings.write({"local": {"url": mcp_server.url, "tools": ["add"]}})
    await executor.manager.reload()
    before = list(mcp_server.events)
    outcome = await executor.execute("t1", prepared, authorizer([]))
    assert not outcome.ok and outcome.code == "mcp_not_configured" and outcome.dispatched is False
    assert mcp_server.events == before
