"""Interactions: the run waits on the user or on a condition (`ask_user`, `request_user_action`,
`watch_page`, `schedule_resume`). Each is opened with its tool call and the run's
`waiting_interaction` state in one transaction, answered once (the first answer stands), timed
out from a persisted deadline, and offered again after a restart like approvals.

`interaction_kinds.py` says what each tool asks and how its answer reads; `interaction_tools.py`
offers the tools as a router service, and `calls.py` persists a call's request at dispatch."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from host.engine.records import InteractionRow, PendingTool
from host.engine.store import EngineStore, NotFound

DEFAULT_TIMEOUT_S = 30 * 60.0


@dataclass(frozen=True)
class Answered:
    """A settled interaction: the response, who gave it, and whether this call settled it."""

    interaction_id: str
    response: dict[str, Any]  # {"kind": "submit", "value": ...} | {"kind": "cancel", "note"?} | {"kind": "timeout"}
    by: str
    newly: bool

    @property
    def kind(self) -> str:
        """submit, cancel or timeout."""
        return str(self.response.get("kind"))


class AlreadyAnswered(Exception):
    """A different answer to an interaction that was already answered."""

    def __init__(self, answered: Answered):
        self.answered = answered
        super().__init__(f"interaction {answered.interaction_id} was already answered ({answered.kind})")


class InteractionBook:
    """Open, answer (first answer stands), wait for and settle interactions."""

    def __init__(self, store: EngineStore, clock: Callable[[], float]):
        self.store = store
        self.clock = clock
        self._waiters: dict[str, asyncio.Future[Answered]] = {}

    def open(self, conn: sqlite3.Connection, *, interaction_id: str, thread_id: str, run_id: str, turn_id: str,
             item_id: str, request: dict[str, Any], timeout_s: float, pending: PendingTool) -> InteractionRow:
        """Inside the caller's transaction: the interaction and the run's waiting state."""
        now = self.clock()
        row = InteractionRow(id=interaction_id, thread_id=thread_id, run_id=run_id, turn_id=turn_id, item_id=item_id,
                             request=request, status="pending", requested_at=now, deadline_at=now + timeout_s)
        self.store.insert_interaction(conn, row)
        self.store.update_run(conn, run_id, state="waiting_interaction", pending_tool=pending)
        return row

    def answer(self, interaction_id: str, response: dict[str, Any], by: str, *,
               receipt: Callable[[sqlite3.Connection], None] | None = None) -> Answered:
        """Record the answer (and the receipt) in one transaction; the first answer stands."""
        with self.store.transaction() as conn:
            row = self.store.interaction(interaction_id, conn)
            if row.status == "answered":
                answered = Answered(row.id, row.response or {}, row.answered_by or "user", False)
                if answered.response == response:
                    if receipt is not None:
                        receipt(conn)
                    return answered
                raise AlreadyAnswered(answered)
            self.store.answer_interaction(conn, interaction_id, response, by)
            run = self.store.run(row.run_id, conn)
            self.store.update_run(conn, run.id)
            if receipt is not None:
                receipt(conn)
        answered = Answered(interaction_id, response, by, True)
        future = self._waiters.get(interaction_id)
        if future is not None and not future.done():
            future.set_result(answered)
        return answered

    def answered(self, interaction_id: str) -> Answered | None:
        """The stored answer of a question, if it has one."""
        row = self.store.interaction(interaction_id)
        if row.status != "answered":
            return None
        return Answered(row.id, row.response or {}, row.answered_by or "user", False)

    async def wait(self, row: InteractionRow) -> Answered:
        """Wait for the answer until the persisted deadline, then settle it as a timeout."""
        future = self._waiters.get(row.id)
        if future is None or future.done():
            future = self._waiters[row.id] = asyncio.get_running_loop().create_future()
        try:
            stored = self.answered(row.id)
            if stored is not None:
                return stored
            try:
                return await asyncio.wait_for(asyncio.shield(future), max(0.0, row.deadline_at - self.clock()))
            except asyncio.TimeoutError:
                return self.settle(row.id, {"kind": "timeout"}, "timeout")
        finally:
            if self._waiters.get(row.id) is future:
                del self._waiters[row.id]

    def settle(self, interaction_id: str, response: dict[str, Any], by: str) -> Answered:
        """Answer unless already answered; return what stands."""
        try:
            return self.answer(interaction_id, response, by)
        except AlreadyAnswered as exc:
            return exc.answered
        except NotFound:
            return Answered(interaction_id, response, by, False)
