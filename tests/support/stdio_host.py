"""A real host process (`python -m host host ORIGIN`) whose "browser" is this test: we send the
extension's hello on its stdin and answer its browser calls from a small scripted browser, so
the REPL can be driven against a real host without starting Chromium."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import msgspec

from install.extension_id import default_extension_id
from protocol.errors import ErrorInfo
from protocol.framing import FrameSplitter, browser_encoder, extension_decoder
from protocol.messages import BrowserCall, ContentCall, Failure, GuardInstall, Hello, Ping, Pong, Result
from protocol.schema import schema_hash
from tests.support.fake_snapshot import snapshot
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = f"chrome-extension://{default_extension_id()}/"
TAB = {"id": 7, "url": "https://shop.example/cart", "title": "Cart", "windowId": 1, "status": "complete",
       "active": True, "userLooking": True, "lastAccessed": 1}
# The page's one snapshot; a read answers with its text.
PAGE = snapshot("doc", 1, ("button", "Pay"), ("textbox", "Card", "text"), url=TAB["url"], title=TAB["title"])


class ScriptedBrowser:
    """Answers the host's requests: one tab, site access everywhere, one page snapshot."""

    def answer(self, message: Any) -> Any:
        """The value for a browser or content call; LookupError for anything else."""
        if isinstance(message, BrowserCall):
            return self.api(message.api, message.args)
        if isinstance(message, ContentCall):
            return {"resultText": PAGE["text"], "snapshot": PAGE}
        if isinstance(message, GuardInstall):
            return {"installed": len(message.rules)}
        raise LookupError(f"the scripted browser does not do {type(message).__name__}")

    def api(self, name: str, args: list[Any]) -> Any:
        """The value of an extension API call; LookupError for one it does not have."""
        if name in ("tabs.list", "tabs.query"):
            return [dict(TAB)]
        if name == "tabs.get":
            return dict(TAB)
        if name == "permissions.contains":
            return True
        raise LookupError(f"the scripted browser has no {name}")


class StdioHost:
    """The host process, its stdin/stdout link, and the thread that answers it."""

    def __init__(self, home: Path):
        self.home = home
        env = dict(os.environ, TABWARDEN_HOME=str(home))
        self.proc = subprocess.Popen([sys.executable, "-m", "host", "host", ORIGIN], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        self.browser = ScriptedBrowser()
        self._encoder = browser_encoder()
        self._lock = threading.Lock()
        self.welcomed = threading.Event()
        self._reader = threading.Thread(target=self._serve, daemon=True)
        self._reader.start()
        self._send(Hello(protocol="tabwarden/native-v1", protocol_version=1, schema_hash=schema_hash(),
                         extension_version="0.1.0", browser_session_id="repl-test-session"))

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _send(self, message: Any) -> None:
        with self._lock:
            for frame in self._encoder.encode(message):
                self.proc.stdin.write(frame)
            self.proc.stdin.flush()

    def _serve(self) -> None:
        splitter, decoder = FrameSplitter(), extension_decoder()
        while True:
            data = self.proc.stdout.read1(65536)
            if not data:
                return
            for payload in splitter.feed(data):
                message = decoder.decode(payload)
                if message is None:
                    continue
                if type(message).__name__ == "Welcome":
                    self.welcomed.set()
                elif isinstance(message, Ping):
                    self._send(Pong(id=message.id))
                elif hasattr(message, "id"):
                    self._reply(message)

    def _reply(self, message: Any) -> None:
        try:
            value = self.browser.answer(message)
        except LookupError as exc:
            self._send(Failure(id=message.id, error=ErrorInfo(code="unsupported", message=str(exc))))
            return
        self._send(Result(id=message.id, value=msgspec.Raw(msgspec.json.encode(value))))

    def wait_published(self, timeout: float = 20.0) -> None:
        """Wait for the handshake and for the host's control endpoint to appear."""
        from host.control.discovery import running_hosts

        def published() -> bool:
            if self.welcomed.is_set() and any(h.pid == self.pid for h in running_hosts()):
                return True
            assert self.proc.poll() is None, "the host exited"
            return False

        wait_until(published, timeout, "the host to publish its control endpoint")

    def stop(self) -> int:
        """Close stdin (the browser went away); returns the host's exit code."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
