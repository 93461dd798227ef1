"""Manual takeover: a person pressed a key or the mouse in a tab an agent thread is writing to.
Those threads pause (their page tools fail with `paused`) until they are resumed (the next turn
resumes them), so agent and person never fight over one page. The listeners hear about each
pause: the engine interrupts the thread's turn with a notice, the control socket broadcasts it."""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

from host.tools.failure import ToolCode, ToolFailure

log = logging.getLogger("tabwarden.browser")

Listener = Callable[[str, dict[str, Any]], None]


class Takeover:
    """Which threads are paused, and why."""

    def __init__(self) -> None:
        self._paused: dict[str, dict[str, Any]] = {}
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        """Call `listener(thread_id, info)` on every new pause."""
        self._listeners.append(listener)

    def manual_input(self, tab_id: int, kind: str, threads: list[str], url: str = "") -> list[str]:
        """Pause `threads` (those driving `tab_id`); returns the ones newly paused."""
        paused = []
        for thread_id in threads:
            if thread_id in self._paused:
                continue
            info = {"threadId": thread_id, "tabId": tab_id, "kind": kind, "url": url[:2000], "at": time.time(),
                    "reason": "manual_input"}
            self._paused[thread_id] = info
            paused.append(thread_id)
            log.info("thread %s paused: manual %s in tab %d", thread_id, kind, tab_id)
            for listener in self._listeners:
                try:
                    listener(thread_id, info)
                except Exception:
                    log.exception("takeover listener failed")
        return paused

    def check(self, thread_id: str) -> None:
        """Raise `paused` when the thread is paused."""
        info = self._paused.get(thread_id)
        if info is not None:
            raise ToolFailure(
                ToolCode.PAUSED,
                f"the user took over tab {info['tabId']} ({info['kind']}); this task is paused until the user resumes it",
                phase="authorize", details={"dispatched": False, "pausedTab": info["tabId"]},
            )

    def resume(self, thread_id: str) -> bool:
        """Lift a pause; returns whether there was one."""
        return self._paused.pop(thread_id, None) is not None

    def paused(self) -> list[dict[str, Any]]:
        """Every current pause."""
        return list(self._paused.values())
