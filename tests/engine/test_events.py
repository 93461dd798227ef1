"""The event bus: per-thread cursors, delta coalescing, and deltas flushed before any other
event of their thread."""

from __future__ import annotations

import asyncio

from protocol import ui

from host.engine.events import EventBus


def collect(bus: EventBus) -> list:
    seen: list = []
    bus.add_sink(lambda event, thread_id: seen.append(event))
    return seen


async def test_deltas_of_one_item_are_merged_within_the_window():
    bus = EventBus(epoch=3, coalesce_s=0.05)
    seen = collect(bus)
    for piece in ("Hel", "lo ", "wor", "ld"):
        bus.delta("t", "i1", text=piece)
    bus.delta("t", "i1", reasoning="hmm")
    assert seen == []
    await asyncio.sleep(0.1)
    assert len(seen) == 1 and seen[0].delta.text == "Hello world" and seen[0].delta.reasoning == "hmm"
    assert seen[0].stream == ui.StreamCursor(thread_id="t", epoch=3, sequence=1)


async def test_another_event_of_the_thread_flushes_its_deltas_first():
    bus = EventBus(epoch=1, coalesce_s=10)
    seen = collect(bus)
    bus.delta("t", "i1", text="abc")
    bus.delta("u", "i2", text="other thread")
    bus.emit(ui.ItemComplete, "t", item_id="i1")
    assert [type(e).__name__ for e in seen] == ["ItemDelta", "ItemComplete"]
    assert [e.stream.sequence for e in seen] == [1, 2]
    bus.flush()
    assert seen[-1].thread_id == "u" and seen[-1].stream.sequence == 1


async def test_sequences_grow_per_thread_and_a_failing_sink_does_not_stop_the_others():
    bus = EventBus(epoch=2)
    bus.add_sink(lambda event, thread_id: 1 / 0)
    seen = collect(bus)
    for thread in ("a", "b", "a", "a"):
        bus.emit(ui.ThreadDeleted, thread)
    assert [(e.thread_id, e.stream.sequence) for e in seen] == [("a", 1), ("b", 1), ("a", 2), ("a", 3)]
    assert bus.current("a").sequence == 3
