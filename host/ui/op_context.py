"""`OpContext`: what an op handler works with. The engine, and the ways to answer an op: an
ack, a refusal, or a change committed together with its receipt (so an ack means "durable" and
a resent op gets the stored answer).

Every handler is `handler(ctx, client, op, fingerprint)` and returns the op's answer (or None
when the answer comes later); handlers depend on this module, never on the handler table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol import ui

from host.engine.views import to_wire
from host.ui.client import Client

RECEIPT_TTL_S = 24 * 3600.0
# Refusals that say nothing about the command itself: a retry with the same id may succeed.
TRANSIENT_CODES = frozenset({"overloaded", "storage_unavailable", "internal", "not_initialized"})


class OpContext:
    """The engine an op acts on, and the answers (with receipts) its handler gives."""

    def __init__(self, engine: Any):
        self.engine = engine

    def commit(self, client: Client, op: Any, mark: str, write: Callable[[Any], Any]) -> Any:
        """Run `write(conn)` and store the receipt of its answer in the same transaction."""
        with self.engine.store.transaction() as conn:
            response = write(conn)
            self.put_receipt(conn, client, op, mark, response)
        return response

    def put_receipt(self, conn: Any, client: Client, op: Any, mark: str, response: Any) -> None:
        """Store `response` as the answer to (client, op.submissionId) inside `conn`'s transaction."""
        self.engine.store.put_receipt(conn, client.key, op.submission_id, ui.tag_of(type(op)), mark,
                                      to_wire(response), RECEIPT_TTL_S)

    def reject(self, client: Client, op: Any, mark: str, code: str, message: str) -> Any:
        """A refusal with one of `ui.ERROR_CODES`; stored as the command's answer unless it is transient."""
        response = ui.CommandRejected(submission_id=op.submission_id, code=code, message=message,
                                      thread_id=getattr(op, "thread_id", None))
        if code in TRANSIENT_CODES:
            return response
        return self.commit(client, op, mark, lambda conn: response)

    def ack(self, op: Any, **fields: Any) -> ui.CommandAck:
        """The acknowledgement of `op`."""
        return ui.CommandAck(submission_id=op.submission_id, **fields)

    def thread_missing(self, client: Client, op: Any, mark: str) -> Any | None:
        """A `thread_not_found` refusal when `op.thread_id` does not exist, else None."""
        if not self.engine.store.has_thread(op.thread_id):
            return self.reject(client, op, mark, "thread_not_found", f"no thread {op.thread_id!r}")
        return None

    def busy(self, client: Client, op: Any, mark: str, what: str) -> Any | None:
        """A `thread_busy` refusal when a run owns the thread, else None."""
        if self.engine.busy(op.thread_id):
            return self.reject(client, op, mark, "thread_busy",
                                f"a turn is running or paused in this thread; interrupt it before you {what}")
        return None
