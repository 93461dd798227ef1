"""Approvals asked by calls made outside a conversation (the REPL's `tw.run`): the call waits on
the host, holding its place on the authorisation path, while the person at the REPL answers with
`tw.approve()` or `tw.decline()` (the `tools.answer` control method). Nothing is persisted: a
call that waits here was never sent, so a host that stops simply forgets it; an approval nobody
answers in time ends as `timed_out`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

DEFAULT_TIMEOUT_S = 300.0
ANSWERS = ("accept", "acceptForSession", "acceptForSite", "decline")
TIMEOUT = "timeout"
_ids = itertools.count(1)


class UnknownApproval(LookupError):
    """No approval with that id waits here (answered, timed out, or never asked)."""


@dataclass
class Held:
    """One approval a direct call waits on."""

    approval_id: str
    thread_id: str
    request: dict[str, Any]  # what the card shows: tool, label, params, targetOrigin, reason, code, flags
    deadline: float
    answer: "asyncio.Future[tuple[str, str | None]]"
    outcome: "asyncio.Future[Any] | None" = None  # the call's result, for whoever answers
    created_at: float = field(default_factory=time.time)

    def view(self, now: float) -> dict[str, Any]:
        """The approval as `tools.approvals` lists it (the shape of `engine.approvals`' items)."""
        return {"approvalId": self.approval_id, "threadId": self.thread_id, "request": self.request,
                "remainingMs": max(0, int((self.deadline - now) * 1000)), "direct": True}


class HeldApprovals:
    """The approvals direct calls wait on, in one host."""

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S, clock: Callable[[], float] = time.time):
        self.timeout_s = timeout_s
        self.clock = clock
        self._held: dict[str, Held] = {}

    def open(self, thread_id: str, request: dict[str, Any]) -> Held:
        """Start waiting for an answer to `request`."""
        approval_id = f"run-{os.getpid() % 10000}-{next(_ids)}"
        held = Held(approval_id, thread_id, request, self.clock() + self.timeout_s,
                    asyncio.get_running_loop().create_future())
        self._held[approval_id] = held
        return held

    def pending(self, thread_id: str | None = None) -> list[Held]:
        """The approvals still waiting, oldest first (of one thread, or all)."""
        return [h for h in self._held.values() if thread_id is None or h.thread_id == thread_id]

    def get(self, approval_id: str) -> Held:
        """The waiting approval `approval_id`; raises UnknownApproval."""
        held = self._held.get(approval_id)
        if held is None:
            raise UnknownApproval(approval_id)
        return held

    def answer(self, approval_id: str, kind: str, note: str | None = None) -> Held:
        """Give the answer the call waits for; raises UnknownApproval or ValueError (a kind that
        is not an answer)."""
        if kind not in ANSWERS:
            raise ValueError(f"unknown answer {kind!r}; expected one of {', '.join(ANSWERS)}")
        held = self.get(approval_id)
        if not held.answer.done():
            held.answer.set_result((kind, note))
        self._held.pop(approval_id, None)
        return held

    async def wait(self, held: Held) -> tuple[str, str | None]:
        """The answer, or `("timeout", None)` once the approval's time is up."""
        try:
            return await asyncio.wait_for(asyncio.shield(held.answer), max(0.0, held.deadline - self.clock()))
        except asyncio.TimeoutError:
            return TIMEOUT, None
        finally:
            self._held.pop(held.approval_id, None)


_per_host: "weakref.WeakKeyDictionary[Any, HeldApprovals]" = weakref.WeakKeyDictionary()


def held_for(host: Any) -> HeldApprovals:
    """The approvals direct calls of `host` wait on (made on first use)."""
    found = _per_host.get(host)
    if found is None:
        found = _per_host[host] = HeldApprovals()
    return found
