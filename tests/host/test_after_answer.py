"""Work a call leaves until its answer has gone (host/calls/after_answer.py): held while the
request runs, run once the host has been quiet for a moment or before the next request, in
order, and never lost."""

from __future__ import annotations

import asyncio
import logging

from host.calls import after_answer


async def test_outside_a_request_the_work_runs_at_once():
    ran: list[str] = []
    after_answer.later(lambda: ran.append("audit"))
    assert ran == ["audit"]


async def test_the_work_waits_for_the_answer_and_then_for_a_quiet_moment():
    ran: list[str] = []
    with after_answer.collecting() as batch:
        after_answer.later(lambda: ran.append("audit"))

        async def in_a_task_started_inside() -> None:
            after_answer.later(lambda: ran.append("from a task"))

        await asyncio.ensure_future(in_a_task_started_inside())
    assert ran == []
    await after_answer.finish(batch)
    await asyncio.sleep(0)
    assert ran == []  # the answer's reader has the moment after it to itself
    await asyncio.sleep(after_answer.QUIET_S * 4)
    assert ran == ["audit", "from a task"]


async def test_a_flush_runs_what_every_answer_left_in_their_order():
    ran: list[str] = []
    for name in ("first", "second"):
        with after_answer.collecting() as batch:
            after_answer.later(lambda name=name: ran.append(name))
        await after_answer.finish(batch)
    assert ran == []
    after_answer.flush()
    assert ran == ["first", "second"]
    await asyncio.sleep(after_answer.QUIET_S * 4)
    assert ran == ["first", "second"]  # run once only


async def test_work_left_after_the_answer_runs_at_once():
    ran: list[str] = []
    with after_answer.collecting() as batch:
        await after_answer.finish(batch)
        # A call that goes on after its request was answered (it waits for an approval).
        after_answer.later(lambda: ran.append("late audit"))
    assert ran == ["late audit"]


async def test_a_failing_work_is_logged_and_the_rest_still_runs(caplog):
    caplog.set_level(logging.WARNING, "tabwarden.calls")
    ran: list[str] = []
    with after_answer.collecting() as batch:
        after_answer.later(lambda: 1 / 0)
        after_answer.later(lambda: ran.append("audit"))
    await after_answer.finish(batch)
    after_answer.flush()
    assert ran == ["audit"] and "work left for after an answer failed" in caplog.text


async def test_a_finish_cancelled_once_started_still_hands_the_work_over():
    ran: list[str] = []
    with after_answer.collecting() as batch:
        after_answer.later(lambda: ran.append("audit"))
    finishing = asyncio.ensure_future(after_answer.finish(batch))
    await asyncio.sleep(0)
    finishing.cancel()
    await asyncio.gather(finishing, return_exceptions=True)
    after_answer.flush()
    assert ran == ["audit"]


def test_the_work_of_one_event_loop_is_not_run_by_another():
    ran: list[str] = []

    async def leave() -> None:
        with after_answer.collecting() as batch:
            after_answer.later(lambda: ran.append("left"))
        await after_answer.finish(batch)

    first = asyncio.new_event_loop()
    try:
        first.run_until_complete(leave())

        async def flush_elsewhere() -> None:
            after_answer.flush()

        asyncio.run(flush_elsewhere())
        assert ran == []
        first.run_until_complete(asyncio.sleep(after_answer.QUIET_S * 4))
        assert ran == ["left"]
    finally:
        first.close()
