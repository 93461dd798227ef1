"""Answers to what the engine asked: approval decisions and replies to questions. The first
answer stands; the same answer again is acknowledged again, a different one is refused."""

from __future__ import annotations

from typing import Any

import msgspec

from protocol import ui

from host.engine.store import NotFound
from host.engine.waits import AlreadySettled, Waits
from host.ui.client import Client
from host.ui.op_context import OpContext


# A card about values from content the user did not give (possible fraud) allows once at most:
# a grant would let the same kind of value through unasked for the rest of the task.
ONCE_ONLY_CODES = frozenset({"untrusted_value"})
GRANTS = frozenset({"acceptForSession", "acceptForSite"})


def approval_response(ctx: OpContext, client: Client, op: ui.ApprovalResponse, mark: str) -> Any:
    """approval.response: decide an approval (first decision stands) and wake its run. A grant
    on a card that allows once at most is refused, whatever the page sent."""
    decision = msgspec.to_builtins(op.decision)
    if decision.get("kind") in GRANTS:
        try:
            request = ctx.engine.approvals.row(op.approval_id).request
        except NotFound:
            request = {}
        if isinstance(request, dict) and request.get("code") in ONCE_ONLY_CODES:
            return ctx.reject(client, op, mark, "invalid_command",
                              "this approval is about values the user did not give: it can be allowed once, "
                              "never for the task or always")
    return _answer(ctx, client, op, mark, ctx.engine.approvals, op.approval_id, msgspec.to_builtins(op.decision),
                   missing="approval_not_found",
                   refused=lambda prior: (f"Approval {op.approval_id} was already decided with a different decision "
                                          f"({prior.kind}, by {prior.by})."))


def interaction_response(ctx: OpContext, client: Client, op: ui.InteractionResponse, mark: str) -> Any:
    """interaction.response: answer a question (first answer stands) and wake its run. A
    running tool's question (not stored; see host/engine/tool_questions.py) is answered here."""
    questions = ctx.engine.tool_questions
    if questions.holds(op.interaction_id):
        thread_id = questions.answer(op.interaction_id, msgspec.to_builtins(op.response))
        if thread_id is None:
            return ctx.reject(client, op, mark, "already_decided", f"Interaction {op.interaction_id} was already answered.")
        return ctx.ack(op, thread_id=thread_id)
    return _answer(ctx, client, op, mark, ctx.engine.interactions, op.interaction_id,
                   msgspec.to_builtins(op.response), missing="invalid_state",
                   refused=lambda prior: (f"Interaction {op.interaction_id} was already answered ({prior.kind}, "
                                          f"by {prior.by})."))


def _answer(ctx: OpContext, client: Client, op: Any, mark: str, waits: Waits, wait_id: str, answer: dict[str, Any],
            *, missing: str, refused: Any) -> Any:
    """Settle the request with the answer and its receipt in one transaction; wake its run."""
    engine = ctx.engine
    try:
        row = waits.row(wait_id)
    except NotFound:
        return ctx.reject(client, op, mark, missing, f"no {waits.kind.table.noun} {wait_id!r}")
    ack = ctx.ack(op, thread_id=row.thread_id, run_id=row.run_id)

    def receipt(conn, settled):
        ctx.put_receipt(conn, client, op, mark, ack)

    try:
        settled = waits.settle(wait_id, answer, "user", receipt=receipt)
    except AlreadySettled as exc:
        return ctx.reject(client, op, mark, "already_decided", refused(exc.settled))
    if settled.newly and row.run_id not in {r.run_id for r in engine.runners.values()}:
        engine.start_next(row.thread_id)
    return ack
