"""The engine of a host a real browser started, driven over its control socket as a page would
(`engine.op`), with its event stream collected; and the browser's tabs as that host sees them."""

from __future__ import annotations

import urllib.request
import uuid

from tests.support.hosts import attach
from tests.support.waiting import until


class EngineOverControl:
    """The engine over the control socket, with its event stream collected."""

    def __init__(self, control):
        self.control = control
        self.events: list[dict] = []
        control.listen(lambda event: self.events.append(event.data) if event.topic == "engine" else None)

    @classmethod
    async def attach(cls) -> "EngineOverControl":
        """Attach to the running host and subscribe to the engine's events."""
        engine = cls(await attach(timeout=30))
        await engine.control.call("host.subscribe", topics=["engine"])
        return engine

    async def op(self, op: dict) -> dict:
        """Send one `protocol.ui` op; its direct answer."""
        # Fresh ids: the same id from the same control client would get the stored answer back.
        return await self.control.call("engine.op", op={"submissionId": uuid.uuid4().hex, **op})

    async def start(self, text: str, tab: dict, policy: str = "auto") -> str:
        """A new thread under `policy`, and a message written from `tab` (as `browser.tabs` lists it)."""
        thread = (await self.op({"type": "thread.create", "permissionPolicy": policy}))["threadId"]
        await self.op({"type": "turn.submit", "threadId": thread, "input": {"text": text, "browserContext": {
            "capturedAt": 1, "defaultTab": {"tabId": tab["id"], "url": tab["url"], "title": tab.get("title", "")}}}})
        return thread

    async def wait(self, event_type: str, thread: str, timeout: float = 60.0) -> dict:
        """The first event of `event_type` in `thread`, waiting for it."""
        def first() -> dict | None:
            return next((e for e in self.events if e.get("type") == event_type and e.get("threadId") == thread), None)

        return await until(first, timeout, lambda: f"{event_type} in {thread} (last events: "
                                                   f"{[e.get('type') for e in self.events[-20:]]})", interval=0.05)

    def results(self, thread: str) -> list[dict]:
        """The results of the thread's tool calls, in order."""
        return [e["result"] for e in self.events
                if e.get("type") == "item.complete" and e.get("threadId") == thread and "tool-call:" in e["itemId"]]


def open_tab(port: int, url: str) -> None:
    """Open a tab at `url` through the browser's DevTools port."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?{url}", method="PUT")
    with urllib.request.urlopen(request, timeout=10):
        pass


async def tab_of(engine: EngineOverControl, part: str) -> dict:
    """The tab whose URL contains `part`, as the host lists it (waiting up to 10 s for it)."""
    async def find():
        tabs = await engine.control.call("browser.tabs")
        return next((t for t in tabs if part in t.get("url", "")), None)

    try:
        return await until(find, 10, f"a tab whose URL contains {part!r}", interval=0.1)
    except AssertionError:
        raise AssertionError(f"no tab with {part!r}: {await engine.control.call('browser.tabs')}") from None
