"""Images in tool results reach the model as images where its connection takes them: a real MCP
server's PNG goes through the engine to a fake model over real HTTP, as an OpenAI `image_url` data
URL in the user message after the tool message or as an Anthropic `image` block inside the
`tool_result`; elsewhere the model reads a notice that it was not shown. A screenshot is kept as
its file and read again for each request, bounded in size and in number."""

from __future__ import annotations

import base64
import json

import pytest

from host.engine import result_images
from host.engine.prompt import build_messages
from host.engine.records import AssistantBody, CallRef, NodeRow, ToolResultBody, UserBody
from host.mcp.manager import McpManager
from host.mcp.service import McpTools
from host.providers.config import parse_config
from host.providers.model import Image, ToolResultPart
from host.providers.secrets import FileKeyStore
from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeAnthropic, FakeOpenAI, Reply
from tests.support.mcp_server import RED_PIXEL_PNG, McpTestServer

PIXEL = base64.b64encode(RED_PIXEL_PNG).decode()


@pytest.fixture(scope="module")
def mcp_server():
    with McpTestServer(extras=True) as server:
        yield server


async def second_body(tmp_path, mcp_server, fake, kind: str, tool: str = "picture", **options) -> dict:
    """One turn in which the model calls the server's `tool` (its `picture`): the second model request."""
    (tmp_path / "mcp.json").write_text(json.dumps({"servers": {"local": {"url": mcp_server.url}}}), encoding="utf-8")
    from host.mcp.config import load_mcp_config

    manager = McpManager(lambda: load_mcp_config(tmp_path / "mcp.json"),
                         key_store=lambda: FileKeyStore(tmp_path / "keys.json"))
    fake.add(Reply(tool_calls=[(f"mcp__local__{tool}", {})]), Reply(text="A red pixel."))
    h = Harness(tmp_path, fake.url, kind=kind, services={"mcp": McpTools(manager)}, provider_options=options)
    await h.start()
    try:
        await h.turn_to_its_end("show me the picture")
    finally:
        await h.stop()
        await manager.close()
    assert len(fake.requests) == 2
    return fake.requests[1]["body"]


async def test_an_openai_connection_set_to_take_images_gets_the_tools_image(tmp_path, mcp_server):
    with FakeOpenAI() as fake:
        body = await second_body(tmp_path, mcp_server, fake, "openai", images=True)
    roles = [m["role"] for m in body["messages"]]
    assert roles[-3:] == ["assistant", "tool", "user"], roles
    tool, after = body["messages"][-2], body["messages"][-1]
    assert "one red pixel" in tool["content"] and "1 image(s) of this result are attached" in tool["content"]
    assert PIXEL not in tool["content"]
    label, image = after["content"]
    assert tool["tool_call_id"] in label["text"]
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PIXEL}"}}


async def test_an_unknown_openai_compatible_server_gets_a_notice_instead(tmp_path, mcp_server):
    with FakeOpenAI() as fake:
        body = await second_body(tmp_path, mcp_server, fake, "openai")
    assert "image_url" not in json.dumps(body) and PIXEL not in json.dumps(body)
    tool = body["messages"][-1]
    assert tool["role"] == "tool" and "were not shown to you" in tool["content"]
    assert "[image image/png" in tool["content"] and "shown to the user" in tool["content"]


async def test_anthropic_gets_the_image_inside_the_tool_result(tmp_path, mcp_server):
    with FakeAnthropic() as fake:
        body = await second_body(tmp_path, mcp_server, fake, "anthropic")
    [result] = [b for m in body["messages"] if m["role"] == "user" for b in m["content"]
                if isinstance(b, dict) and b.get("type") == "tool_result"]
    text, image = result["content"]
    assert text["type"] == "text" and "one red pixel" in text["text"]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}}


@pytest.mark.parametrize("settings, expected", [
    ({"kind": "anthropic", "baseUrl": "https://api.anthropic.com"}, True),
    ({"kind": "openai", "baseUrl": "https://api.openai.com/v1"}, True),
    ({"kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "o3-mini"}, False),
    ({"kind": "openai", "baseUrl": "http://127.0.0.1:8080/v1"}, False),
    ({"kind": "openai", "baseUrl": "http://127.0.0.1:8080/v1", "images": True}, True),
    ({"kind": "anthropic", "baseUrl": "https://proxy.example", "images": False}, False)])
def test_whether_a_connection_takes_images(settings, expected):
    config = parse_config({"providers": {"p": {"model": "gpt-4.1", **settings}}})
    assert config.providers["p"].accepts_images() is expected


# ---------------------------------------------------------------- screenshots, by reference


def nodes(*results: ToolResultBody) -> list[NodeRow]:
    calls = [CallRef(id=r.call_id, name=r.tool, arguments={}) for r in results]
    path = [NodeRow(id="u", thread_id="t", seq=0, kind="user_message", created_at=0, body=UserBody(text="look")),
            NodeRow(id="a", thread_id="t", seq=1, kind="assistant_message", created_at=0,
                    body=AssistantBody(text="", calls=calls, provider="p"))]
    path += [NodeRow(id=f"r{n}", thread_id="t", seq=2 + n, kind="tool_result", created_at=0, body=r)
             for n, r in enumerate(results)]
    return path


def shot(call_id: str, path, mime: str = "image/png") -> ToolResultBody:
    return ToolResultBody(call_id=call_id, tool="screenshot", ok=True, text="Screenshot of the viewport saved.",
                          outcome="ok", trust="untrusted", provenance="page", origin="https://shop.example",
                          details={"path": str(path), "mime": mime, "attachmentId": call_id})


def replies(path: list[NodeRow], images: bool = True) -> list[ToolResultPart]:
    messages = build_messages(path, b"k" * 32, "p", images)
    return [p for m in messages for p in m.parts if isinstance(p, ToolResultPart)]


def test_a_screenshot_is_read_from_its_file_for_each_request(tmp_path):
    file = tmp_path / "shot-1.png"
    file.write_bytes(RED_PIXEL_PNG)
    [reply] = replies(nodes(shot("c1", file)))
    assert reply.images == (Image("image/png", PIXEL),) and "are attached" in reply.text
    file.unlink()
    [reply] = replies(nodes(shot("c1", file)))
    assert reply.images == () and "its file is no longer there" in reply.text


def test_a_screenshot_over_the_bound_is_named_not_sent(tmp_path, monkeypatch):
    monkeypatch.setattr(result_images, "MAX_IMAGE_BYTES", 40)
    file = tmp_path / "shot-big.png"
    file.write_bytes(RED_PIXEL_PNG)
    [reply] = replies(nodes(shot("c1", file)))
    assert reply.images == () and f"{len(RED_PIXEL_PNG)} bytes, more than 40" in reply.text


def test_only_the_latest_images_are_sent_again(tmp_path):
    file = tmp_path / "shot.png"
    file.write_bytes(RED_PIXEL_PNG)
    count = result_images.MAX_IMAGES_PER_REQUEST + 2
    sent = replies(nodes(*(shot(f"c{n}", file) for n in range(count))))
    assert [bool(r.images) for r in sent] == [False, False] + [True] * (count - 2)
    assert "not sent again" in sent[0].text


def test_older_images_beyond_the_bytes_bound_are_not_sent_again(tmp_path, monkeypatch):
    monkeypatch.setattr(result_images, "MAX_REQUEST_IMAGE_BYTES", len(RED_PIXEL_PNG) * 2)
    file = tmp_path / "shot.png"
    file.write_bytes(RED_PIXEL_PNG)
    sent = replies(nodes(*(shot(f"c{n}", file) for n in range(3))))
    assert [bool(r.images) for r in sent] == [False, True, True] and "not sent again" in sent[0].text


def test_another_tools_result_naming_a_file_is_not_read(tmp_path):
    file = tmp_path / "secret.png"
    file.write_bytes(RED_PIXEL_PNG)
    other = ToolResultBody(call_id="c1", tool="read_page", ok=True, text="page", outcome="ok",
                           details={"path": str(file), "mime": "image/png"})
    [reply] = replies(nodes(other))
    assert reply.images == () and "image" not in reply.text


def test_without_image_support_the_model_is_told_and_no_file_is_read(tmp_path):
    [reply] = replies(nodes(shot("c1", tmp_path / "never-written.png")), images=False)
    assert reply.images == () and "not shown to you" in reply.text and "no longer there" not in reply.text


# ---------------------------------------------------------------- audio


async def test_an_openai_connection_set_to_take_audio_gets_the_tools_clip_as_input_audio(tmp_path, mcp_server):
    from tests.support.mcp_server import CHIME_WAV

    clip = base64.b64encode(CHIME_WAV).decode()
    with FakeOpenAI() as fake:
        body = await second_body(tmp_path, mcp_server, fake, "openai", tool="chime", audio=True)
    tool, after = body["messages"][-2], body["messages"][-1]
    assert tool["role"] == "tool" and "a chime" in tool["content"] and clip not in tool["content"]
    assert "1 audio clip(s) of this result are attached" in tool["content"]
    label, sound = after["content"]
    assert tool["tool_call_id"] in label["text"]
    assert sound == {"type": "input_audio", "input_audio": {"data": clip, "format": "wav"}}


@pytest.mark.parametrize("kind, fake_type", [("openai", FakeOpenAI), ("anthropic", FakeAnthropic)])
async def test_a_connection_without_audio_is_told_the_clip_was_played_to_the_user(tmp_path, mcp_server, kind, fake_type):
    from tests.support.mcp_server import CHIME_WAV

    with fake_type() as fake:
        body = await second_body(tmp_path, mcp_server, fake, kind, tool="chime")
    sent = json.dumps(body)
    assert base64.b64encode(CHIME_WAV).decode() not in sent and "input_audio" not in sent
    assert "audio clip(s) of this result were played to the user, not sent to you" in sent


def test_the_audio_setting_is_validated_and_never_turns_audio_on_for_anthropic():
    from host.providers.config import ProviderConfig

    assert ProviderConfig(kind="openai", base_url="https://api.openai.com/v1", model="gpt-4o-audio-preview").accepts_audio()
    assert not ProviderConfig(kind="openai", base_url="https://api.openai.com/v1", model="gpt-4o").accepts_audio()
    assert ProviderConfig(kind="openai", base_url="http://127.0.0.1:8000/v1", model="m", audio=True).accepts_audio()
    assert not ProviderConfig(kind="anthropic", base_url="https://api.anthropic.com", model="c", audio=True).accepts_audio()
    with pytest.raises(Exception):
        ProviderConfig(kind="openai", base_url="https://x.test/v1", model="m", audio="loud")
