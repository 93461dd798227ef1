"""The demo's two local sites, each on its own 127.0.0.1 port (so each is its own origin): a
shop with a sign-up form, and a bank the demo marks as sensitive."""

from __future__ import annotations

import http.server
import threading

from protocol.bundle import data_file

PAGES_PACKAGE = "host.demo"


class LocalSite:
    """Serves one bundled page at `/` on 127.0.0.1 (an ephemeral port) from a thread."""

    def __init__(self, page: str):
        body = data_file(PAGES_PACKAGE, page)

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                if self.path.split("?", 1)[0] != "/":
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/html; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self) -> str:
        return self.origin + "/"

    def __enter__(self) -> "LocalSite":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
