"""A server's `notifications/progress` for one call, as the SDK hands them over: remembered
(when the last came, so the call's timeout can be pushed back) and turned into one short line
for the tool's card ("3/10 — Fetching page 3"). Numbers and the server's message are data from
the server: the message is clipped and stripped of control characters. While the server's
question to the user (or its request for a model answer) is open, the call's clock is stopped
(`clock_stopped`)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import Iterator
from typing import Any, Callable

from host.tools.progress import MAX_LINE

_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def _number(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return f"{value:g}"


class ProgressLine:
    """The SDK's progress callback for one call."""

    def __init__(self, sink: Callable[[str], None] | None):
        self.sink = sink
        self.last: float | None = None  # loop time of the latest report
        self.count = 0
        self.asking = 0  # questions to the user now open; their time does not count
        self.paused = 0.0  # seconds the call spent waiting for the user, all questions together
        self._since = 0.0
        self._answered: asyncio.Future[None] | None = None

    def hold(self) -> None:
        """A question to the user opens: the call's clock stops until every open one is answered."""
        if self.asking == 0:
            self._since = asyncio.get_running_loop().time()
        self.asking += 1

    def release(self) -> None:
        """A question was answered: when none is left open, the clock runs again from now."""
        self.asking -= 1
        if self.asking == 0:
            now = asyncio.get_running_loop().time()
            self.paused += now - self._since
            self.last = now
            if self._answered is not None and not self._answered.done():
                self._answered.set_result(None)

    def answered(self) -> "asyncio.Future[None]":
        """Done once no question is open any more (whoever waits on the call's clock looks again)."""
        if self._answered is None or self._answered.done():
            self._answered = asyncio.get_running_loop().create_future()
        return self._answered

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.last = asyncio.get_running_loop().time()
        self.count += 1
        if self.sink is None:
            return
        done, whole = _number(progress), _number(total)
        line = f"{done}/{whole}" if done and whole else done or ""
        if isinstance(message, str) and message.strip():
            text = _CONTROL.sub(" ", message).strip()
            line = f"{line} — {text}" if line else text
        try:
            self.sink(line[:MAX_LINE] or "working…")
        except Exception:  # the card is a nicety: a sink failing must not fail the call
            pass


@contextlib.contextmanager
def clock_stopped(progress: Any) -> Iterator[None]:
    """Inside, the call of `progress` (a ProgressLine, or None for no call) does not count time
    against its timeout or its stretched limit."""
    if progress is None:
        yield
        return
    progress.hold()
    try:
        yield
    finally:
        progress.release()
