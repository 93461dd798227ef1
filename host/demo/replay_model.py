"""The demo's model: a REPLAY of a fixed script, not an AI. It speaks the OpenAI-compatible
`/v1/chat/completions` streaming protocol on 127.0.0.1, so the engine drives it exactly as it
would drive a real provider, and every tool call it makes meets the real gatekeeper.

The script, one step per model call (counted by the tool results already in the conversation):

    1. read_page                       (the shop page is the turn's tab)
    2. batch_actions: type name, type email, click "Sign up"   (refs taken from step 1's snapshot)
    3. navigate to the bank            (a sensitive origin: the gatekeeper denies it)
    4. a closing message that says what happened, marked as a replay
"""

from __future__ import annotations

import http.server
import json
import re
import threading
from typing import Any

MODEL_ID = "tabwarden-demo-replay"
REPLAY_MARK = "[replay script, not an AI]"
DEMO_NAME = "Ada Lovelace"
DEMO_EMAIL = "ada@example.com"


def _ref(snapshot: str, role: str, name: str) -> str | None:
    match = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=([^\]]+)\]', snapshot)
    return match.group(1) if match else None


def next_step(messages: list[dict[str, Any]], bank_url: str) -> dict[str, Any]:
    """What the script does next, given the conversation so far: a tool call or a final text."""
    results = [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]
    if len(results) == 0:
        return {"tool": "read_page", "arguments": {}}
    if len(results) == 1:
        snapshot = results[0]
        name, email, join = (_ref(snapshot, "textbox", "Name"), _ref(snapshot, "textbox", "Email"),
                             _ref(snapshot, "button", "Sign up"))
        if not (name and email and join):
            return {"text": f"{REPLAY_MARK} The sign-up form was not in the snapshot; stopping here."}
        return {"tool": "batch_actions", "arguments": {"actions": [
            {"action": "type", "element": "Name field", "ref": name, "text": DEMO_NAME},
            {"action": "type", "element": "Email field", "ref": email, "text": DEMO_EMAIL},
            {"action": "click", "element": "Sign up button", "ref": join},
        ]}}
    if len(results) == 2:
        return {"tool": "navigate", "arguments": {"url": bank_url}}
    signed_up = "Thanks," in results[1]
    form = "signed you up for the newsletter" if signed_up else "did not fill the sign-up form (it was not approved)"
    return {"text": f"{REPLAY_MARK} I read the shop page, {form}, and was refused the bank page by the "
                    "gatekeeper, as the script expects."}


def sse_events(step: dict[str, Any], call_number: int) -> list[str]:
    """The `data:` events of one streamed answer."""
    def event(delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
        return "data: " + json.dumps({"id": f"replay-{call_number}", "object": "chat.completion.chunk",
                                      "model": MODEL_ID, "choices": choices, **extra}) + "\n\n"

    if "tool" in step:
        call = {"index": 0, "id": f"replay_call_{call_number}", "type": "function",
                "function": {"name": step["tool"], "arguments": json.dumps(step["arguments"])}}
        events = [event({"role": "assistant", "tool_calls": [call]}), event({}, "tool_calls")]
    else:
        events = [event({"role": "assistant", "content": step["text"]}), event({}, "stop")]
    events.append(event(None, usage={"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}))
    return events + ["data: [DONE]\n\n"]


class ReplayModel:
    """The script behind an HTTP server on 127.0.0.1 (from a thread)."""

    def __init__(self, bank_url: str):
        self.bank_url = bank_url
        self.calls = 0
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                model._answer(self)

            def log_message(self, *args: object) -> None:
                return None

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        """What to configure as the provider's base URL."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def _answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        if handler.path != "/v1/chat/completions":
            handler.send_error(404)
            return
        try:
            body = json.loads(handler.rfile.read(int(handler.headers.get("content-length") or 0)) or b"{}")
            messages = body["messages"]
        except (ValueError, KeyError, TypeError):
            handler.send_error(400, "not a chat completions request")
            return
        with self._lock:
            self.calls += 1
            number = self.calls
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()
        for chunk in sse_events(next_step(messages, self.bank_url), number):
            handler.wfile.write(chunk.encode())
        handler.wfile.flush()

    def __enter__(self) -> "ReplayModel":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
