"""Per-tab serialisation: calls on one tab run one at a time, whichever thread sent them. A call
cancelled while it waits for its turn never runs (and never reaches the page)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class TabQueue:
    """One lock per tab, created on demand and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._locks: dict[int, asyncio.Lock] = {}
        self._users: dict[int, int] = {}

    @asynccontextmanager
    async def hold(self, tab_id: int | None) -> AsyncIterator[None]:
        """Run the body alone on `tab_id` (no serialisation when None)."""
        if tab_id is None:
            yield
            return
        lock = self._locks.setdefault(tab_id, asyncio.Lock())
        self._users[tab_id] = self._users.get(tab_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[tab_id] -= 1
            if self._users[tab_id] == 0:
                del self._users[tab_id]
                self._locks.pop(tab_id, None)

    def busy(self, tab_id: int) -> int:
        """How many calls hold or wait for `tab_id`."""
        return self._users.get(tab_id, 0)
