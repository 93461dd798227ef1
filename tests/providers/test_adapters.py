"""Both adapters against the local fake servers over real HTTP and SSE: streamed text, parallel
tool calls assembled from fragments, usage, request shapes, and every class of failure
attributed to its cause."""

from __future__ import annotations

import json
import threading

import pytest

from host.providers.errors import ProviderError
from host.providers.model import (Completion, Message, ModelRequest, ReasoningDelta, Text, TextDelta, ToolCallPart,
                                  ToolCallDelta, ToolResultPart, ToolSchema)
from host.providers.openai_chat import OpenAIChat
from host.providers.anthropic_messages import AnthropicMessages
from tests.support.fake_model import FakeAnthropic, FakeOpenAI, Reply

TOOLS = (ToolSchema("click", "Click", {"type": "object", "properties": {"ref": {"type": "string"}}}),)


def make(kind: str, server, **kw):
    options = dict(base_url=server.url, model="m-1", api_key="sk-test", headers={"X-Team": "blue"}, max_retries=0)
    options.update(kw)
    cls = OpenAIChat if kind == "openai" else AnthropicMessages
    return cls("fake", **options)


def fake(kind: str, *replies):
    return (FakeOpenAI if kind == "openai" else FakeAnthropic)(replies)


def request(**kw) -> ModelRequest:
    history = (
        Message("user", (Text("find the button"),)),
        Message("assistant", (Text("looking"), ToolCallPart("call_a", "click", {"ref": "s1_1_1"}))),
        Message("user", (ToolResultPart("call_a", "clicked", False), Text("also this"))),
    )
    return ModelRequest(model="", system="be careful", messages=kw.pop("messages", history), tools=TOOLS, **kw)


async def collect(provider, req=None):
    events = [e async for e in provider.stream(req or request())]
    await provider.aclose()
    return events


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_text_streams_in_pieces_and_completes_with_usage(kind):
    with fake(kind, Reply(text="Hello there, friend", usage=(40, 9), reasoning="hmm")) as server:
        events = await collect(make(kind, server))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, friend"
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["hmm"]
    final = events[-1]
    assert isinstance(final, Completion)
    assert final.text == "Hello there, friend" and final.stop_reason == "end" and final.tool_calls == ()
    assert (final.usage.input, final.usage.output) == (40, 9)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_parallel_tool_calls_are_assembled_in_order(kind):
    calls = [("click", {"ref": "s1_2_3", "element": "Save"}), ("type", {"ref": "s1_2_4", "text": "hi ünï"})]
    with fake(kind, Reply(text="ok", tool_calls=calls)) as server:
        events = await collect(make(kind, server))
    final = events[-1]
    assert final.stop_reason == "tool_use"
    assert [(c.name, json.loads(c.arguments)) for c in final.tool_calls] == calls
    assert all(c.provider_id for c in final.tool_calls)
    assert any(isinstance(e, ToolCallDelta) for e in events)


async def test_openai_request_shape():
    with fake("openai", Reply(text="x")) as server:
        await collect(make("openai", server))
        sent = server.requests[0]
    body, headers = sent["body"], {k.lower(): v for k, v in sent["headers"].items()}
    assert headers["authorization"] == "Bearer sk-test" and headers["x-team"] == "blue"
    assert body["model"] == "m-1" and body["stream"] is True and body["max_tokens"] == 4096
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assistant = body["messages"][2]
    assert assistant["tool_calls"][0]["id"] == "call_a"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"ref": "s1_1_1"}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_a", "content": "clicked"}
    assert body["tools"][0]["function"]["name"] == "click"


async def test_anthropic_request_shape_alternates_and_leads_with_tool_results():
    with fake("anthropic", Reply(text="x")) as server:
        await collect(make("anthropic", server))
        sent = server.requests[0]
    body, headers = sent["body"], {k.lower(): v for k, v in sent["headers"].items()}
    assert headers["x-api-key"] == "sk-test" and headers["anthropic-version"] == "2023-06-01"
    assert body["system"] == "be careful" and body["max_tokens"] == 4096
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"][1] == {"type": "tool_use", "id": "call_a", "name": "click",
                                                 "input": {"ref": "s1_1_1"}}
    last = body["messages"][2]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["tool_use_id"] == "call_a"
    assert last[1] == {"type": "text", "text": "also this"}
    assert body["tools"][0]["input_schema"]["type"] == "object"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("status,expected", [(401, "auth"), (403, "auth"), (429, "rate_limit"), (500, "server"),
                                             (400, "bad_request")])
async def test_http_errors_are_attributed(kind, status, expected):
    body = {"error": {"message": f"nope {status}", "type": "x"}}
    with fake(kind, Reply(status=status, error_body=body, headers={"retry-after": "0"})) as server:
        with pytest.raises(ProviderError) as caught:
            await collect(make(kind, server))
    error = caught.value
    assert error.kind == expected and error.status == status and error.provider == "fake"
    assert f"nope {status}" in str(error) and f"HTTP {status}" in str(error)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_unknown_model_is_a_bad_model_error(kind):
    body = {"error": {"message": "The model `nope` does not exist", "type": "not_found_error"}}
    with fake(kind, Reply(status=404, error_body=body)) as server:
        with pytest.raises(ProviderError) as caught:
            await collect(make(kind, server))
    assert caught.value.kind == "bad_model"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_rate_limits_are_retried_before_the_first_event(kind):
    limited = Reply(status=429, error_body={"error": {"message": "slow down"}}, headers={"retry-after": "0"})
    with fake(kind, limited, Reply(text="finally")) as server:
        events = await collect(make(kind, server, max_retries=1))
        assert len(server.requests) == 2
    assert events[-1].text == "finally"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_refused_connection_is_a_network_error(kind):
    server = fake(kind)
    server.httpd.server_close()  # nothing listens on the port any more
    with pytest.raises(ProviderError) as caught:
        await collect(make(kind, server))
    assert caught.value.kind == "network" and caught.value.retryable


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_stream_cut_short_is_a_network_error(kind):
    with fake(kind, Reply(text="partial answer", truncate=True)) as server:
        with pytest.raises(ProviderError) as caught:
            await collect(make(kind, server))
    assert caught.value.kind == "network" and "ended" in caught.value.message


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_an_error_event_in_the_stream_is_reported(kind):
    error = {"type": "overloaded_error", "message": "Overloaded"}
    with fake(kind, Reply(text="a", stream_error=error)) as server:
        with pytest.raises(ProviderError) as caught:
            await collect(make(kind, server))
    assert "Overloaded" in caught.value.message


async def test_a_non_stream_answer_is_a_protocol_error():
    import http.server

    class JsonOnly(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            return None

        def do_POST(self):  # noqa: N802
            self.rfile.read(int(self.headers["content-length"]))
            data = b'{"choices": []}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), JsonOnly)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        provider = OpenAIChat("fake", base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", model="m",
                              api_key=None, headers={}, max_retries=0)
        with pytest.raises(ProviderError) as caught:
            await collect(provider)
        assert caught.value.kind == "protocol"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_cancelling_the_consumer_closes_the_connection(kind):
    import asyncio
    import contextlib

    gate = threading.Event()
    with fake(kind, Reply(text="streaming forever", hold=gate)) as server:
        provider = make(kind, server)
        first = asyncio.Event()

        async def consume():
            async with contextlib.aclosing(provider.stream(request())) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        first.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(first.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await provider.aclose()
        for _ in range(100):
            if server.disconnects:
                break
            await asyncio.sleep(0.05)
        gate.set()
        assert server.disconnects == 1
