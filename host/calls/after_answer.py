"""Work a call may leave until its answer is on its way: bookkeeping that nobody waits for and
that nothing depends on before the answer (the audit row of how a read ended; the decision it
ran under was recorded before it ran).

Whoever answers a request can collect that work around it (`collecting`) and run it once the
answer has gone (`finish`), so it never delays the answer. Anywhere else, or once the request's
batch is finished (a call that goes on after its request was answered, waiting for an approval),
`later` runs the work at once. A failure of the work is logged, never raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator

log = logging.getLogger("tabwarden.calls")


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
    """Run the batch's work after the answer, which the caller has just queued for its writer:
    one turn of the event loop lets the writer send it first. The work runs even when the wait
    is cancelled."""
    try:
        if batch.works:
            await asyncio.sleep(0)
    finally:
        batch.finished = True
        works, batch.works = batch.works, []
        for work in works:
            _run(work)


def _run(work: Callable[[], None]) -> None:
    try:
        work()
    except Exception:
        log.warning("work left for after an answer failed", exc_info=True)
