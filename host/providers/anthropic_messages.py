"""Anthropic Messages, streamed: text, thinking and tool use blocks, with the request
conversation merged into strictly alternating user/assistant turns as the API requires.

Thinking blocks come back with their signatures (and redacted ones whole) at the head of their
assistant message while its tool loop is in progress, as the API requires when thinking is on.
A refusal (`stop_reason: refusal`) is the model's answer, ended as a refusal: its text is shown
and none of its tool calls runs. `ping` events keep a stream alive but are not content."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx

from host.providers.errors import ProviderError
from host.providers.http import SseClient, decode_data
from host.providers.tool_fit import LeftOut, fit_tools
from host.providers.model import (Completion, Image, ModelRequest, ProviderCall, ReasoningDelta, RetryWait,
                                  StreamEvent, Text, TextDelta, ToolCallPart, ToolCallDelta, ToolResultPart, Usage)
from host.providers.openai_chat import current_loop_start

API_VERSION = "2023-06-01"
REFUSAL_WITHOUT_WORDS = "(The model declined to continue, without saying why.)"
_STOP = {"end_turn": "end", "stop_sequence": "end", "pause_turn": "end", "tool_use": "tool_use",
         "max_tokens": "max_tokens", "model_context_window_exceeded": "max_tokens"}
_ERROR_KINDS = {"authentication_error": "auth", "permission_error": "auth", "rate_limit_error": "rate_limit",
                "overloaded_error": "overloaded", "api_error": "server", "not_found_error": "bad_model",
                "invalid_request_error": "bad_request"}


def _block(part: Any) -> dict[str, Any] | None:
    if isinstance(part, Text):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, Image):
        return {"type": "image", "source": {"type": "base64", "media_type": part.mime, "data": part.data}}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
    if isinstance(part, ToolResultPart):
        content: Any = part.text or "(empty)"
        if part.images:
            content = [{"type": "text", "text": content}, *(_block(image) for image in part.images)]
        return {"type": "tool_result", "tool_use_id": part.call_id, "content": content, "is_error": part.is_error}
    return None


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The conversation as Messages turns: consecutive same-role messages merge, tool results
    lead their user turn, and the first turn is the user's."""
    out: list[dict[str, Any]] = []
    loop_start = current_loop_start(request)
    for position, message in enumerate(request.messages):
        parts = sorted(message.parts, key=lambda p: not isinstance(p, ToolResultPart)) if message.role == "user" \
            else list(message.parts)
        blocks = [b for b in map(_block, parts) if b is not None]
        thinking = (message.echo or {}).get("thinking_blocks")
        if message.role == "assistant" and position > loop_start and isinstance(thinking, list):
            blocks = [dict(b) for b in thinking if isinstance(b, dict)] + blocks
        if not blocks:
            continue
        if out and out[-1]["role"] == message.role:
            previous = out[-1]["content"]
            if message.role == "user":
                results = [b for b in blocks if b["type"] == "tool_result"]
                others = [b for b in blocks if b["type"] != "tool_result"]
                head = [b for b in previous if b["type"] == "tool_result"]
                tail = [b for b in previous if b["type"] != "tool_result"]
                out[-1]["content"] = head + results + tail + others
            else:
                previous.extend(blocks)
            continue
        out.append({"role": message.role, "content": blocks})
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continue)"}]})
    return out


class AnthropicMessages:
    """A streaming Messages client for one configured connection."""

    kind = "anthropic"

    def __init__(self, name: str, *, base_url: str, model: str, api_key: str | None, headers: dict[str, str],
                 max_tokens: int = 4096, timeout_s: float = 120.0, max_retries: int = 2,
                 transport: httpx.AsyncBaseTransport | None = None, accepts_images: bool = True):
        self.name = name
        self.accepts_images = accepts_images
        self.accepts_audio = False  # the Messages API takes no audio
        self.model = model
        self.max_tokens = max_tokens
        base = base_url.rstrip("/")
        self._url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        self._headers = {"anthropic-version": API_VERSION, "Accept": "text/event-stream", **headers}
        if api_key:
            self._headers["x-api-key"] = api_key
        self._http = SseClient(name, timeout_s=timeout_s, max_retries=max_retries, transport=transport)
        self.left_out: list[LeftOut] = []  # tools the last request could not offer, and why

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON request body."""
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": to_messages(request),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        tools, self.left_out = fit_tools(request.tools, "anthropic", self.name)
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in tools]
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one answer; the last event is the Completion."""
        text: list[str] = []
        reasoning: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        stop: str | None = None
        usage: dict[str, int | None] = {"input": 0, "output": 0, "cache_read": None, "cache_write": None}
        finished = False
        events = self._http.events(self._url, self._headers, self.body(request),
                                   keepalive=lambda event: event.event == "ping")
        # aclosing: a cancelled turn closes the HTTP stream in its own task, at once.
        async with aclosing(events) as stream:
            async for event in stream:
                if isinstance(event, RetryWait):
                    yield event
                    continue
                if not event.data:
                    continue
                data = decode_data(event, self.name)
                kind = data.get("type") if isinstance(data, dict) else None
                if kind == "error":
                    error = data.get("error") or {}
                    raise ProviderError(_ERROR_KINDS.get(error.get("type"), "server"),
                                        f"error in the stream: {error.get('message', error)}", provider=self.name,
                                        details={"stream": True, "type": error.get("type")})
                if kind == "message_start":
                    raw = (data.get("message") or {}).get("usage") or {}
                    usage["input"] = int(raw.get("input_tokens") or 0)
                    usage["cache_read"] = raw.get("cache_read_input_tokens")
                    usage["cache_write"] = raw.get("cache_creation_input_tokens")
                    usage["output"] = int(raw.get("output_tokens") or 0)
                elif kind == "content_block_start":
                    index = data.get("index")
                    block = data.get("content_block") or {}
                    if not isinstance(index, int) or not isinstance(block, dict):
                        raise ProviderError("protocol", "content block without an index", provider=self.name)
                    blocks[index] = {"type": block.get("type"), "id": block.get("id", ""), "name": block.get("name", ""),
                                     "json": [], "thinking": [str(block.get("thinking") or "")],
                                     "signature": [str(block.get("signature") or "")], "data": block.get("data")}
                    if block.get("type") == "tool_use":
                        yield ToolCallDelta(index, blocks[index]["name"], 0)
                elif kind == "content_block_delta":
                    index = data.get("index")
                    delta = data.get("delta") or {}
                    entry = blocks.get(index) if isinstance(index, int) else None
                    if entry is None:
                        raise ProviderError("protocol", f"a delta for unknown block {index!r}", provider=self.name)
                    if delta.get("type") == "text_delta" and delta.get("text"):
                        text.append(delta["text"])
                        yield TextDelta(delta["text"])
                    elif delta.get("type") == "thinking_delta" and delta.get("thinking"):
                        entry["thinking"].append(delta["thinking"])
                        reasoning.append(delta["thinking"])
                        yield ReasoningDelta(delta["thinking"])
                    elif delta.get("type") == "signature_delta" and delta.get("signature"):
                        entry["signature"].append(str(delta["signature"]))
                    elif delta.get("type") == "input_json_delta":
                        entry["json"].append(delta.get("partial_json") or "")
                        yield ToolCallDelta(index, entry["name"], sum(map(len, entry["json"])))  # type: ignore[arg-type]
                elif kind == "message_delta":
                    stop = (data.get("delta") or {}).get("stop_reason") or stop
                    raw = data.get("usage") or {}
                    if raw.get("output_tokens") is not None:
                        usage["output"] = int(raw["output_tokens"])
                elif kind == "message_stop":
                    finished = True
                    break
        if not finished:
            raise ProviderError("network", "the stream ended before message_stop", provider=self.name)
        if stop == "refusal":
            said = "".join(text)
            if not said.strip():
                said = REFUSAL_WITHOUT_WORDS
                yield TextDelta(said)
            yield Completion(said, (), "refusal", Usage(**usage), "".join(reasoning))
            return
        calls = tuple(ProviderCall(b["id"], b["name"], "".join(b["json"]) or "{}")
                      for _, b in sorted(blocks.items()) if b["type"] == "tool_use")
        mapped = _STOP.get(stop or "", "tool_use" if calls else "end")
        thinking = _thinking_blocks(blocks)
        yield Completion("".join(text), calls, mapped, Usage(**usage), "".join(reasoning),  # type: ignore[arg-type]
                         {"thinking_blocks": thinking} if thinking else None)


def _thinking_blocks(blocks: dict[int, dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's thinking blocks as the API wants them back: signed thinking, redacted whole."""
    out: list[dict[str, Any]] = []
    for _, block in sorted(blocks.items()):
        if block["type"] == "thinking" and "".join(block["signature"]):
            out.append({"type": "thinking", "thinking": "".join(block["thinking"]),
                        "signature": "".join(block["signature"])})
        elif block["type"] == "redacted_thinking" and isinstance(block["data"], str):
            out.append({"type": "redacted_thinking", "data": block["data"]})
    return out
