"""A local HTTP server on a loopback address for fixture pages, run in a thread."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        return None


class PageServer:
    """Serves a folder (the fixture pages by default) on a free port of a loopback address
    (127.0.0.1 unless `host` names another one, such as 127.0.0.2 for a site of its own), in a
    thread."""

    def __init__(self, root: Path = FIXTURES, host: str = "127.0.0.1"):
        handler = functools.partial(_Quiet, directory=str(root))
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
