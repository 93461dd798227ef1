"""Keeps the user told while storage is down, and gives it the chance to come back.

Every half second the watch reads whether the gatekeeper is closed; while it is, the watch asks it
to heal (the gatekeeper spaces the attempts itself, see `host.gatekeeper.healing`), on a worker
thread so a slow database never holds the event loop. Each change (closed with a cause, a new
cause, open again) goes to every page (`storage.status`) and to control clients (topic
`storage`), so the side panel shows "storage unavailable: <cause>" exactly while calls are
refused, without a call having to fail first. A store that could not be opened at all (a
damaged file) is tried again, 1 s doubling to 15 s apart: once the user moved the file aside or
restored a backup, the gatekeeper and the engine start over it without a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger("tabwarden.host")

POLL_S = 0.5
REOPEN_FIRST_S = 1.0  # a store that never opened is tried again after this, doubling
REOPEN_MAX_S = 15.0


class StorageWatch:
    """One per host process; `start` once the gatekeeper exists."""

    def __init__(self, gatekeeper: Any, tell: Callable[[bool, str], None],
                 reopen: Callable[[], bool] | None = None) -> None:
        self._gatekeeper = gatekeeper
        self._tell = tell  # (available, cause) to pages and clients
        self._reopen = reopen  # opens a store that never opened (True when it did)
        self._reopen_at = 0.0
        self._reopen_delay = REOPEN_FIRST_S
        self._shown = ""  # the cause last told ("" when open)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run the watch until `stop`."""
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop watching (at shutdown)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self.once()
            except Exception:
                log.exception("the storage watch failed once; it keeps watching")
            await asyncio.sleep(POLL_S)

    async def once(self) -> None:
        """Heal if it is due (or open the store, if it never opened), then tell what changed."""
        if self._gatekeeper.closed_because is not None:
            if not await asyncio.to_thread(self._gatekeeper.heal):
                await self._try_reopen()
        cause = self._gatekeeper.closed_because or ""
        if cause == self._shown:
            return
        if cause:
            log.warning("every tool call is refused: %s", cause)
        elif self._shown:
            log.info("storage answers again: tool calls are judged again")
        self._shown = cause
        self._tell(not cause, cause)

    async def _try_reopen(self) -> None:
        loop = asyncio.get_running_loop()
        if self._reopen is None or loop.time() < self._reopen_at:
            return
        if self._reopen():  # on the loop: it starts the engine's tasks; opening a file is quick
            self._reopen_delay = REOPEN_FIRST_S
            return
        self._reopen_at = loop.time() + self._reopen_delay
        self._reopen_delay = min(self._reopen_delay * 2, REOPEN_MAX_S)
