"""Small HTTP servers for the fetch tests: one scripted site per loopback address, run in a
thread. Routes answer from a dict of path -> (status, headers, body) or a function of the path.
Every request is recorded, whatever its method (a site a test expects never to be reached)."""

from __future__ import annotations

import http.server
import threading
from typing import Callable, Union

Answer = tuple[int, dict[str, str], bytes]
Route = Union[Answer, Callable[[], Answer]]


class Site:
    """One scripted HTTP site on `address`; `routes` may change while it runs, and `hits` lists
    the paths asked for (`requests`: (method, path) of every request, POST and HEAD included)."""

    def __init__(self, address: str = "127.0.0.1", routes: dict[str, Route] | None = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.hits: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.release = threading.Event()  # lets a held answer finish at shutdown
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                site.hits.append(self.path)
                site.requests.append(("GET", self.path))
                self._answer()

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                site.requests.append(("POST", self.path))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self._answer()

            def do_HEAD(self) -> None:  # noqa: N802 - stdlib name
                site.requests.append(("HEAD", self.path))
                self._answer()

            def _answer(self) -> None:
                route = site.routes.get(self.path.split("?")[0])
                if route is None:
                    status, headers, body = 404, {"Content-Type": "text/plain"}, b"not here"
                else:
                    status, headers, body = route() if callable(route) else route
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer((address, 0), Handler)
        self.httpd.daemon_threads = True
        self.address = address
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, host: str, path: str = "/") -> str:
        """The URL of `path` on this site, reached through the name `host`."""
        return f"http://{host}:{self.port}{path}"

    def __enter__(self) -> "Site":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def html(body: str, status: int = 200, **headers: str) -> Answer:
    """An HTML answer."""
    return status, {"Content-Type": "text/html; charset=utf-8", **headers}, body.encode()


def redirect(location: str, status: int = 302) -> Answer:
    """A redirect to `location`."""
    return status, {"Location": location}, b""
