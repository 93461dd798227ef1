"""The MCP client against `@modelcontextprotocol/server-everything` from npm, the reference
server: its tools and results, and a restart mid-session (it answers our old session with 400
"No valid session ID provided"). Skipped, with the reason, when npx cannot fetch or start it."""

from __future__ import annotations

import pytest

from tests.mcp.test_client import Tools, run
from tests.support.everything_server import EverythingServer, running_from_npm


@pytest.fixture(scope="module")
def everything():
    yield from running_from_npm(EverythingServer(), "the reference MCP server")


@pytest.fixture
def executor(manager, settings, everything):
    settings.write({"ev": {"url": everything.url}})
    return Tools(manager)


def status(manager):
    [server] = manager.status()["servers"]
    return server["state"], (server["lastError"] or {}).get("code")


async def test_its_tools_are_offered_and_called(executor):
    await executor.refresh_tools("t1")
    names = {t.name for t in executor.tools()}
    assert {"mcp__ev__echo", "mcp__ev__get-sum", "mcp__ev__get-tiny-image"} <= names
    outcome = await run(executor, "mcp__ev__get-sum", {"a": 2, "b": 40})
    assert (outcome.ok, outcome.text) == (True, "The sum of 2 and 40 is 42.")


async def test_a_restart_mid_session_is_followed_by_a_new_session(executor, everything):
    assert (await run(executor, "mcp__ev__echo", {"message": "one"})).text == "Echo: one"
    first = executor.manager.servers["ev"].connection
    everything.restart()
    outcome = await run(executor, "mcp__ev__echo", {"message": "two"})
    assert (outcome.ok, outcome.text) == (True, "Echo: two")
    assert executor.manager.servers["ev"].connection is not first
    assert status(executor.manager) == ("connected", None)


async def test_an_outage_says_unavailable_and_the_tools_return_with_the_server(executor, everything):
    now = [0.0]
    executor.manager.clock = lambda: now[0]
    await executor.refresh_tools("t1")
    everything.stop()
    outcome = await run(executor, "mcp__ev__echo", {"message": "lost"})
    assert outcome.ok is False and outcome.code in ("mcp_unreachable", "mcp_session_expired")
    assert status(executor.manager)[0] == "failed"
    await executor.refresh_tools("t2")
    assert not any(t.name.startswith("mcp__ev__") for t in executor.tools())
    assert "is unavailable" in executor.router.unavailable("mcp__ev__echo")
    everything.start()
    now[0] += 3
    await executor.refresh_tools("t3")
    assert "mcp__ev__echo" in {t.name for t in executor.tools()}
    assert status(executor.manager) == ("connected", None)
    assert (await run(executor, "mcp__ev__echo", {"message": "back"})).text == "Echo: back"


async def test_progress_reaches_the_card_and_keeps_the_call_alive(executor, settings, everything):
    from host.tools.progress import reset_progress_sink, set_progress_sink

    # Each step takes 0.5 s and the call 5 s in all, over a 2 s timeout: progress keeps it going
    # (a report may come late on a busy machine; four times its period would still be in time).
    settings.write({"ev": {"url": everything.url, "timeoutSeconds": 2}})
    lines: list[str] = []
    token = set_progress_sink(lines.append)
    try:
        outcome = await run(executor, "mcp__ev__trigger-long-running-operation", {"duration": 5, "steps": 10})
    finally:
        reset_progress_sink(token)
    assert outcome.ok, outcome
    assert lines[:2] == ["1/10", "2/10"] and lines[-1] == "10/10"


async def test_without_progress_the_timeout_still_holds(executor, settings, everything):
    # One step of 3 s: its only progress comes at the end, after the 1 s timeout.
    settings.write({"ev": {"url": everything.url, "timeoutSeconds": 1}})
    outcome = await run(executor, "mcp__ev__trigger-long-running-operation", {"duration": 3, "steps": 1})
    assert outcome.ok is False and outcome.code == "mcp_timeout"


async def test_images_go_to_the_card_and_the_model_is_told_so(executor):
    outcome = await run(executor, "mcp__ev__get-tiny-image", {})
    assert outcome.ok
    [image] = outcome.details["images"]
    assert image["mimeType"] == "image/png" and len(image["data"]) > 100
    assert "[image image/png" in outcome.text and "shown to the user]" in outcome.text
    assert image["data"] not in outcome.text


async def test_content_for_the_user_only_is_not_sent_to_the_model(executor):
    outcome = await run(executor, "mcp__ev__get-annotated-message", {"messageType": "success", "includeImage": True})
    assert outcome.ok
    assert "Operation completed successfully" in outcome.details["forUser"]
    assert "Operation completed successfully" not in outcome.text
    assert outcome.details["images"] and "image" not in outcome.details["forUser"]
    debug = await run(executor, "mcp__ev__get-annotated-message", {"messageType": "debug"})
    assert "forUser" not in debug.details and debug.text  # for the assistant: the model reads it


async def test_embedded_text_resources_are_included(executor):
    outcome = await run(executor, "mcp__ev__get-resource-reference", {"resourceType": "Text", "resourceId": 2})
    assert "[resource demo://resource/dynamic/text/2]\nResource 2: This is a plaintext resource" in outcome.text


async def test_a_restart_shows_in_the_state_before_any_call(executor, everything):
    from tests.support.waiting import until

    await executor.refresh_tools("t1")
    assert status(executor.manager) == ("connected", None)
    everything.restart()
    # The SDK's event stream (GET) comes back to a server that no longer knows the session.
    await until(lambda: status(executor.manager)[0] != "connected", 20, "the state to follow the restart")
    assert status(executor.manager) == ("failed", "mcp_session_expired")
    await executor.refresh_tools("t2")  # a turn start: a new session
    assert status(executor.manager) == ("connected", None)
    assert (await run(executor, "mcp__ev__echo", {"message": "fresh"})).text == "Echo: fresh"
