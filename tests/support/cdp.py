"""A minimal Chrome DevTools Protocol client for tests: an independent view of a page (evaluate
script, dispatch trusted input) through the browser's remote-debugging port, so a test can check
what a tool did without asking the tool."""

from __future__ import annotations

import asyncio
import itertools
import json
import urllib.request
from pathlib import Path
from typing import Any

import websockets

from tests.support.waiting import until, wait_until


def debugging_port(profile: Path, timeout: float = 10.0) -> int:
    """The port Chromium chose (`--remote-debugging-port=0`), from DevToolsActivePort."""
    path = profile / "DevToolsActivePort"

    def port() -> int | None:
        try:
            return int(path.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None  # not written yet, or half written

    return wait_until(port, timeout, f"DevToolsActivePort in {profile}")


def page_targets(port: int) -> list[dict[str, Any]]:
    """The page targets the browser lists on its DevTools port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
        return [t for t in json.load(response) if t.get("type") == "page"]


class PageSession:
    """One websocket to one page target."""

    def __init__(self, ws):
        self._ws = ws
        self._ids = itertools.count(1)

    @classmethod
    async def open(cls, port: int, url_part: str) -> "PageSession":
        """A session on the first page whose URL contains `url_part` (waiting about 5 s for it)."""
        def target() -> dict[str, Any] | None:
            return next((t for t in page_targets(port) if url_part in t.get("url", "")), None)

        found = await until(target, 5, f"a page target whose URL contains {url_part!r}", interval=0.05)
        return cls(await websockets.connect(found["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024))

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one CDP command and return its result; a CDP error fails the test."""
        msg_id = next(self._ids)
        await self._ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(await asyncio.wait_for(self._ws.recv(), 30))
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        """The JSON value of `expression` in the page's main world."""
        result = await self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            raise AssertionError(f"page error: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def navigate(self, url: str) -> None:
        """`Page.navigate` to `url` and wait for the new page's load event (Page domain enabled).
        A load event of a document before it, still queued when the navigation is sent (another
        client navigated the tab meanwhile), is not taken for it: only one after the new
        document's commit counts."""
        msg_id = next(self._ids)
        await self._ws.send(json.dumps({"id": msg_id, "method": "Page.navigate", "params": {"url": url}}))
        loader: str | None = None
        answered = False
        loaded_after: set[str] = set()  # loaders of main-frame documents committed, then loaded
        committed: str | None = None
        while not (answered and (loader is None or loader in loaded_after)):
            message = json.loads(await asyncio.wait_for(self._ws.recv(), 30))
            if message.get("id") == msg_id:
                result = message.get("result", {})
                if "error" in message or result.get("errorText"):
                    raise AssertionError(f"Page.navigate {url}: {message}")
                answered, loader = True, result.get("loaderId")  # none for a move within the document
            method, params = message.get("method"), message.get("params") or {}
            if method == "Page.frameNavigated" and not params.get("frame", {}).get("parentId"):
                committed = params["frame"].get("loaderId")
            elif method == "Page.loadEventFired" and committed is not None:
                loaded_after.add(committed)

    async def trusted_click(self, x: float, y: float) -> None:
        """A real (isTrusted) mouse click at viewport coordinates."""
        for kind in ("mousePressed", "mouseReleased"):
            await self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    async def close(self) -> None:
        """Close the websocket."""
        await self._ws.close()


async def evaluate_target(port: int, pick: Any, expression: str) -> Any:
    """The JSON value of `expression` in the first target `pick` accepts (waiting up to 5 s for it)."""
    def target() -> dict[str, Any] | None:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
            return next((t for t in json.load(response) if pick(t)), None)

    found = await until(target, 5, "a CDP target the test accepts", interval=0.05)
    async with websockets.connect(found["webSocketDebuggerUrl"], max_size=2**24) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                                  "params": {"expression": expression, "awaitPromise": True, "returnByValue": True}}))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if reply.get("id") == 1:
                result = reply["result"]
                assert "exceptionDetails" not in result, result
                return result["result"].get("value")


async def evaluate_in_worker(port: int, expression: str) -> Any:
    """The JSON value of `expression` in our extension's service worker (its test hooks live there)."""
    return await evaluate_target(port, lambda t: t.get("type") == "service_worker"
                                 and t.get("url", "").startswith("chrome-extension://"), expression)


async def evaluate_in_content_world(port: int, url_part: str, expression: str, *, missing: Any = ...) -> Any:
    """The JSON value of `expression` in our extension's isolated world of the top frame of the
    page whose URL contains `url_part` (where the executor and the takeover watcher run). With
    `missing`, that value when the page has no such world yet (else the test fails)."""
    target = next(t for t in page_targets(port) if url_part in t.get("url", ""))
    async with websockets.connect(target["webSocketDebuggerUrl"], max_size=2**24) as ws:
        await ws.send(json.dumps({"id": 1, "method": "Runtime.enable"}))
        contexts = []
        while True:
            event = json.loads(await asyncio.wait_for(ws.recv(), 10))
            if event.get("method") == "Runtime.executionContextCreated":
                contexts.append(event["params"]["context"])
            if event.get("id") == 1:
                break
        ours = [c["id"] for c in contexts if c.get("auxData", {}).get("type") == "isolated"
                and c.get("origin", "").startswith("chrome-extension://") and c["auxData"].get("isDefault") is False
                and c["auxData"].get("frameId") == target["id"]]
        if not ours and missing is not ...:
            return missing
        assert ours, contexts
        await ws.send(json.dumps({"id": 2, "method": "Runtime.evaluate", "params": {
            "expression": expression, "contextId": ours[0], "awaitPromise": True, "returnByValue": True}}))
        while True:
            reply = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if reply.get("id") == 2:
                assert "exceptionDetails" not in reply["result"], reply
                return reply["result"]["result"].get("value")


async def our_elements(port: int, url_part: str) -> list[dict[str, Any]]:
    """What we draw on the page (the action highlight, the indicator), as the executor knows it by
    reference (a page cannot find it by name): each element's box and computed position."""
    return await evaluate_in_content_world(port, url_part, """(() => {
        const TW = globalThis.__tabwarden;
        if (!TW) return [];
        return [...document.documentElement.children].filter((el) => TW.isOverlayNode(el)).map((el) => {
            const r = el.getBoundingClientRect();
            const style = getComputedStyle(el);
            return { x: r.x, y: r.y, w: r.width, h: r.height, position: style.position, right: style.right,
                     bottom: style.bottom, display: style.display, pointerEvents: style.pointerEvents };
        });
    })()""", missing=[])
