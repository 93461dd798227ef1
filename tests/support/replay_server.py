"""A model provider that answers with recorded bytes, exactly: the transcripts in
`tests/fixtures/providers/` (or bytes a test writes), over real HTTP, with the status and headers
given and, where a test needs time to pass, pauses between pieces. Every request body is kept."""

from __future__ import annotations

import http.server
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRANSCRIPTS = Path(__file__).resolve().parents[1] / "fixtures" / "providers"


def transcript(name: str) -> bytes:
    """A recorded stream from the fixtures folder, byte for byte."""
    return (TRANSCRIPTS / name).read_bytes()


@dataclass
class Answer:
    """One answer: `body` is the bytes, or pieces (bytes) with pauses (seconds) between them."""

    body: bytes | list[bytes | float] = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/event-stream"})


class ReplayServer:
    """Answers each POST with the next `Answer` (the last one again when they run out)."""

    def __init__(self, *answers: Answer):
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []  # when each request arrived (time.monotonic)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server.times.append(time.monotonic())
                server.requests.append(json.loads(raw or b"{}"))
                answer = server.answers[min(len(server.requests) - 1, len(server.answers) - 1)]
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = answer.body if isinstance(answer.body, list) else [answer.body]
                try:
                    for piece in pieces:
                        if isinstance(piece, (int, float)):
                            time.sleep(piece)
                        else:
                            self.wfile.write(piece)
                            self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up, as some tests want
                self.close_connection = True

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (OpenAI-style clients add /chat/completions, Anthropic ones /v1/messages)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> "ReplayServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
