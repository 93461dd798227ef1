"""OpenAI-compatible Chat Completions, streamed: text, reasoning (where servers send it) and
parallel tool calls assembled from their argument fragments."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx

from host.providers.errors import ProviderError
from host.providers.http import SseClient, decode_data
from host.providers.model import (Completion, Image, ModelRequest, ProviderCall, ReasoningDelta, StreamEvent,
                                  Text, TextDelta, ToolCallPart, ToolCallDelta, ToolResultPart, Usage)

_STOP = {"stop": "end", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
         "content_filter": "content_filter"}


def _user_content(parts: list[Text | Image]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, Text) for p in parts):
        return "\n\n".join(p.text for p in parts)  # type: ignore[union-attr]
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            out.append({"type": "text", "text": part.text})
        else:
            out.append({"type": "image_url", "image_url": {"url": f"data:{part.mime};base64,{part.data}"}})
    return out


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's conversation in Chat Completions form: tool results become `tool`
    messages right after the assistant message that called them."""
    out: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    for message in request.messages:
        if message.role == "assistant":
            text = "".join(p.text for p in message.parts if isinstance(p, Text))
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = [{"id": c.id, "type": "function",
                                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                       for c in calls]
            out.append(entry)
            continue
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                out.append({"role": "tool", "tool_call_id": part.call_id, "content": part.text})
        rest = [p for p in message.parts if isinstance(p, (Text, Image))]
        if rest:
            out.append({"role": "user", "content": _user_content(rest)})
    return out


class OpenAIChat:
    """A streaming Chat Completions client for one configured connection."""

    kind = "openai"

    def __init__(self, name: str, *, base_url: str, model: str, api_key: str | None, headers: dict[str, str],
                 max_tokens: int = 4096, timeout_s: float = 120.0, max_retries: int = 2,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.name = name
        self.model = model
        self.max_tokens = max_tokens
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Accept": "text/event-stream", **headers}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        # OpenAI's own newer models refuse `max_tokens`; compatible servers mostly only know it.
        self._max_field = "max_completion_tokens" if httpx.URL(base_url).host == "api.openai.com" else "max_tokens"
        self._http = SseClient(name, timeout_s=timeout_s, max_retries=max_retries, transport=transport)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON request body."""
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": to_messages(request),
            "stream": True,
            "stream_options": {"include_usage": True},
            self._max_field: request.max_tokens or self.max_tokens,
        }
        if request.tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in request.tools]
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one answer; the last event is the Completion."""
        text: list[str] = []
        reasoning: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage = Usage()
        done = False
        # aclosing: a cancelled turn closes the HTTP stream in its own task, at once.
        async with aclosing(self._http.events(self._url, self._headers, self.body(request))) as stream:
            async for event in stream:
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                data = decode_data(event, self.name)
                if not isinstance(data, dict):
                    raise ProviderError("protocol", "an event that is not a JSON object", provider=self.name)
                if "error" in data:
                    error = data["error"]
                    message = error.get("message") if isinstance(error, dict) else str(error)
                    raise ProviderError("server", f"error in the stream: {message}", provider=self.name,
                                        details={"stream": True})
                if isinstance(data.get("usage"), dict):
                    usage = _usage(data["usage"])
                for choice in data.get("choices") or ():
                    if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                        continue
                    delta = choice.get("delta") or {}
                    piece = delta.get("content")
                    if isinstance(piece, str) and piece:
                        text.append(piece)
                        yield TextDelta(piece)
                    thought = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(thought, str) and thought:
                        reasoning.append(thought)
                        yield ReasoningDelta(thought)
                    for fragment in delta.get("tool_calls") or ():
                        yield _merge_call(calls, fragment, self.name)
                    if choice.get("finish_reason"):
                        finish = str(choice["finish_reason"])
        if finish is None and not done:
            raise ProviderError("network", "the stream ended before the answer was complete", provider=self.name)
        ordered = tuple(ProviderCall(c["id"], c["name"], "".join(c["args"])) for _, c in sorted(calls.items()))
        stop = _STOP.get(finish or "", "tool_use" if ordered else "end")
        if ordered and stop == "end":
            stop = "tool_use"  # several compatible servers finish tool calls with "stop"
        yield Completion("".join(text), ordered, stop, usage, "".join(reasoning))  # type: ignore[arg-type]


def _merge_call(calls: dict[int, dict[str, Any]], fragment: Any, provider: str) -> ToolCallDelta:
    if not isinstance(fragment, dict):
        raise ProviderError("protocol", "a tool call fragment that is not an object", provider=provider)
    index = fragment.get("index", len(calls))
    if not isinstance(index, int) or index < 0 or index > 128:
        raise ProviderError("protocol", f"tool call index {index!r} out of range", provider=provider)
    entry = calls.setdefault(index, {"id": "", "name": "", "args": []})
    if isinstance(fragment.get("id"), str) and fragment["id"]:
        entry["id"] = fragment["id"]
    function = fragment.get("function") or {}
    if isinstance(function.get("name"), str) and function["name"] and not entry["name"]:
        entry["name"] = function["name"]
    if isinstance(function.get("arguments"), str):
        entry["args"].append(function["arguments"])
    return ToolCallDelta(index, entry["name"], sum(map(len, entry["args"])))


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(input=int(raw.get("prompt_tokens") or 0), output=int(raw.get("completion_tokens") or 0),
                 cache_read=int(cached) if isinstance(cached, int) else None)
