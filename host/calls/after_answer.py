"""Work a call may leave until its answer is on its way: bookkeeping that nobody waits for and
that nothing depends on before the answer (the audit row of how a read ended; the decision it
ran under was recorded before it ran).

Whoever answers a request can collect that work around it (`collecting`) and hand it over once
the answer has gone (`finish`). It then runs once the host has been quiet for `QUIET_S` (each new
answer pushes that back), or before the next request is served or the audit log is read
(`flush`), or when the control server stops, whichever comes first: in the first milliseconds
after an answer its reader and the browser finish their share of the call, and work run then
takes a core from them (on two cores, about half a millisecond of a small page's read). A
request served after another sees the rows that one left, in the order of the calls; a row
written at once meanwhile (a write's, the agent loop's) may come before a read's deferred
outcome, as with any two calls that overlap, and each row carries the time it was written.
Anywhere else, or once the request's batch is finished (a call that goes on after its request
was answered, waiting for an approval), `later` runs the work at once. A failure of the work is
logged, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import weakref
from collections.abc import Callable, Iterator

log = logging.getLogger("tabwarden.calls")

QUIET_S = 0.005


class Batch:
    """The work one request left for after its answer."""

    def __init__(self) -> None:
        self.works: list[Callable[[], None]] = []
        self.finished = False


_current: contextvars.ContextVar[Batch | None] = contextvars.ContextVar("tabwarden_after_answer", default=None)


def later(work: Callable[[], None]) -> None:
    """Run `work` once the current request's answer has gone, or now when there is none."""
    batch = _current.get()
    if batch is None or batch.finished:
        _run(work)
    else:
        batch.works.append(work)


@contextlib.contextmanager
def collecting() -> Iterator[Batch]:
    """Collect the work left by what runs inside (tasks started inside share the batch)."""
    batch = Batch()
    token = _current.set(batch)
    try:
        yield batch
    finally:
        _current.reset(token)


async def finish(batch: Batch) -> None:
    """Hand the batch's work over once the answer is queued for its writer: it runs after
    `QUIET_S` without a new answer, or at the next `flush`. The hand-over awaits nothing, so
    a cancelled caller cannot lose the work."""
    batch.finished = True
    works, batch.works = batch.works, []
    if works:
        _waiting(asyncio.get_running_loop()).hold(works)


def flush() -> None:
    """Run now, in order, the work handed over on this event loop and not run yet."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    waiting = _by_loop.get(loop)
    if waiting is not None:
        waiting.run()


class _Waiting:
    """The work of one event loop handed over after its answers, waiting for a quiet moment. Only
    its pending timer refers to the loop: a loop that ends with nothing held takes its entry with
    it (the host stops its control server, which runs what is held, before its loop ends)."""

    def __init__(self) -> None:
        self.works: list[Callable[[], None]] = []
        self.timer: asyncio.TimerHandle | None = None

    def hold(self, works: list[Callable[[], None]]) -> None:
        self.works.extend(works)
        if self.timer is not None:
            self.timer.cancel()  # another answer just went: its reader is at work now
        self.timer = asyncio.get_running_loop().call_later(QUIET_S, self.run)

    def run(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        works, self.works = self.works, []
        for work in works:
            _run(work)


_by_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Waiting]" = weakref.WeakKeyDictionary()


def _waiting(loop: asyncio.AbstractEventLoop) -> _Waiting:
    waiting = _by_loop.get(loop)
    if waiting is None:
        waiting = _by_loop[loop] = _Waiting()
    return waiting


def _run(work: Callable[[], None]) -> None:
    try:
        work()
    except Exception:
        log.warning("work left for after an answer failed", exc_info=True)
