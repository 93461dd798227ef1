"""Per-thread op queues: ops for one thread run one at a time, in arrival order; a thread with
`MAX_PENDING` ops waiting refuses more with `overloaded` instead of growing without bound."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from protocol.errors import TabwardenError

log = logging.getLogger("tabwarden.engine")

MAX_PENDING = 32

Job = Callable[[], Awaitable[None]]


class QueueFull(TabwardenError):
    """The key's queue is full."""

    code = "overloaded"


class OpQueues:
    """One bounded queue and one worker task per key (a thread id, or "" for global ops)."""

    def __init__(self, max_pending: int = MAX_PENDING):
        self.max_pending = max_pending
        self._queues: dict[str, asyncio.Queue[Job]] = {}
        self._workers: dict[str, asyncio.Task[None]] = {}

    def submit(self, key: str, job: Job) -> None:
        """Queue `job` under `key`; raises QueueFull when the key already has a full queue."""
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = asyncio.Queue(self.max_pending)
        try:
            queue.put_nowait(job)
        except asyncio.QueueFull:
            raise QueueFull(f"{self.max_pending} operations are already waiting for this thread") from None
        if key not in self._workers:
            self._workers[key] = asyncio.create_task(self._work(key, queue), name=f"ops:{key[:16]}")

    def pending(self, key: str) -> int:
        """How many ops wait under `key`."""
        queue = self._queues.get(key)
        return queue.qsize() if queue is not None else 0

    async def _work(self, key: str, queue: asyncio.Queue[Job]) -> None:
        try:
            while not queue.empty():
                job = queue.get_nowait()
                try:
                    await job()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("operation for %s failed", key or "engine")
        finally:
            self._workers.pop(key, None)
            if queue.empty():
                self._queues.pop(key, None)

    async def close(self) -> None:
        """Cancel every worker and wait for them."""
        for task in list(self._workers.values()):
            task.cancel()
        for task in list(self._workers.values()):
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
