"""An MCP server's question to the user (elicitation) through the engine: declared to the server
only where its settings allow it, shown as an interaction card with the server's name and its
form, and answered as the spec says (accept with the content, decline, cancel), with the call
waiting for the user beyond its own timeout. The real SDK server asks (`confirm_delete`), a fake
model drives the turn over real HTTP, the test answers as the side panel does."""

from __future__ import annotations

import json

import pytest

from host.mcp.elicitation import checked, fields_of
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


async def asked_turn(tmp_path, mcp_server, answer, *, elicitation=True, timeout=60):
    """One turn in which the model calls `confirm_delete`; `answer(harness, request)` answers
    the card (None: no card is expected). The tool's result as the model read it."""
    from host.mcp.config import load_mcp_config

    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"local": {
        "url": mcp_server.url, "elicitation": elicitation, "timeoutSeconds": timeout}}}), encoding="utf-8")
    manager = McpManager(lambda: load_mcp_config(tmp_path / "mcp.json"),
                         key_store=lambda: FileKeyStore(tmp_path / "keys.json"))
    with FakeOpenAI() as fake:
        fake.add(Reply(tool_calls=[("mcp__local__confirm_delete", {"name": "report.pdf"})]), Reply(text="Done."))
        h = Harness(tmp_path, fake.url, services={"mcp": McpTools(manager)})
        await h.start()
        try:
            thread = await h.new_thread(permissionPolicy="auto")
            await h.submit(thread, "delete report.pdf")
            if answer is not None:
                asked = await h.recorder.wait_for("interaction.request")
                await answer(h, asked)
                resolved = await h.recorder.wait_for("interaction.resolved")
                assert resolved["interactionId"] == asked["interactionId"]
            assert (await h.turn_done())["stopReason"] == "end"
        finally:
            await h.stop()
            await manager.close()
        return tool_results(fake.requests[1]["body"])[-1]


async def respond(h, asked, response):
    ack = await h.op({"type": "interaction.response", "interactionId": asked["interactionId"], "response": response})
    assert ack["type"] == "command.ack", ack
    return ack


async def test_the_question_is_a_card_and_an_accepted_answer_reaches_the_server(tmp_path, mcp_server):
    seen = {}

    async def accept(h, asked):
        seen.update(asked["request"])
        await respond(h, asked, {"kind": "submit", "value": {"sure": True}})
        # The first answer stands.
        again = await h.op({"type": "interaction.response", "interactionId": asked["interactionId"],
                            "response": {"kind": "cancel"}})
        assert again["type"] == "command.rejected", again

    text = await asked_turn(tmp_path, mcp_server, accept)
    assert seen["kind"] == "elicitation" and seen["server"] == "local" and seen["message"] == "Delete report.pdf?"
    assert seen["fields"] == [{"name": "sure", "type": "boolean", "required": True, "title": "Sure"}]
    assert "elicitation answered: accept" in text


@pytest.mark.parametrize("response, action", [({"kind": "cancel", "note": "decline"}, "decline"),
                                              ({"kind": "cancel"}, "cancel"),
                                              ({"kind": "submit", "value": {"sure": "yes"}}, "cancel")])
async def test_decline_cancel_and_an_answer_that_does_not_fit_the_form(tmp_path, mcp_server, response, action):
    async def answer(h, asked):
        await respond(h, asked, response)

    assert f"elicitation answered: {action}" in await asked_turn(tmp_path, mcp_server, answer)


async def test_the_user_may_take_longer_than_the_calls_timeout(tmp_path, mcp_server):
    import asyncio

    async def slowly(h, asked):
        await asyncio.sleep(4.5)  # over twice the server's 2 s timeout
        await respond(h, asked, {"kind": "submit", "value": {"sure": False}})

    assert "elicitation answered: accept" in await asked_turn(tmp_path, mcp_server, slowly, timeout=2)


async def test_without_the_setting_the_capability_is_not_declared_and_nothing_is_asked(tmp_path, mcp_server):
    text = await asked_turn(tmp_path, mcp_server, None, elicitation=False)
    assert "elicitation" in text and "does not support" in text


def test_the_form_is_read_from_a_flat_schema_only_and_answers_are_checked_against_it():
    schema = {"type": "object", "required": ["email"], "properties": {
        "email": {"type": "string", "format": "email", "title": "E-mail"},
        "plan": {"type": "string", "enum": ["free", "pro"], "enumNames": ["Free", "Pro"]},
        "seats": {"type": "integer", "minimum": 1, "maximum": 10}, "notify": {"type": "boolean", "default": True}}}
    fields = fields_of(schema)
    assert [f["name"] for f in fields] == ["email", "plan", "seats", "notify"]
    assert fields[1]["enumNames"] == ["Free", "Pro"] and fields[2]["maximum"] == 10
    assert checked(fields, {"email": "a@b.example", "plan": "pro", "seats": 3}) == {"email": "a@b.example", "plan": "pro",
                                                                                  "seats": 3}
    for bad in ({"plan": "pro"}, {"email": "a@b.example", "plan": "gold"}, {"email": "a@b.example", "seats": 11},
                {"email": "a@b.example", "seats": 2.5}, {"email": "a@b.example", "extra": 1}, ["not", "an", "object"]):
        assert checked(fields, bad) is None, bad
    assert fields_of({"type": "object", "properties": {"nested": {"type": "object"}}}) is None
    assert fields_of({"type": "object", "properties": {}}) is None


def test_a_request_goes_to_a_thread_only_when_every_call_in_flight_is_that_threads():
    from host.mcp.connection import asker_in_flight

    def asker(thread: str):
        async def ask(request):
            return {}
        ask.thread_id = thread
        return ask

    one, two, other = asker("t1"), asker("t1"), asker("t2")
    assert asker_in_flight([]) == (None, None, None)
    assert asker_in_flight([(one, "p1", "m1")]) == (one, "p1", "m1")
    assert asker_in_flight([(one, "p1", "m1"), (two, "p2", "m2")]) == (two, "p2", "m2")  # the same thread
    assert asker_in_flight([(one, "p1", "m1"), (other, "p3", "m3")]) == (None, None, None)  # whose?
    assert asker_in_flight([(one, "p1", "m1"), (None, "p4", None)]) == (None, None, None)  # a REPL call too


async def test_the_users_time_stops_the_calls_clock_and_its_stretched_limit():
    """The clock is stopped for as long as a question is open, whatever its period or the
    timeout's length; once answered, the call has its whole timeout again (and no more)."""
    import asyncio

    from host.mcp.config import ServerConfig
    from host.mcp.connection import Connection
    from host.mcp.errors import McpFailure
    from host.mcp.progress import ProgressLine, clock_stopped

    connection = Connection(ServerConfig(id="local", url="http://127.0.0.1:9/mcp"), None)

    async def call(asked_for: float, then: float) -> str:
        progress = ProgressLine(None)

        async def work() -> str:
            with clock_stopped(progress):
                await asyncio.sleep(asked_for)
            await asyncio.sleep(then)
            return "answered"

        return await connection._guarded(work(), 0.2, "tool 'x'", progress=progress)

    # Asked for 15 timeouts, beyond the stretched limit of 10, then well within one.
    assert await call(3.0, 0.05) == "answered"
    with pytest.raises(McpFailure) as failure:  # after the answer, the timeout counts again
        await call(0.3, 0.6)
    assert failure.value.code == "mcp_timeout"


async def test_a_server_asking_again_and_again_cannot_hold_a_call_open_for_good(monkeypatch):
    """Questions are free only up to an allowance in all: past it, the call ends as timed out
    even while a question is open."""
    import asyncio
    import time

    from host.mcp import connection as module
    from host.mcp.config import ServerConfig
    from host.mcp.errors import McpFailure
    from host.mcp.progress import ProgressLine, clock_stopped

    monkeypatch.setattr(module, "QUESTIONS_ALLOWANCE_S", 0.6)
    connection = module.Connection(ServerConfig(id="local", url="http://127.0.0.1:9/mcp"), None)
    progress = ProgressLine(None)

    async def asks_forever() -> None:
        while True:
            with clock_stopped(progress):
                await asyncio.sleep(0.25)

    started = time.monotonic()
    with pytest.raises(McpFailure) as failure:  # 0.1 s timeout, 1 s stretched limit, 0.6 s of questions
        await connection._guarded(asks_forever(), 0.1, "tool 'x'", progress=progress)
    assert failure.value.code == "mcp_timeout" and time.monotonic() - started < 5
