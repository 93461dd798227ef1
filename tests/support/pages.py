"""A local HTTP server on a loopback address for fixture pages, run in a thread."""

from __future__ import annotations

import functools
import http.server
import threading
import time
import urllib.parse
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"


# The longest a request may ask to be held (`?delay=ms`).
MAX_DELAY_MS = 5000


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """Serves the folder, answers POSTs with a small page, and records every request line (so a
    test can tell that nothing reached this origin). A GET with `delay=ms` in its query is
    answered that much later (a slow resource keeps a page loading)."""

    seen: list[str]

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return None

    def log_request(self, code: object = "-", size: object = "-") -> None:
        self.seen.append(f"{self.command} {self.path}")

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        delay = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("delay", ["0"])[0]
        if delay.isdigit():
            time.sleep(min(int(delay), MAX_DELAY_MS) / 1000)
        super().do_GET()

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(min(length, 1 << 20))
        body = b"<!doctype html><title>Received</title><p>received</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class PageServer:
    """Serves a folder (the fixture pages by default) on a free port of a loopback address
    (127.0.0.1 unless `host` names another one, such as 127.0.0.2 for a site of its own), in a
    thread."""

    def __init__(self, root: Path = FIXTURES, host: str = "127.0.0.1"):
        # Every request line this server answered, in order ("GET /l1/form.html").
        self.root = root
        self.requests: list[str] = []
        handler = functools.partial(type("_Handler", (_Quiet,), {"seen": self.requests}), directory=str(root))
        self.host = host
        self.httpd = http.server.ThreadingHTTPServer((host, 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        """The URL of `path` on this server."""
        return f"http://{self.host}:{self.port}/{path.lstrip('/')}"

    def __enter__(self) -> "PageServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
