"""Approvals: opened in one transaction with the tool call and the run's waiting state, decided
once (the first decision stands), timed out from a persisted deadline.

Waiting is an asyncio future per approval; deciding commits first and wakes the waiter after,
so a decision the loop acts on is always durable, and a crash between the two is recovered by
reading the decision back.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from host.engine.records import ApprovalRow, DecisionBody, PendingTool
from host.engine.store import EngineStore, NotFound

TIMEOUT_NOTE = "approval timed out after {minutes}"
RECOVERY_TIMEOUT_NOTE = "approval timed out while the host was not running"


def minutes(seconds: float) -> str:
    """A duration as people say it: `5 minutes`, `0.3 seconds`."""
    if seconds >= 60 and seconds % 60 == 0:
        n = int(seconds // 60)
        return f"{n} minute{'s' if n != 1 else ''}"
    return f"{seconds:g} seconds"


@dataclass(frozen=True)
class Settled:
    """A decided approval: the decision (`{"kind": ..., "note"?: ...}`) and who made it."""

    approval_id: str
    decision: dict[str, Any]
    by: str
    newly: bool  # False when an earlier decision stood

    @property
    def kind(self) -> str:
        """The decision kind (accept, acceptForSession, acceptForSite, decline, cancel)."""
        return str(self.decision.get("kind"))


class AlreadyDecided(Exception):
    """A different decision for an approval that was already decided."""

    def __init__(self, settled: Settled):
        self.settled = settled
        super().__init__(f"approval {settled.approval_id} was already decided ({settled.kind} by {settled.by})")


class ApprovalBook:
    def __init__(self, store: EngineStore, clock: Callable[[], float]):
        self.store = store
        self.clock = clock
        self._waiters: dict[str, asyncio.Future[Settled]] = {}

    def open(self, conn: sqlite3.Connection, *, approval_id: str, thread_id: str, run_id: str, turn_id: str,
             item_id: str, request: dict[str, Any], timeout_s: float, run_revision: int,
             pending: PendingTool) -> ApprovalRow:
        """Inside the caller's transaction (which also wrote the tool call node): the approval
        row and the run's move to waiting_approval with its pending tool."""
        now = self.clock()
        row = ApprovalRow(id=approval_id, thread_id=thread_id, run_id=run_id, turn_id=turn_id, item_id=item_id,
                          request=request, status="pending", requested_at=now, deadline_at=now + timeout_s)
        self.store.insert_approval(conn, row)
        self.store.update_run(conn, run_id, state="waiting_approval", expected_revision=run_revision,
                              pending_tool=pending)
        return row

    def decide(self, approval_id: str, decision: dict[str, Any], by: str, *,
               receipt: Callable[[sqlite3.Connection, Settled], None] | None = None) -> Settled:
        """Record a decision (with its node and, if given, the command receipt) in one
        transaction. An approval decided before keeps its decision: the same decision again
        returns it (`newly=False`); a different one raises AlreadyDecided."""
        with self.store.transaction() as conn:
            row = self.store.approval(approval_id, conn)
            if row.status == "decided":
                settled = Settled(row.id, row.decision or {}, row.decided_by or "user", False)
                if _same(settled.decision, decision):
                    if receipt is not None:
                        receipt(conn, settled)
                    return settled
                raise AlreadyDecided(settled)
            self.store.decide_approval(conn, approval_id, decision, by)
            self.store.append_node(conn, row.thread_id, "approval_decision",
                                   DecisionBody(approval_id=row.id, item_id=row.item_id, decision=decision, by=by,
                                                decided_at=self.clock()),
                                   turn_id=row.turn_id)
            run = self.store.run(row.run_id, conn)
            self.store.update_run(conn, run.id)  # bump the revision: the run's continuation changed
            settled = Settled(row.id, decision, by, True)
            if receipt is not None:
                receipt(conn, settled)
        future = self._waiters.get(approval_id)
        if future is not None and not future.done():
            future.set_result(settled)
        return settled

    def settled(self, approval_id: str) -> Settled | None:
        """The stored decision of an approval, if any."""
        row = self.store.approval(approval_id)
        if row.status != "decided":
            return None
        return Settled(row.id, row.decision or {}, row.decided_by or "user", False)

    async def wait(self, row: ApprovalRow) -> Settled:
        """Wait for a decision until the persisted deadline; then settle it as a declined
        timeout. Cancelling the waiter leaves the approval pending (the caller settles it)."""
        loop = asyncio.get_running_loop()
        future = self._waiters.get(row.id)
        if future is None or future.done():
            future = self._waiters[row.id] = loop.create_future()
        try:
            stored = self.settled(row.id)
            if stored is not None:
                return stored
            remaining = max(0.0, row.deadline_at - self.clock())
            try:
                return await asyncio.wait_for(asyncio.shield(future), remaining)
            except asyncio.TimeoutError:
                note = TIMEOUT_NOTE.format(minutes=minutes(row.deadline_at - row.requested_at))
                return self._settle_or_read(row.id, {"kind": "decline", "note": note}, "timeout")
        finally:
            if self._waiters.get(row.id) is future:
                del self._waiters[row.id]

    def settle_expired(self, row: ApprovalRow) -> Settled:
        """Recovery: an approval whose deadline passed while the host was down is declined."""
        return self._settle_or_read(row.id, {"kind": "decline", "note": RECOVERY_TIMEOUT_NOTE}, "recovery")

    def cancel(self, approval_id: str, by: str = "interrupt") -> Settled | None:
        """Settle a pending approval as `cancel` (an interrupt); None if it is unknown."""
        try:
            return self._settle_or_read(approval_id, {"kind": "cancel"}, by)
        except NotFound:
            return None

    def _settle_or_read(self, approval_id: str, decision: dict[str, Any], by: str) -> Settled:
        try:
            return self.decide(approval_id, decision, by)
        except AlreadyDecided as exc:
            return exc.settled


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("kind") == b.get("kind") and (a.get("note") or None) == (b.get("note") or None)
