"""A real host process driven the way Chrome drives it (origin argument, stdio frames), with this
module playing the extension: it answers the host's tab, permission and page requests from a
tiny in-memory browser, and plays one side-panel page that sends `ui.op` frames and records the
`ui.event` frames it gets back."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import msgspec

from install.extension_id import default_extension_id
from protocol.framing import FrameSplitter, browser_encoder, extension_decoder
from protocol.messages import (BrowserCall, ContentCall, Failure, GuardInstall, Hello, Ping, Pong, Result, UiConnect, UiEvent, UiOp,
                               Welcome)
from protocol.errors import ErrorInfo
from protocol.schema import schema_hash
from tests.support.fake_snapshot import snapshot

ROOT = Path(__file__).resolve().parents[2]
EXTENSION_ID = default_extension_id()
ORIGIN = f"chrome-extension://{EXTENSION_ID}/"
PAGE_URL = "https://shop.example/cart"
TAB = {"id": 1, "url": PAGE_URL, "title": "Cart", "windowId": 1, "status": "complete", "active": True,
       "lastAccessed": 1}


class StdioBrowser:
    """One host process and the extension side of its stdio link."""

    def __init__(self, home: Path, session: str = "session-kill-test"):
        self.home = home
        self.session = session
        self.events: list[dict[str, Any]] = []
        self.content_calls: list[ContentCall] = []
        self.changed = asyncio.Event()
        self.hold_clicks = False  # leave page writes unanswered (the host dies mid-dispatch)
        self.proc: asyncio.subprocess.Process | None = None
        self._encoder = browser_encoder()
        self._snapshots = 0
        self._reader: asyncio.Task | None = None

    async def start(self) -> Welcome:
        """Start the host, say hello as the extension and connect the side panel; returns the
        host's welcome."""
        env = dict(os.environ, TABWARDEN_HOME=str(self.home))
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "host", "host", ORIGIN, stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, env=env, cwd=str(ROOT))
        self.welcome: asyncio.Future[Welcome] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.create_task(self._read())
        self.send(Hello(protocol="tabwarden/native-v1", protocol_version=1, schema_hash=schema_hash(),
                        extension_version="0.1.0", browser_session_id=self.session))
        welcome = await asyncio.wait_for(self.welcome, 30)
        self.send(UiConnect(client_id="port-1", sender_url=f"{ORIGIN}ui/sidepanel.html", page="sidepanel"))
        return welcome

    def send(self, message: Any) -> None:
        """Send one message to the host as the extension."""
        assert self.proc is not None and self.proc.stdin is not None
        for frame in self._encoder.encode(message):
            self.proc.stdin.write(frame)

    def op(self, op: dict[str, Any]) -> None:
        """Send a side-panel op."""
        self.send(UiOp(client_id="port-1", op=op))

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        splitter, decoder = FrameSplitter(), extension_decoder()
        while True:
            data = await self.proc.stdout.read(65536)
            if not data:
                return
            for payload in splitter.feed(data):
                message = decoder.decode(payload)
                if message is not None:
                    await self._on(message)

    async def _on(self, message: Any) -> None:
        if isinstance(message, Welcome) and not self.welcome.done():
            self.welcome.set_result(message)
        elif isinstance(message, UiEvent):
            self.events.append(message.event)
            self.changed.set()
        elif isinstance(message, Ping):
            self.send(Pong(id=message.id))
        elif isinstance(message, BrowserCall):
            self._answer(message.id, self._api(message.api, message.args))
        elif isinstance(message, GuardInstall):
            self._answer(message.id, {"installed": len(message.rules)})
        elif isinstance(message, ContentCall):
            self.content_calls.append(message)
            self.changed.set()
            if message.write and self.hold_clicks:
                return  # never answered: the host is killed while it waits
            self._snapshots += 1
            refs = snapshot("doc", self._snapshots, ("button", "Buy"), ("textbox", "Quantity"))
            self._answer(message.id, {"resultText": f"{message.tool} done", "snapshot": refs})

    def _api(self, name: str, args: list[Any]) -> Any:
        if name == "tabs.get":
            return dict(TAB) if args and args[0] == 1 else ErrorInfo(code="not_found", message="no tab")
        if name == "tabs.query":
            return [dict(TAB)]
        if name == "permissions.contains":
            return True
        return ErrorInfo(code="unsupported", message=f"no {name} here")

    def _answer(self, request_id: int, value: Any) -> None:
        if isinstance(value, ErrorInfo):
            self.send(Failure(id=request_id, error=value))
        else:
            self.send(Result(id=request_id, value=msgspec.Raw(msgspec.json.encode(value))))

    def of(self, event_type: str) -> list[dict[str, Any]]:
        """The UI events of `event_type` received so far."""
        return [e for e in self.events if e.get("type") == event_type]

    async def wait_for(self, event_type: str, count: int = 1, timeout: float = 30.0) -> dict[str, Any]:
        """The `count`-th UI event of `event_type`, waiting for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.of(event_type)) < count:
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"no {event_type} #{count}; got {[e.get('type') for e in self.events[-20:]]}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass
        return self.of(event_type)[count - 1]

    async def wait_content(self, tool: str, count: int = 1, timeout: float = 30.0) -> ContentCall:
        """The `count`-th content call for `tool`, waiting for it."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len([c for c in self.content_calls if c.tool == tool]) < count:
            if loop.time() > deadline:
                raise AssertionError(f"no {tool} content call #{count}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), 0.2)
            except asyncio.TimeoutError:
                pass
        return [c for c in self.content_calls if c.tool == tool][count - 1]

    def kill(self) -> None:
        """SIGKILL the host: no shutdown code runs."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)

    async def wait_exit(self, timeout: float = 20.0) -> int:
        """Wait for the host to exit and the reader to finish; returns the exit code."""
        assert self.proc is not None
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        if self._reader is not None:
            await asyncio.wait_for(self._reader, timeout)
        return code

    async def close(self) -> int:
        """End the link as Chrome does (EOF) and wait for the host to exit."""
        assert self.proc is not None
        if self.proc.returncode is None:
            if self.proc.stdin is not None and not self.proc.stdin.is_closing():
                self.proc.stdin.close()
            try:
                return await self.wait_exit()
            except asyncio.TimeoutError:
                self.kill()
        return await self.wait_exit()
