"""Answers to what the engine asked: approval decisions and replies to questions. The first
answer stands; the same answer again is acknowledged again, a different one is refused."""

from __future__ import annotations

from typing import Any

import msgspec

from protocol import ui

from host.engine.approvals import AlreadyDecided
from host.engine.store import NotFound
from host.ui.client import Client
from host.ui.op_context import OpContext


def approval_response(ctx: OpContext, client: Client, op: ui.ApprovalResponse, mark: str) -> Any:
    """approval.response: decide an approval (first decision stands) and wake its run."""
    engine = ctx.engine
    try:
        approval = engine.store.approval(op.approval_id)
    except NotFound:
        return ctx.reject(client, op, mark, "approval_not_found", f"no approval {op.approval_id!r}")
    decision = msgspec.to_builtins(op.decision)
    ack = ctx.ack(op, thread_id=approval.thread_id, run_id=approval.run_id)

    def receipt(conn, settled):
        ctx.put_receipt(conn, client, op, mark, ack)

    try:
        settled = engine.approvals.decide(op.approval_id, decision, "user", receipt=receipt)
    except AlreadyDecided as exc:
        prior = exc.settled
        return ctx.reject(client, op, mark, "already_decided",
                          f"Approval {op.approval_id} was already decided with a different decision "
                          f"({prior.kind}, by {prior.by}).")
    if settled.newly and approval.run_id not in {r.run_id for r in engine.runners.values()}:
        engine.start_next(approval.thread_id)
    return ack


def interaction_response(ctx: OpContext, client: Client, op: ui.InteractionResponse, mark: str) -> Any:
    """interaction.response: answer a question (first answer stands) and wake its run."""
    from host.engine.interactions import AlreadyAnswered

    engine = ctx.engine
    try:
        asked = engine.store.interaction(op.interaction_id)
    except NotFound:
        return ctx.reject(client, op, mark, "invalid_state", f"no interaction {op.interaction_id!r}")
    ack = ctx.ack(op, thread_id=asked.thread_id, run_id=asked.run_id)

    def receipt(conn):
        ctx.put_receipt(conn, client, op, mark, ack)

    try:
        answered = engine.interactions.answer(op.interaction_id, msgspec.to_builtins(op.response), "user",
                                              receipt=receipt)
    except AlreadyAnswered as exc:
        return ctx.reject(client, op, mark, "already_decided",
                          f"Interaction {op.interaction_id} was already answered ({exc.answered.kind}, "
                          f"by {exc.answered.by}).")
    if answered.newly and asked.run_id not in {r.run_id for r in engine.runners.values()}:
        engine.start_next(asked.thread_id)
    return ack
