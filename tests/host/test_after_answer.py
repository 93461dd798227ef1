"""Work a call leaves until its answer has gone (host/calls/after_answer.py): held while the
request runs, run after the answer's writer has had its turn, and never lost."""

from __future__ import annotations

import asyncio
import logging

from host.calls import after_answer


async def test_outside_a_request_the_work_runs_at_once():
    ran: list[str] = []
    after_answer.later(lambda: ran.append("audit"))
    assert ran == ["audit"]


async def test_the_work_waits_for_the_answer_and_runs_after_the_writer():
    ran: list[str] = []
    with after_answer.collecting() as batch:
        after_answer.later(lambda: ran.append("audit"))

        async def in_a_task_started_inside() -> None:
            after_answer.later(lambda: ran.append("from a task"))

        await asyncio.ensure_future(in_a_task_started_inside())
    assert ran == []
    # The answer is queued: its writer was woken just before the batch finishes.
    asyncio.get_running_loop().call_soon(ran.append, "answer written")
    await after_answer.finish(batch)
    assert ran == ["answer written", "audit", "from a task"]


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
    assert ran == ["audit"] and "work left for after an answer failed" in caplog.text


async def test_a_cancelled_finish_still_runs_the_work():
    ran: list[str] = []
    with after_answer.collecting() as batch:
        after_answer.later(lambda: ran.append("audit"))
    finishing = asyncio.ensure_future(after_answer.finish(batch))
    await asyncio.sleep(0)  # it waits for its turn
    finishing.cancel()
    await asyncio.gather(finishing, return_exceptions=True)
    assert ran == ["audit"]
