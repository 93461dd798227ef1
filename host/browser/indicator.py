"""The host side of the page indicator ("Tabwarden is operating", pause, stop).

The browser service (`BrowserTools`) tells it which tabs each thread's turn drives (`driving`) and when the turn ends
or waits on the user (`release`); it asks the extension to show or hide the indicator in those
tabs (`indicator.show` / `indicator.hide`, in order, never blocking a tool call). A click on the
indicator's pause or stop comes back as a `browser.event` named `indicator.action`; the threads
driving that tab get the action (`on_action(thread_id, "pause"|"stop")`).

The indicator is a courtesy: a page the extension cannot script simply has none, and a failure
to show or hide it never fails a tool.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tabwarden.builtins")

ACTIONS = ("pause", "stop")
Action = Callable[[str, str], "Awaitable[None] | None"]


class PageIndicator:
    """Which threads drive which tabs, and the indicator in each of those tabs."""

    def __init__(self, bridge: Any, on_action: Action | None = None):
        self.bridge = bridge
        self.on_action = on_action
        self._tabs: dict[int, set[str]] = {}
        self._queue: asyncio.Queue[tuple[str, int]] | None = None
        self._worker: asyncio.Task[None] | None = None

    def threads_on(self, tab_id: int) -> list[str]:
        """The threads whose turn drives `tab_id`."""
        return sorted(self._tabs.get(tab_id, ()))

    def tabs_of(self, thread_id: str) -> list[int]:
        """The tabs `thread_id`'s turn drives."""
        return sorted(tab for tab, threads in self._tabs.items() if thread_id in threads)

    def driving(self, thread_id: str, tab_id: int | None) -> None:
        """The thread's turn acts on `tab_id`: show the indicator there (once)."""
        if tab_id is None or tab_id < 0:
            return
        threads = self._tabs.setdefault(tab_id, set())
        if thread_id in threads:
            return
        threads.add(thread_id)
        if len(threads) == 1:
            self._send("indicator.show", tab_id)

    def release(self, thread_id: str) -> None:
        """The thread's turn ended (or waits on the user): hide the indicator where no other
        thread drives the tab."""
        for tab_id in self.tabs_of(thread_id):
            threads = self._tabs[tab_id]
            threads.discard(thread_id)
            if not threads:
                del self._tabs[tab_id]
                self._send("indicator.hide", tab_id)

    def _send(self, api: str, tab_id: int) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._queue is None or self._worker is None or self._worker.done():
            self._queue = asyncio.Queue()
            self._worker = loop.create_task(self._work(self._queue), name="page-indicator")
        self._queue.put_nowait((api, tab_id))

    async def _work(self, queue: asyncio.Queue[tuple[str, int]]) -> None:
        while True:
            api, tab_id = await queue.get()
            try:
                await self.bridge.api(api, tab_id, timeout=5.0)
            except Exception as exc:  # no browser, no site access, a closed tab: no indicator, nothing else
                log.debug("%s tab %d: %s", api, tab_id, exc)

    async def on_event(self, event: Any) -> None:
        """A `browser.event`: act on `indicator.action` {tabId, action}; ignore everything else."""
        if getattr(event, "name", None) != "indicator.action":
            return
        data = event.data if isinstance(event.data, dict) else {}
        tab_id, action = data.get("tabId"), data.get("action")
        if not isinstance(tab_id, int) or isinstance(tab_id, bool) or action not in ACTIONS:
            log.warning("ignoring a malformed indicator action: %r", data)
            return
        threads = self.threads_on(tab_id)
        if not threads:
            log.info("indicator %s in tab %d, but no turn drives it", action, tab_id)
            return
        for thread_id in threads:
            log.info("indicator: %s thread %s from tab %d", action, thread_id, tab_id)
            if self.on_action is not None:
                outcome = self.on_action(thread_id, action)
                if outcome is not None:
                    await outcome

    async def close(self) -> None:
        """Stop the worker (pending shows and hides are dropped)."""
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
