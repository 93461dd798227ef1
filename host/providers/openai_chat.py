"""OpenAI-compatible Chat Completions, streamed: text, reasoning (where servers send it) and
parallel tool calls assembled from their argument fragments.

Compatible servers differ; what this adapter accepts from them: argument fragments with an
index, without one (each call's first fragment carries its id), or with an index a second call
reuses; arguments as a JSON string or as an object; reasoning as `reasoning_content` or
`reasoning`; fields a server adds to a call (Gemini's `extra_content` with its thought signature)
or to the message (DeepSeek's `reasoning_content`, OpenRouter's `reasoning_details` merged from
their fragments by index), which go back exactly as they came; a refusal (`delta.refusal`), which
is the model's answer, ended as a refusal (no tool call of it runs); and an error object inside
the stream (`{"error": …}`, vLLM's `{"object": "error", …}`, an `error` event, a finish reason
`error`), which ends the call as an error, never as an answer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx

from host.providers.errors import ProviderError
from host.providers.http import SseClient, decode_data
from host.providers.tool_fit import LeftOut, fit_tools
from host.providers.model import (Audio, Completion, Image, ModelRequest, ProviderCall, ReasoningDelta, RetryWait,
                                  StreamEvent, Text, TextDelta, ToolCallPart, ToolCallDelta, ToolResultPart, Usage)

_STOP = {"stop": "end", "tool_calls": "tool_use", "function_call": "tool_use", "length": "max_tokens",
         "content_filter": "content_filter"}


# The audio formats Chat Completions takes (`input_audio.format`), by type.
AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _user_content(parts: list[Text | Image | Audio]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, Text) for p in parts):
        return "\n\n".join(p.text for p in parts)  # type: ignore[union-attr]
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            out.append({"type": "text", "text": part.text})
        elif isinstance(part, Audio):
            out.append({"type": "input_audio", "input_audio": {"data": part.data, "format": AUDIO_FORMATS[part.mime]}})
        else:
            out.append({"type": "image_url", "image_url": {"url": f"data:{part.mime};base64,{part.data}"}})
    return out


def current_loop_start(request: ModelRequest) -> int:
    """The index of the last message in which the user spoke (not only tool results): the
    assistant messages after it are the tool loop in progress."""
    for index in range(len(request.messages) - 1, -1, -1):
        message = request.messages[index]
        if message.role == "user" and any(isinstance(p, (Text, Image)) for p in message.parts):
            return index
    return -1


def to_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The request's conversation in Chat Completions form: tool results become `tool`
    messages right after the assistant message that called them (their images and audio, which a
    `tool` message cannot hold, in the user message after them). A message's round-trip fields
    go back within the tool loop in progress (DeepSeek requires them there and ignores them in
    earlier turns); a call's always go back with it."""
    out: list[dict[str, Any]] = [{"role": "system", "content": request.system}] if request.system else []
    loop_start = current_loop_start(request)
    for position, message in enumerate(request.messages):
        if message.role == "assistant":
            text = "".join(p.text for p in message.parts if isinstance(p, Text))
            calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = [{**(c.echo or {}), "id": c.id, "type": "function",
                                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                                       for c in calls]
            if message.echo and position > loop_start:
                entry.update({k: v for k, v in message.echo.items() if k not in entry})
            out.append(entry)
            continue
        rest: list[Text | Image | Audio] = []
        for part in message.parts:
            if isinstance(part, ToolResultPart):
                out.append({"role": "tool", "tool_call_id": part.call_id, "content": part.text})
                if part.images:  # a tool message holds text only: its images follow as the user's
                    rest.append(Text(f"[Tabwarden: the image(s) of the result of call {part.call_id}]"))
                    rest.extend(part.images)
                sounds = [a for a in part.audio if a.mime in AUDIO_FORMATS]
                if sounds:
                    rest.append(Text(f"[Tabwarden: the audio of the result of call {part.call_id}]"))
                    rest.extend(sounds)
        rest.extend(p for p in message.parts if isinstance(p, (Text, Image)))
        if rest:
            out.append({"role": "user", "content": _user_content(rest)})
    return out


class OpenAIChat:
    """A streaming Chat Completions client for one configured connection."""

    kind = "openai"

    def __init__(self, name: str, *, base_url: str, model: str, api_key: str | None, headers: dict[str, str],
                 max_tokens: int = 4096, timeout_s: float = 120.0, max_retries: int = 2,
                 transport: httpx.AsyncBaseTransport | None = None, accepts_images: bool = False,
                 accepts_audio: bool = False):
        self.name = name
        self.accepts_images = accepts_images
        self.accepts_audio = accepts_audio
        self.model = model
        self.max_tokens = max_tokens
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Accept": "text/event-stream", **headers}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        # OpenAI's own newer models refuse `max_tokens`; compatible servers mostly only know it.
        self._max_field = "max_completion_tokens" if httpx.URL(base_url).host == "api.openai.com" else "max_tokens"
        self._http = SseClient(name, timeout_s=timeout_s, max_retries=max_retries, transport=transport)
        self.left_out: list[LeftOut] = []  # tools the last request could not offer, and why

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
        tools, self.left_out = fit_tools(request.tools, "openai", self.name)
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in tools]
        return body

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one answer; the last event is the Completion."""
        text: list[str] = []
        reasoning: list[str] = []
        reasoning_content: list[str] = []  # DeepSeek's field, which it requires back
        details = _ReasoningDetails(self.name)  # OpenRouter's, which it requires back
        refusal: list[str] = []
        calls = _Calls(self.name)
        finish: str | None = None
        usage = Usage()
        done = False
        # aclosing: a cancelled turn closes the HTTP stream in its own task, at once.
        async with aclosing(self._http.events(self._url, self._headers, self.body(request))) as stream:
            async for event in stream:
                if isinstance(event, RetryWait):
                    yield event
                    continue
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                data = decode_data(event, self.name)
                if not isinstance(data, dict):
                    raise ProviderError("protocol", "an event that is not a JSON object", provider=self.name)
                _raise_stream_error(event.event, data, self.name)
                if isinstance(data.get("usage"), dict):
                    usage = _usage(data["usage"])
                for choice in data.get("choices") or ():
                    if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                        continue
                    delta = choice.get("delta") or {}
                    if not isinstance(delta, dict):
                        raise ProviderError("protocol", "a choice whose delta is not an object", provider=self.name)
                    piece = delta.get("content")
                    if isinstance(piece, str) and piece:
                        text.append(piece)
                        yield TextDelta(piece)
                    if isinstance(delta.get("refusal"), str):
                        refusal.append(delta["refusal"])
                    shown = False
                    for field in ("reasoning_content", "reasoning"):
                        thought = delta.get(field)
                        if isinstance(thought, str) and thought:
                            reasoning.append(thought)
                            if field == "reasoning_content":
                                reasoning_content.append(thought)
                            yield ReasoningDelta(thought)
                            shown = True
                            break
                    if delta.get("reasoning_details") is not None:
                        thought = details.merge(delta["reasoning_details"])
                        if thought and not shown:  # a server that sends the details alone
                            reasoning.append(thought)
                            yield ReasoningDelta(thought)
                    for fragment in delta.get("tool_calls") or ():
                        yield calls.merge(fragment)
                    if choice.get("finish_reason"):
                        finish = str(choice["finish_reason"])
                        if finish == "error":
                            raise ProviderError("server", "the stream ended with finish reason \"error\"",
                                                provider=self.name, details={"stream": True, "partial": "".join(text)[-200:]})
        declined = "".join(refusal).strip()
        if declined:
            # The model's own words for the user, shown as its answer; nothing it asked for runs.
            shown = f"\n\n{declined}" if "".join(text).strip() else declined
            yield TextDelta(shown)
            yield Completion("".join(text) + shown, (), "refusal", usage, "".join(reasoning))
            return
        if finish is None and not done:
            raise ProviderError("network", "the stream ended before the answer was complete", provider=self.name)
        ordered = calls.done()
        stop = _STOP.get(finish or "", "tool_use" if ordered else "end")
        if ordered and stop == "end":
            stop = "tool_use"  # several compatible servers finish tool calls with "stop"
        echo: dict[str, Any] = {}
        if reasoning_content:
            echo["reasoning_content"] = "".join(reasoning_content)
        if details.items:
            echo["reasoning_details"] = details.done()
        yield Completion("".join(text), ordered, stop, usage, "".join(reasoning), echo or None)  # type: ignore[arg-type]


def _raise_stream_error(event_name: str, data: dict[str, Any], provider: str) -> None:
    """An error sent inside the stream, in any of the shapes compatible servers use."""
    error: Any = None
    if "error" in data and data["error"] is not None:
        error = data["error"]
    elif data.get("object") == "error" or event_name == "error":
        error = data
    if error is None:
        return
    message = (error.get("message") or error.get("detail") or json.dumps(error)[:500]) if isinstance(error, dict) \
        else str(error)
    details: dict[str, Any] = {"stream": True}
    if isinstance(error, dict):
        details.update({k: error[k] for k in ("type", "code") if isinstance(error.get(k), (str, int))})
    raise ProviderError("server", f"error in the stream: {str(message)[:500]}", provider=provider, details=details)


class _Calls:
    """Tool calls assembled from their fragments.

    A fragment with the id of a call already started belongs to that call, whatever its index
    (proxies that number every call 0 and interleave their fragments). Otherwise it names its call
    by `index`; without one, a fragment with a new id starts a call and one without an id
    continues the last. A fragment whose index is taken by a call with another id starts a new
    call."""

    MAX_CALLS = 128

    def __init__(self, provider: str):
        self.provider = provider
        self.calls: list[dict[str, Any]] = []
        self.by_index: dict[int, int] = {}

    def merge(self, fragment: Any) -> ToolCallDelta:
        """Add one fragment; the delta tells the UI how far the call has got."""
        if not isinstance(fragment, dict):
            raise ProviderError("protocol", "a tool call fragment that is not an object", provider=self.provider)
        index, call_id = fragment.get("index"), fragment.get("id")
        call_id = call_id if isinstance(call_id, str) and call_id else ""
        if index is not None and (not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < self.MAX_CALLS):
            raise ProviderError("protocol", f"tool call index {index!r} out of range", provider=self.provider)
        position = self._position(index, call_id)
        entry = self.calls[position]
        if call_id:
            entry["id"] = call_id
        function = fragment.get("function") or {}
        if not isinstance(function, dict):
            raise ProviderError("protocol", "a tool call fragment whose function is not an object", provider=self.provider)
        if isinstance(function.get("name"), str) and function["name"] and not entry["name"]:
            entry["name"] = function["name"]
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            entry["args"].append(arguments)
        elif isinstance(arguments, dict):  # some servers send the object itself, whole
            entry["args"] = [json.dumps(arguments)]
        elif arguments is not None:
            raise ProviderError("protocol", f"tool call arguments of type {type(arguments).__name__}", provider=self.provider)
        for key, value in fragment.items():
            if key not in ("index", "id", "type", "function"):
                entry["echo"][key] = _merged(entry["echo"].get(key), value)
        return ToolCallDelta(position, entry["name"], sum(map(len, entry["args"])))

    def _position(self, index: int | None, call_id: str) -> int:
        known = next((n for n, c in enumerate(self.calls) if call_id and c["id"] == call_id), None)
        if known is not None:
            if index is not None:
                self.by_index[index] = known  # fragments without an id go on with it
            return known
        if index is None:
            if self.calls and not call_id:
                return len(self.calls) - 1
            return self._new()
        position = self.by_index.get(index)
        if position is None or (call_id and self.calls[position]["id"] and self.calls[position]["id"] != call_id):
            position = self.by_index[index] = self._new()
        return position

    def _new(self) -> int:
        if len(self.calls) >= self.MAX_CALLS:
            raise ProviderError("protocol", f"more than {self.MAX_CALLS} tool calls in one answer", provider=self.provider)
        self.calls.append({"id": "", "name": "", "args": [], "echo": {}})
        return len(self.calls) - 1

    def done(self) -> tuple[ProviderCall, ...]:
        """The calls in the order they started."""
        return tuple(ProviderCall(c["id"], c["name"], "".join(c["args"]), c["echo"] or None) for c in self.calls)


class _ReasoningDetails:
    """OpenRouter's typed reasoning items (`reasoning.text`, `reasoning.summary`,
    `reasoning.encrypted`) assembled from their fragments: a fragment names its item by `index`
    (one without an index is an item of its own); text, summary, data and signature arrive in
    pieces that join, every other field is kept as last sent."""

    MAX_ITEMS = 256
    _JOINED = ("text", "summary", "data", "signature")

    def __init__(self, provider: str):
        self.provider = provider
        self.items: list[dict[str, Any]] = []
        self.by_index: dict[Any, int] = {}

    def merge(self, fragments: Any) -> str:
        """Add one delta's fragments; returns their readable reasoning text (text and summary)."""
        if not isinstance(fragments, list):
            raise ProviderError("protocol", "reasoning_details that is not an array", provider=self.provider)
        readable: list[str] = []
        for fragment in fragments:
            if not isinstance(fragment, dict) or not isinstance(fragment.get("type", ""), str):
                raise ProviderError("protocol", "a reasoning_details item that is not an object with a type",
                                    provider=self.provider)
            index = fragment.get("index")
            if isinstance(index, bool) or (index is not None and not isinstance(index, int)):
                raise ProviderError("protocol", f"reasoning_details index {index!r} is not a number",
                                    provider=self.provider)
            position = self.by_index.get(index) if index is not None else None
            if position is None:
                if len(self.items) >= self.MAX_ITEMS:
                    raise ProviderError("protocol", f"more than {self.MAX_ITEMS} reasoning_details items",
                                        provider=self.provider)
                self.items.append({})
                position = len(self.items) - 1
                if index is not None:
                    self.by_index[index] = position
            item = self.items[position]
            for key, value in fragment.items():
                if key in self._JOINED and isinstance(value, str):
                    if not isinstance(item.get(key), str):
                        item[key] = ""
                    item[key] += value
                    if key in ("text", "summary"):
                        readable.append(value)
                elif value is not None or key not in item:
                    item[key] = value
        return "".join(readable)

    def done(self) -> list[dict[str, Any]]:
        """The items in the order they started, each as the server's fragments built it."""
        return [dict(item) for item in self.items]


def _merged(old: Any, new: Any) -> Any:
    """`new` laid over `old`: objects merge key by key, strings that arrive in pieces join."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {**old, **{k: _merged(old.get(k), v) for k, v in new.items()}}
    return new


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(input=int(raw.get("prompt_tokens") or 0), output=int(raw.get("completion_tokens") or 0),
                 cache_read=int(cached) if isinstance(cached, int) else None)
