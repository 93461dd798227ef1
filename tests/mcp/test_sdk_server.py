"""The MCP Python SDK's own server (tests/support/mcp_server.py, extras on) through the router:
structured output, an image, and a server that asks for elicitation, which the host does not
offer and says so."""

from __future__ import annotations

import base64
import json

import pytest

from host.calls.router import Router
from host.mcp.service import McpTools
from tests.support.engine_harness import FakeExecutor
from tests.support.mcp_server import CHIME_WAV, RED_PIXEL_PNG, McpTestServer


@pytest.fixture(scope="module")
def sdk_server():
    # With sessions: a server can only ask the client something over a session's back-channel.
    with McpTestServer(sessions=404, extras=True) as server:
        yield server


@pytest.fixture
async def router(settings, manager, sdk_server):
    settings.write({"sdk": {"url": sdk_server.url}})
    routed = Router({"browser": FakeExecutor(), "mcp": McpTools(manager)})
    await routed.refresh("t1")
    return routed


async def run(router, tool, params):
    return await router.run(await router.resolve(router.decode("t1", tool, params)))


async def test_structured_output_is_what_the_model_reads(router):
    outcome = await run(router, "mcp__sdk__forecast", {"city": "Oslo"})
    assert outcome.ok, outcome
    assert json.loads(outcome.text[outcome.text.index("{"):outcome.text.rindex("}") + 1]) == {
        "city": "Oslo", "celsius": 21.5, "sky": "clear"}


async def test_an_image_is_kept_for_the_card_and_the_model(router):
    outcome = await run(router, "mcp__sdk__picture", {})
    assert outcome.ok and "one red pixel" in outcome.text and "[image image/png" in outcome.text
    assert outcome.details["images"] == [{"mimeType": "image/png", "data": base64.b64encode(RED_PIXEL_PNG).decode()}]


async def test_a_server_asking_for_elicitation_gets_a_clear_unsupported(router, sdk_server):
    outcome = await run(router, "mcp__sdk__confirm_delete", {"name": "report.pdf"})
    assert outcome.ok is False and outcome.code == "unsupported", outcome
    assert "elicitation" in outcome.text and "does not support" in outcome.text


async def test_a_link_to_an_image_the_server_serves_is_read_and_passed_on_as_an_image(router):
    outcome = await run(router, "mcp__sdk__chart_link", {})
    assert outcome.ok, outcome
    # Read with resources/read and kept as an image (the card shows it; a model that takes
    # images gets it); a link that cannot be read stays a link.
    assert outcome.details["images"] == [{"mimeType": "image/png", "data": base64.b64encode(RED_PIXEL_PNG).decode()}]
    assert "[resource link pic://chart.png (chart)]\n[image image/png" in outcome.text
    assert "[resource link pic://missing.png (missing)]" in outcome.text and outcome.text.count("[image ") == 1


async def test_audio_is_played_to_the_user_and_named_for_the_model(router):
    outcome = await run(router, "mcp__sdk__chime", {})
    assert outcome.ok, outcome
    assert outcome.details["audio"] == [{"mimeType": "audio/wav", "data": base64.b64encode(CHIME_WAV).decode()}]
    assert "a chime" in outcome.text and f"[audio audio/wav, {len(CHIME_WAV)} bytes, played to the user]" in outcome.text
    assert outcome.details["audio"][0]["data"] not in outcome.text
