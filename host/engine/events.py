"""`EventBus`: numbers thread events, coalesces streamed deltas, and hands events to sinks.

Every thread-scoped event gets `stream{threadId, epoch, sequence}`; the sequence increases by
one per event within (thread, epoch). Text and reasoning deltas of one item are merged for up
to `COALESCE_S` before they go out, and any other event of the same thread first flushes them,
so a page never sees an `item.complete` before the last piece of its text.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from protocol import ui

log = logging.getLogger("tabwarden.engine")

COALESCE_S = 0.016

Sink = Callable[[Any, "str | None"], None]
"""`sink(event, thread_id)`: thread_id is None for events every page gets."""


class EventBus:
    def __init__(self, epoch: int, coalesce_s: float = COALESCE_S):
        self.epoch = epoch
        self.coalesce_s = coalesce_s
        self._sequence: dict[str, int] = {}
        self._sinks: list[Sink] = []
        # item_id -> (thread_id, text parts, reasoning parts, progress)
        self._pending: dict[str, tuple[str, list[str], list[str], list[str]]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add_sink(self, sink: Sink) -> None:
        """Deliver every event to `sink` from now on."""
        self._sinks.append(sink)

    def remove_sink(self, sink: Sink) -> None:
        """Stop delivering to `sink`."""
        if sink in self._sinks:
            self._sinks.remove(sink)

    def cursor(self, thread_id: str) -> ui.StreamCursor:
        """The next cursor of `thread_id` (consumes a sequence number)."""
        sequence = self._sequence.get(thread_id, 0) + 1
        self._sequence[thread_id] = sequence
        return ui.StreamCursor(thread_id=thread_id, epoch=self.epoch, sequence=sequence)

    def current(self, thread_id: str) -> ui.StreamCursor:
        """The cursor of the last event sent for `thread_id` (sequence 0 → a fresh cursor)."""
        return ui.StreamCursor(thread_id=thread_id, epoch=self.epoch, sequence=max(1, self._sequence.get(thread_id, 0)))

    def emit(self, cls: type, thread_id: str, **fields: Any) -> Any:
        """Build a thread-scoped event with its cursor and send it (after the thread's deltas)."""
        self.flush(thread_id)
        event = cls(thread_id=thread_id, stream=self.cursor(thread_id), **fields)
        self._deliver(event, thread_id)
        return event

    def broadcast(self, event: Any) -> None:
        """Send an event every page gets (activity, alerts, tabs)."""
        self._deliver(event, None)

    def delta(self, thread_id: str, item_id: str, *, text: str = "", reasoning: str = "", progress: str = "") -> None:
        """Queue a piece of streamed text for `item_id`."""
        entry = self._pending.get(item_id)
        if entry is None:
            entry = self._pending[item_id] = (thread_id, [], [], [])
        if text:
            entry[1].append(text)
        if reasoning:
            entry[2].append(reasoning)
        if progress:
            entry[3][:] = [progress]  # only the latest progress line matters
        if self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(self.coalesce_s, self._flush_all)
            except RuntimeError:
                self._flush_all()

    def flush(self, thread_id: str | None = None) -> None:
        """Send the queued deltas (of one thread, or all)."""
        for item_id in [i for i, e in self._pending.items() if thread_id is None or e[0] == thread_id]:
            owner, texts, thoughts, progress = self._pending.pop(item_id)
            body = ui.ItemDeltaBody(text="".join(texts) or None, reasoning="".join(thoughts) or None,
                                    tool_progress=progress[0] if progress else None)
            event = ui.ItemDelta(thread_id=owner, item_id=item_id, delta=body, stream=self.cursor(owner))
            self._deliver(event, owner)
        if not self._pending and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush_all(self) -> None:
        self._timer = None
        self.flush()

    def _deliver(self, event: Any, thread_id: str | None) -> None:
        for sink in list(self._sinks):
            try:
                sink(event, thread_id)
            except Exception:
                log.exception("event sink failed for %s", type(event).__name__)
