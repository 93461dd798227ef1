"""The approvals direct calls wait on: answered once, unknown ids and bad answers refused, and
an approval nobody answers ends as a timeout."""

from __future__ import annotations

import asyncio

import pytest

from host.calls.held import HeldApprovals, UnknownApproval


async def test_an_answer_reaches_the_waiting_call_once():
    held = HeldApprovals()
    waiting = held.open("repl", {"tool": "click"})
    assert [h.approval_id for h in held.pending("repl")] == [waiting.approval_id] and held.pending("other") == []
    task = asyncio.ensure_future(held.wait(waiting))
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="unknown answer 'yes'"):
        held.answer(waiting.approval_id, "yes")
    held.answer(waiting.approval_id, "accept")
    assert await task == ("accept", None)
    with pytest.raises(UnknownApproval):
        held.answer(waiting.approval_id, "accept")
    assert held.pending() == []


async def test_nobody_answering_is_a_timeout():
    held = HeldApprovals(timeout_s=0.05)
    waiting = held.open("repl", {"tool": "click"})
    assert await held.wait(waiting) == ("timeout", None)
    assert held.pending() == []
