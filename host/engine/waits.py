"""Requests a run waits on, with one lifecycle: approvals (the user allows or refuses a tool call)
and interactions (a question to the user, a hand-over, a page watch, a scheduled resume).

Each is opened in one transaction with its tool call and the run's waiting state, settled once
(the first answer stands; the same answer again is a no-op, a different one is refused), and
timed out from a persisted deadline. Waiting is an asyncio future per request; settling
commits first and wakes the waiter after, so an answer the loop acts on is always durable, and
a crash between the two is recovered by reading the answer back.

    approvals     answers {"kind": accept | acceptForSession | acceptForSite | decline | cancel, "note"?}
                  a deadline declines ("approval timed out after 5 minutes"); each decision is also
                  a node of the thread (`approval_decision`)
    interactions  answers {"kind": submit | cancel | timeout, ...}; a deadline is a `timeout`

Who answered: `user`, `timeout`, `interrupt`, `recovery`, or `watch` (the page watcher).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.errors import TabwardenError

from host.engine import runs
from host.engine.records import DecisionBody, PendingTool, WaitRow
from host.engine.store import APPROVALS, INTERACTIONS, EngineStore, NotFound, WaitTable

TIMEOUT_NOTE = "approval timed out after {minutes}"
RECOVERY_TIMEOUT_NOTE = "approval timed out while the host was not running"
DEFAULT_INTERACTION_TIMEOUT_S = 30 * 60.0


def minutes(seconds: float) -> str:
    """A duration as people say it: `5 minutes`, `0.3 seconds`."""
    if seconds >= 60 and seconds % 60 == 0:
        n = int(seconds // 60)
        return f"{n} minute{'s' if n != 1 else ''}"
    return f"{seconds:g} seconds"


@dataclass(frozen=True)
class Settled:
    """A settled request: the answer, who gave it, and whether this call settled it."""

    wait_id: str
    answer: dict[str, Any]
    by: str
    newly: bool  # False when an earlier answer stood

    @property
    def kind(self) -> str:
        """The answer's kind (accept, decline, submit, timeout...)."""
        return str(self.answer.get("kind"))


class AlreadySettled(TabwardenError):
    """A different answer to a request that was already settled."""

    def __init__(self, settled: Settled, noun: str):
        self.settled = settled
        self.code = "already_decided"
        super().__init__(f"{noun} {settled.wait_id} was already settled ({settled.kind} by {settled.by})")


@dataclass(frozen=True)
class WaitKind:
    """What differs between approvals and interactions."""

    table: WaitTable
    state: str  # the run's waiting state
    # The answer a passed deadline gives, live and found at recovery.
    on_timeout: Callable[[WaitRow], dict[str, Any]]
    on_expired: dict[str, Any]
    # Whether a second answer is the same as the stored one (then it is a no-op, not a refusal).
    same: Callable[[dict[str, Any], dict[str, Any]], bool]
    # Whether each answer is also a node of the thread.
    noted: bool


def _same_decision(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.get("kind") == b.get("kind") and (a.get("note") or None) == (b.get("note") or None)


APPROVAL = WaitKind(
    table=APPROVALS, state=runs.WAITING_APPROVAL,
    on_timeout=lambda row: {"kind": "decline", "note": TIMEOUT_NOTE.format(
        minutes=minutes(row.deadline_at - row.requested_at))},
    on_expired={"kind": "decline", "note": RECOVERY_TIMEOUT_NOTE}, same=_same_decision, noted=True)
INTERACTION = WaitKind(
    table=INTERACTIONS, state=runs.WAITING_INTERACTION, on_timeout=lambda row: {"kind": "timeout"},
    on_expired={"kind": "timeout"}, same=lambda a, b: a == b, noted=False)


class Waits:
    """Open, settle (first answer stands), wait for and read the requests of one kind."""

    def __init__(self, store: EngineStore, clock: Callable[[], float], kind: WaitKind):
        self.store = store
        self.clock = clock
        self.kind = kind
        self._waiters: dict[str, asyncio.Future[Settled]] = {}

    # -- reading --------------------------------------------------------------------------------

    def row(self, wait_id: str, conn: sqlite3.Connection | None = None) -> WaitRow:
        """One request; NotFound when there is none."""
        return self.store.wait(self.kind.table, wait_id, conn)

    def latest(self, run_id: str, conn: sqlite3.Connection | None = None) -> WaitRow | None:
        """The run's newest request, if any."""
        return self.store.latest_wait(self.kind.table, run_id, conn)

    def pending(self, thread_id: str | None = None) -> list[WaitRow]:
        """Requests without an answer (of one thread, or all)."""
        return self.store.pending_waits(self.kind.table, thread_id)

    def settled(self, wait_id: str) -> Settled | None:
        """The stored answer of a request, if it has one."""
        row = self.row(wait_id)
        return _stored(row) if row.status == "settled" else None

    # -- the lifecycle --------------------------------------------------------------------------

    def open(self, conn: sqlite3.Connection, *, wait_id: str, thread_id: str, run_id: str, turn_id: str, item_id: str,
             request: dict[str, Any], timeout_s: float, pending: PendingTool,
             run_revision: int | None = None) -> WaitRow:
        """Inside the caller's transaction (which also wrote the tool call node): the request and
        the run's move to its waiting state with its pending tool."""
        now = self.clock()
        row = WaitRow(id=wait_id, thread_id=thread_id, run_id=run_id, turn_id=turn_id, item_id=item_id, request=request,
                      status="pending", requested_at=now, deadline_at=now + timeout_s)
        self.store.insert_wait(conn, self.kind.table, row)
        self.store.update_run(conn, run_id, state=self.kind.state, expected_revision=run_revision, pending_tool=pending)
        return row

    def settle(self, wait_id: str, answer: dict[str, Any], by: str, *,
               receipt: Callable[[sqlite3.Connection, Settled], None] | None = None) -> Settled:
        """Record an answer (with its node, when the kind keeps one, and the command receipt, if
        given) in one transaction, then wake the waiter. A request settled before keeps its
        answer: the same answer again returns it (`newly=False`); a different one raises
        AlreadySettled."""
        with self.store.transaction() as conn:
            row = self.row(wait_id, conn)
            if row.status == "settled":
                settled = _stored(row)
                if not self.kind.same(settled.answer, answer):
                    raise AlreadySettled(settled, self.kind.table.noun)
                if receipt is not None:
                    receipt(conn, settled)
                return settled
            self.store.settle_wait(conn, self.kind.table, wait_id, answer, by)
            if self.kind.noted:
                self.store.append_node(conn, row.thread_id, "approval_decision",
                                       DecisionBody(approval_id=row.id, item_id=row.item_id, decision=answer, by=by,
                                                    decided_at=self.clock(), shown_values=_shown_values(row.request),
                                                    field_values=_field_values(row.request)),
                                       turn_id=row.turn_id)
            self.store.update_run(conn, row.run_id)  # bump the revision: the run's continuation changed
            settled = Settled(row.id, answer, by, True)
            if receipt is not None:
                receipt(conn, settled)
        future = self._waiters.get(wait_id)
        if future is not None and not future.done():
            future.set_result(settled)
        return settled

    def settle_or_read(self, wait_id: str, answer: dict[str, Any], by: str) -> Settled:
        """Settle unless already settled; return what stands (for a request that is gone, the
        answer given)."""
        try:
            return self.settle(wait_id, answer, by)
        except AlreadySettled as exc:
            return exc.settled
        except NotFound:
            return Settled(wait_id, answer, by, False)

    async def wait(self, row: WaitRow) -> Settled:
        """Wait for the answer until the persisted deadline, then settle it as the kind's timeout.
        Cancelling the waiter leaves the request pending (the caller settles it)."""
        future = self._waiters.get(row.id)
        if future is None or future.done():
            future = self._waiters[row.id] = asyncio.get_running_loop().create_future()
        try:
            stored = self.settled(row.id)
            if stored is not None:
                return stored
            try:
                return await asyncio.wait_for(asyncio.shield(future), max(0.0, row.deadline_at - self.clock()))
            except asyncio.TimeoutError:
                return self.settle_or_read(row.id, self.kind.on_timeout(row), "timeout")
        finally:
            if self._waiters.get(row.id) is future:
                del self._waiters[row.id]

    def settle_expired(self, row: WaitRow) -> Settled:
        """Recovery: a request whose deadline passed while the host was down."""
        return self.settle_or_read(row.id, self.kind.on_expired, "recovery")

    def cancel(self, wait_id: str, by: str = "interrupt") -> Settled | None:
        """Settle a pending request as `cancel` (an interrupt); None if it is unknown."""
        try:
            self.row(wait_id)
        except NotFound:
            return None
        return self.settle_or_read(wait_id, {"kind": "cancel"}, by)


def _stored(row: WaitRow) -> Settled:
    return Settled(row.id, row.answer or {}, row.answered_by or "user", False)


def _field_values(request: dict[str, Any]) -> dict[str, str]:
    """The shown values the card said go into a payment field, with that field's kind."""
    shown = request.get("untrustedValues") or request.get("untrusted_values") or []
    return {str(v["value"])[:2000]: str(v.get("what") or "field")[:100] for v in shown[:32]
            if isinstance(v, dict) and v.get("kind") == "field" and isinstance(v.get("value"), str)}


def _shown_values(request: dict[str, Any]) -> list[str]:
    """The content values an approval's card showed (see `DecisionBody.shown_values`)."""
    shown = request.get("untrustedValues") or request.get("untrusted_values") or []
    return [str(v["value"])[:2000] for v in shown[:32] if isinstance(v, dict) and isinstance(v.get("value"), str)]
