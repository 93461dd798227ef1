"""The dialects of real providers and compatible servers, replayed byte for byte from
`tests/fixtures/providers/` over real HTTP: what each sends is read correctly, what each requires
back goes back exactly (through the engine's store, to the second model call of a tool loop),
and every refusal, in-stream error, keep-alive-only stream and Retry-After is an error or a wait,
never an answer."""

from __future__ import annotations

import email.utils
import json
import time

import pytest

from host.providers.anthropic_messages import AnthropicMessages
from host.providers.errors import ProviderError
from host.providers.model import (Completion, Message, ModelRequest, RetryWait, Text, TextDelta, ToolCallPart, ToolResultPart,
                                  ToolSchema)
from host.providers.openai_chat import OpenAIChat
from tests.support.engine_harness import Harness
from tests.support.replay_server import Answer, ReplayServer, transcript

TOOLS = (ToolSchema("navigate", "Load a URL", {"type": "object", "properties": {"url": {"type": "string"}}}),)
ASK = ModelRequest(model="", system="be careful", messages=(Message("user", (Text("what is the weather?"),)),),
                   tools=TOOLS)
SSE = {"Content-Type": "text/event-stream"}


def client(kind: str, server: ReplayServer, **options):
    settings = dict(base_url=server.url, model="m-1", api_key="sk-test", headers={}, max_retries=0)
    settings.update(options)
    return (OpenAIChat if kind == "openai" else AnthropicMessages)("replayed", **settings)


async def answer(kind: str, server: ReplayServer, request: ModelRequest = ASK, **options) -> tuple[Completion, list]:
    provider = client(kind, server, **options)
    try:
        events = [event async for event in provider.stream(request)]
    finally:
        await provider.aclose()
    assert isinstance(events[-1], Completion)
    return events[-1], events


async def failure(kind: str, server: ReplayServer, **options) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        await answer(kind, server, **options)
    return raised.value


# ---------------------------------------------------------------- reading each dialect


async def test_deepseek_reasoning_content_is_kept_to_go_back():
    with ReplayServer(Answer(transcript("deepseek-thinking-tool-call.sse"))) as server:
        done, _ = await answer("openai", server)
    assert done.reasoning == "The user wants the weather. I should open the page."
    assert done.echo == {"reasoning_content": done.reasoning}
    [call] = done.tool_calls
    assert (call.provider_id, call.name, json.loads(call.arguments)) == (
        "call_00_Xq3bJ9kPz", "navigate", {"url": "https://weather.example/"})
    assert done.stop_reason == "tool_use" and done.usage.input == 812


async def test_gemini_index_less_fragments_make_one_call_with_its_signature():
    with ReplayServer(Answer(transcript("gemini-thought-signature.sse"))) as server:
        done, _ = await answer("openai", server)
    [call] = done.tool_calls
    assert call.name == "navigate" and json.loads(call.arguments) == {"url": "https://weather.example/"}
    assert call.echo == {"extra_content": {"google": {
        "thought_signature": "CsQBAdHtim9vG0Fq1WQ+3lq0rI1mN2hVQK8Qe6x0v5Yb"}}}


OPENROUTER_DETAILS = [
    {"type": "reasoning.text", "text": "The user wants the weather.", "format": "anthropic-claude-v1", "index": 0,
     "signature": "ErUBCkYIBRgCIkDx2Vq0pL8mYJd4T6u"},
    {"type": "reasoning.encrypted", "data": "EmwKAhgBEgyR0pXq7dN3yLw2Vb4aDMzK", "format": "anthropic-claude-v1",
     "index": 1}]


async def test_openrouter_reasoning_details_are_merged_by_index_to_go_back():
    with ReplayServer(Answer(transcript("openrouter-reasoning-details.sse"))) as server:
        done, events = await answer("openai", server)
    assert done.reasoning == "The user wants the weather."
    assert done.echo == {"reasoning_details": OPENROUTER_DETAILS}
    assert [json.loads(c.arguments) for c in done.tool_calls] == [{"url": "https://weather.example/"}]


@pytest.mark.parametrize("details, problem", [
    ('{"type": "reasoning.text"}', "not an array"),
    ('["text"]', "not an object with a type"),
    ('[{"type": "reasoning.text", "index": "0", "text": "x"}]', "index '0' is not a number")])
async def test_malformed_reasoning_details_are_errors_naming_the_provider(details, problem):
    line = ('data: {"choices": [{"index": 0, "delta": {"reasoning_details": %s}, "finish_reason": null}]}\n\n'
            % details).encode()
    with ReplayServer(Answer(line + b"data: [DONE]\n\n")) as server:
        error = await failure("openai", server)
    assert error.kind == "protocol" and problem in error.message and 'provider "replayed"' in error.describe()


async def test_reasoning_details_alone_are_shown_as_reasoning():
    lines = b"".join(b'data: {"choices": [{"index": 0, "delta": {"reasoning_details": [%s]}, "finish_reason": null}]}\n\n'
                     % piece for piece in (b'{"type": "reasoning.summary", "summary": "Plan: ", "id": "rs_1", "index": 0}',
                                           b'{"type": "reasoning.summary", "summary": "open it.", "index": 0}'))
    end = b'data: {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n'
    with ReplayServer(Answer(lines + end)) as server:
        done, _ = await answer("openai", server)
    assert done.reasoning == "Plan: open it."
    assert done.echo == {"reasoning_details": [{"type": "reasoning.summary", "summary": "Plan: open it.", "id": "rs_1",
                                                "index": 0}]}


async def test_arguments_sent_as_an_object_are_kept():
    with ReplayServer(Answer(transcript("llama-server-object-arguments.sse"))) as server:
        done, _ = await answer("openai", server)
    assert json.loads(done.tool_calls[0].arguments) == {"url": "https://weather.example/"}


async def test_a_proxy_that_reuses_an_index_keeps_both_calls():
    with ReplayServer(Answer(transcript("proxy-reused-index.sse"))) as server:
        done, _ = await answer("openai", server)
    assert [(c.provider_id, c.name, json.loads(c.arguments)) for c in done.tool_calls] == [
        ("call_one", "navigate", {"url": "https://a.example/"}), ("call_two", "tab_open", {"url": "https://b.example/"})]


async def test_anthropic_signed_and_redacted_thinking_are_kept_to_go_back():
    with ReplayServer(Answer(transcript("anthropic-thinking-tool-use.sse"))) as server:
        done, _ = await answer("anthropic", server)
    assert done.reasoning == "The user wants the weather. Open the page first."
    assert done.echo == {"thinking_blocks": [
        {"type": "thinking", "thinking": done.reasoning, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYTJnF3S0Jq0="},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}]}
    assert done.text == "Opening the forecast." and done.tool_calls[0].name == "navigate"


async def test_a_stream_without_its_last_blank_line_still_ends():
    with ReplayServer(Answer(transcript("anthropic-no-final-blank-line.sse"))) as server:
        done, _ = await answer("anthropic", server)
    assert done.text == "It is sunny." and done.stop_reason == "end"


# ---------------------------------------------------------------- errors, never answers


async def test_an_openai_refusal_is_the_models_answer_marked_as_a_refusal():
    with ReplayServer(Answer(transcript("openai-refusal.sse"))) as server:
        done, events = await answer("openai", server)
    assert (done.text, done.stop_reason, done.tool_calls) == ("I'm sorry, I can't help with that.", "refusal", ())
    # The user sees its words as they would see any answer.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == done.text


async def test_an_anthropic_refusal_is_the_models_answer_marked_as_a_refusal():
    with ReplayServer(Answer(transcript("anthropic-refusal.sse"))) as server:
        done, events = await answer("anthropic", server)
    assert (done.text, done.stop_reason, done.tool_calls) == ("I can't help with that.", "refusal", ())


async def test_a_refusal_after_a_started_tool_call_runs_nothing_and_a_wordless_one_says_so():
    refused = transcript("anthropic-refusal.sse").decode().replace(
        'data: {"type":"content_block_stop","index":0}',
        'data: {"type":"content_block_stop","index":0}\n\nevent: content_block_start\n'
        'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"click","input":{}}}\n\n'
        'event: content_block_delta\n'
        'data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"ref\\":\\"s1\\"}"}}\n\n'
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}', 1)
    assert "toolu_1" in refused
    with ReplayServer(Answer(refused.encode())) as server:
        done, _ = await answer("anthropic", server)
    assert done.stop_reason == "refusal" and done.tool_calls == ()
    wordless = transcript("anthropic-refusal.sse").replace(b"I can't help with that.", b"")
    with ReplayServer(Answer(wordless)) as server:
        done, _ = await answer("anthropic", server)
    assert done.stop_reason == "refusal" and done.text == "(The model declined to continue, without saying why.)"


async def test_an_error_object_then_done_is_an_error_not_a_truncated_answer():
    with ReplayServer(Answer(transcript("vllm-error-chunk.sse"))) as server:
        error = await failure("openai", server)
    assert error.kind == "server" and "longer than the maximum model length" in error.message
    assert error.details["type"] == "BadRequestError" and error.details["code"] == 400


@pytest.mark.parametrize("line", [b'event: error\ndata: {"message": "upstream failed"}\n\n',
                                  b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "error"}]}\n\n'])
async def test_other_in_stream_error_shapes_are_errors(line):
    start = b'data: {"choices": [{"index": 0, "delta": {"content": "Half"}, "finish_reason": null}]}\n\n'
    with ReplayServer(Answer(start + line + b"data: [DONE]\n\n")) as server:
        error = await failure("openai", server)
    assert error.kind == "server"


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_keep_alive_alone_does_not_keep_a_stream_open(kind):
    alive = b": keep-alive\n\n" if kind == "openai" else b'event: ping\ndata: {"type": "ping"}\n\n'
    with ReplayServer(Answer([alive, 0.3] * 20)) as server:
        started = time.monotonic()
        error = await failure(kind, server, timeout_s=1.0)
    assert error.kind == "network" and "no content for 1 s" in error.message
    assert time.monotonic() - started < 4, "the quiet time ended the call, not the server"


async def test_content_keeps_a_slow_stream_open():
    pieces: list[bytes | float] = [b'data: {"choices": [{"index": 0, "delta": {"content": "a"}, "finish_reason": null}]}'
                                   b"\n\n", 0.4] * 8
    pieces.append(b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\ndata: [DONE]\n\n')
    # 3.2 s in all, over a quiet-time limit of 1.5 s that no gap between pieces comes near.
    with ReplayServer(Answer(pieces)) as server:
        done, _ = await answer("openai", server, timeout_s=1.5)
    assert done.text == "aaaaaaaa"


# ---------------------------------------------------------------- Retry-After


def limited(after: str) -> Answer:
    return Answer(b'{"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}', status=429,
                  headers={"Content-Type": "application/json", "Retry-After": after})


@pytest.mark.parametrize("after", ["1", "date"])
async def test_retry_after_in_seconds_or_as_a_date_is_waited_and_shown(after):
    value = email.utils.formatdate(time.time() + 2, usegmt=True) if after == "date" else after
    with ReplayServer(limited(value), Answer(transcript("openai-text.sse"))) as server:
        done, events = await answer("openai", server, max_retries=2)
        waited = server.times[1] - server.times[0]
    [wait] = [e for e in events if isinstance(e, RetryWait)]
    assert done.text == "Done." and wait.reason == "rate limited" and wait.attempt == 2
    if after == "date":  # an HTTP date has whole seconds: about 1 to 2 s from now
        assert 0.5 <= wait.seconds <= 2.1 and waited >= wait.seconds - 0.05
    else:
        assert wait.seconds == 1.0 and waited >= 0.95


async def test_a_retry_after_beyond_the_bound_fails_with_the_providers_figure():
    with ReplayServer(limited("120"), Answer(transcript("openai-text.sse"))) as server:
        error = await failure("openai", server, max_retries=2)
        assert len(server.requests) == 1, "no early retry"
    assert error.kind == "rate_limit" and "wait 120 s" in error.message and error.retry_after == 120


# ---------------------------------------------------------------- what goes back, through the engine


async def second_request(tmp_path, kind: str, first: str, last: str) -> dict:
    """Run one turn whose first answer is `first` (a tool call) and second `last`; the body of
    the second model call."""
    with ReplayServer(Answer(transcript(first)), Answer(transcript(last))) as server:
        h = Harness(tmp_path, server.url, kind=kind)
        await h.start()
        try:
            await h.turn_to_its_end("what is the weather on weather.example?")
        finally:
            await h.stop()
        assert len(server.requests) == 2
        return server.requests[1]


async def test_deepseek_gets_its_reasoning_back_in_the_tool_loop(tmp_path):
    body = await second_request(tmp_path, "openai", "deepseek-thinking-tool-call.sse", "openai-text.sse")
    [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_content"] == "The user wants the weather. I should open the page."
    assert assistant["tool_calls"][0]["function"]["name"] == "navigate"


async def test_openrouter_gets_its_reasoning_details_back_unchanged_in_the_tool_loop(tmp_path):
    body = await second_request(tmp_path, "openai", "openrouter-reasoning-details.sse", "openai-text.sse")
    [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_details"] == OPENROUTER_DETAILS
    assert assistant["tool_calls"][0]["id"] and assistant["tool_calls"][0]["function"]["name"] == "navigate"


async def test_gemini_gets_its_thought_signature_back_on_the_call(tmp_path):
    body = await second_request(tmp_path, "openai", "gemini-thought-signature.sse", "openai-text.sse")
    [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
    [call] = assistant["tool_calls"]
    assert call["extra_content"] == {"google": {"thought_signature": "CsQBAdHtim9vG0Fq1WQ+3lq0rI1mN2hVQK8Qe6x0v5Yb"}}
    assert json.loads(call["function"]["arguments"]) == {"url": "https://weather.example/"}


async def test_anthropic_gets_its_thinking_blocks_back_first(tmp_path):
    body = await second_request(tmp_path, "anthropic", "anthropic-thinking-tool-use.sse",
                                "anthropic-no-final-blank-line.sse")
    [assistant] = [m for m in body["messages"] if m["role"] == "assistant"]
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds == ["thinking", "redacted_thinking", "text", "tool_use"]
    assert assistant["content"][0]["signature"] == "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYTJnF3S0Jq0="


def test_round_trip_data_goes_back_only_within_the_tool_loop_in_progress():
    from host.providers.openai_chat import to_messages

    earlier = Message("assistant", (Text("done before"),), {"reasoning_content": "old thoughts"})
    current = Message("assistant", (ToolCallPart("c1", "navigate", {"url": "https://x.example/"},
                                                 {"extra_content": {"google": {"thought_signature": "s"}}}),),
                      {"reasoning_content": "new thoughts"})
    request = ModelRequest(model="", system="", messages=(
        Message("user", (Text("first"),)), earlier, Message("user", (Text("second"),)), current,
        Message("user", (ToolResultPart("c1", "loaded"),))))
    sent = [m for m in to_messages(request) if m["role"] == "assistant"]
    assert "reasoning_content" not in sent[0] and sent[1]["reasoning_content"] == "new thoughts"
    assert sent[1]["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "s"}}


async def test_a_broken_stream_keeps_what_was_shown_marked_as_cut_off(tmp_path):
    with ReplayServer(Answer(transcript("vllm-error-chunk.sse")), Answer(transcript("openai-text.sse"))) as server:
        h = Harness(tmp_path, server.url)
        await h.start()
        try:
            thread = await h.new_thread()
            await h.submit(thread, "what is the answer?")
            done = await h.turn_done()
            assert done["stopReason"] == "error", done
            await h.submit(thread, "go on")
            assert (await h.turn_done(2))["stopReason"] == "end"
        finally:
            await h.stop()
        [kept] = [m for m in server.requests[1]["messages"] if m["role"] == "assistant"]
    assert kept["content"].startswith("The answer is\n\n[This answer was cut off: ")
    assert "longer than the maximum model length" in kept["content"]


def test_fragments_are_assembled_by_call_id_when_a_proxy_interleaves_them_on_one_index():
    from host.providers.openai_chat import _Calls

    calls = _Calls("proxy")
    for fragment in (
        {"index": 0, "id": "call_a", "function": {"name": "click", "arguments": '{"ref": '}},
        {"index": 0, "id": "call_b", "function": {"name": "type", "arguments": '{"text": "hi"'}},
        {"index": 0, "id": "call_a", "function": {"arguments": '"s1_1_2"}'}},
        {"index": 0, "id": "call_b", "function": {"arguments": ', "ref": "s1_1_3"}'}},
        {"index": 0, "function": {"arguments": ""}},  # no id: goes on with the last one named
    ):
        calls.merge(fragment)
    done = calls.done()
    assert [(c.provider_id, c.name, c.arguments) for c in done] == [
        ("call_a", "click", '{"ref": "s1_1_2"}'), ("call_b", "type", '{"text": "hi", "ref": "s1_1_3"}')]
