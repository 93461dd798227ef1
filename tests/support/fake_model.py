"""Local fake model servers speaking real HTTP and Server-Sent Events: an OpenAI-compatible
`/v1/chat/completions` and an Anthropic `/v1/messages`. Each answers POSTs from a script of
`Reply` objects (or functions of the request body returning one) and records every request,
so tests can check what the engine sent (tools offered, fences, tool results)."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Union


@dataclass
class Reply:
    """One scripted answer."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish: str | None = None  # provider-native finish/stop reason; derived when None
    usage: tuple[int, int] = (11, 7)
    # Fail instead: HTTP status, JSON body, extra headers.
    status: int | None = None
    error_body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # An error event inside an otherwise fine stream (after the text).
    stream_error: dict[str, Any] | None = None
    # Block after the first text chunk until this is set (or the client goes away).
    hold: threading.Event | None = None
    # End the stream without a finish reason / message_stop.
    truncate: bool = False
    # Raw argument text for the first tool call (to send invalid JSON).
    raw_arguments: str | None = None
    reasoning: str = ""
    # The model declines: its words as OpenAI's `delta.refusal` (after any text and calls), or
    # Anthropic's text with `stop_reason: refusal`.
    refusal: str = ""


Script = Union[Reply, Callable[[dict[str, Any]], Reply]]


def _chunks(text: str, n: int = 3) -> list[str]:
    if not text:
        return []
    size = max(1, len(text) // n)
    return [text[i:i + size] for i in range(0, len(text), size)]


class _Server:
    path = "/"

    def __init__(self, replies: Iterable[Script] = ()):
        self.replies: deque[Script] = deque(replies)
        self.requests: list[dict[str, Any]] = []
        self.disconnects = 0
        self.lock = threading.Lock()
        self.request_seen = threading.Condition(self.lock)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                server._handle(self)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    # -- scripting --------------------------------------------------------------------------

    def add(self, *replies: Script) -> None:
        """Queue answers for the next requests, in order."""
        with self.lock:
            self.replies.extend(replies)

    def wait_requests(self, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """Block until `count` requests arrived; return them."""
        deadline = time.monotonic() + timeout
        with self.request_seen:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"expected {count} model requests, got {len(self.requests)}")
                self.request_seen.wait(left)
            return list(self.requests)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- serving ----------------------------------------------------------------------------

    def _handle(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = json.loads(handler.rfile.read(length) or b"{}")
        with self.request_seen:
            self.requests.append({"path": handler.path, "headers": dict(handler.headers), "body": body})
            self.request_seen.notify_all()
            script = self.replies.popleft() if self.replies else None
        if handler.path != self.path:
            return self._error(handler, 404, {"error": {"message": f"no route {handler.path}"}}, {})
        if script is None:
            return self._error(handler, 500, {"error": {"message": "fake script exhausted"}}, {})
        reply = script(body) if callable(script) else script
        if reply.status is not None:
            return self._error(handler, reply.status, reply.error_body or {"error": {"message": "scripted error"}},
                               reply.headers)
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()
        try:
            for event in self.events(reply, body):
                if event is None:  # the hold point
                    self._hold(handler, reply.hold)
                    continue
                handler.wfile.write(event.encode())
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            with self.lock:
                self.disconnects += 1

    def _hold(self, handler, gate: threading.Event | None) -> None:
        while gate is not None and not gate.wait(0.05):
            handler.wfile.write(b": waiting\n\n")
            handler.wfile.flush()

    def _error(self, handler, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)

    def events(self, reply: Reply, body: dict[str, Any]):
        raise NotImplementedError


class FakeOpenAI(_Server):
    """`POST /v1/chat/completions`; `url` is the base URL to configure (…/v1)."""

    path = "/v1/chat/completions"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def events(self, reply: Reply, body: dict[str, Any]):
        def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
            choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
            return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": choices,
                                          **extra}) + "\n\n"

        yield chunk({"role": "assistant", "content": ""})
        if reply.reasoning:
            yield chunk({"reasoning_content": reply.reasoning})
        pieces = _chunks(reply.text)
        for i, piece in enumerate(pieces):
            yield chunk({"content": piece})
            if i == 0 and reply.hold is not None:
                yield None
        if not pieces and reply.hold is not None:
            yield None
        for index, (name, args) in enumerate(reply.tool_calls):
            raw = reply.raw_arguments if (index == 0 and reply.raw_arguments is not None) else json.dumps(args)
            half = len(raw) // 2
            yield chunk({"tool_calls": [{"index": index, "id": f"call_{index}_x", "type": "function",
                                         "function": {"name": name, "arguments": raw[:half]}}]})
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[half:]}}]})
        for piece in _chunks(reply.refusal) if reply.refusal else ():
            yield chunk({"refusal": piece})
        if reply.stream_error is not None:
            yield "data: " + json.dumps({"error": reply.stream_error}) + "\n\n"
            return
        if reply.truncate:
            return
        finish = reply.finish or ("tool_calls" if reply.tool_calls else "stop")
        yield chunk({}, finish)
        yield chunk(None, usage={"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1],
                                 "total_tokens": sum(reply.usage)})
        yield "data: [DONE]\n\n"


class FakeAnthropic(_Server):
    """`POST /v1/messages`; `url` is the base URL to configure."""

    path = "/v1/messages"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def events(self, reply: Reply, body: dict[str, Any]):
        def event(kind: str, **data: Any) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

        yield event("message_start", message={"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                              "model": body.get("model"), "usage": {"input_tokens": reply.usage[0],
                                                                                    "output_tokens": 1}})
        index = 0
        if reply.reasoning:
            yield event("content_block_start", index=index, content_block={"type": "thinking", "thinking": ""})
            yield event("content_block_delta", index=index, delta={"type": "thinking_delta", "thinking": reply.reasoning})
            yield event("content_block_stop", index=index)
            index += 1
        pieces = _chunks(reply.text + reply.refusal)
        if pieces or reply.hold is not None:
            yield event("content_block_start", index=index, content_block={"type": "text", "text": ""})
            yield event("ping")
            for i, piece in enumerate(pieces):
                yield event("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
                if i == 0 and reply.hold is not None:
                    yield None
            if not pieces and reply.hold is not None:
                yield None
            yield event("content_block_stop", index=index)
            index += 1
        for number, (name, args) in enumerate(reply.tool_calls):
            raw = reply.raw_arguments if (number == 0 and reply.raw_arguments is not None) else json.dumps(args)
            yield event("content_block_start", index=index,
                        content_block={"type": "tool_use", "id": f"toolu_{number}", "name": name, "input": {}})
            half = len(raw) // 2
            yield event("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": raw[:half]})
            yield event("content_block_delta", index=index, delta={"type": "input_json_delta", "partial_json": raw[half:]})
            yield event("content_block_stop", index=index)
            index += 1
        if reply.stream_error is not None:
            yield event("error", error=reply.stream_error)
            return
        if reply.truncate:
            return
        finish = reply.finish or ("refusal" if reply.refusal else "tool_use" if reply.tool_calls else "end_turn")
        yield event("message_delta", delta={"stop_reason": finish, "stop_sequence": None},
                    usage={"output_tokens": reply.usage[1]})
        yield event("message_stop")


def tool_results(body: dict[str, Any]) -> list[str]:
    """Every tool result the engine sent, oldest first (either API's shape)."""
    out = []
    for message in body.get("messages", []):
        if message.get("role") == "tool":
            out.append(str(message.get("content")))
        elif isinstance(message.get("content"), list):
            out.extend(str(part.get("content")) for part in message["content"]
                       if isinstance(part, dict) and part.get("type") == "tool_result")
    return out


def last_tool_result_text(body: dict[str, Any]) -> str:
    """The newest tool result the engine sent (either API's shape), "" if none."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return str(message.get("content") or "")
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return str(block.get("content") or "")
    return ""
