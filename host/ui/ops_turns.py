"""Turn, queue and run ops: submit, enqueue, edit-and-resubmit, steer, interrupt; edit or remove a
queued turn; resume a budget pause; resolve a write that may have happened before a crash."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import msgspec

from protocol import ui

from host.engine import runs
from host.engine.records import ToolResultBody, UserBody
from host.engine.store import NotFound
from host.ui.client import Client
from host.ui.op_context import OpContext
from host.ui.ops_threads import listing_changed

log = logging.getLogger("tabwarden.engine")

MAX_QUEUED_TURNS = 8


def skills_refused(ctx: OpContext, client: Client, op: Any, mark: str) -> Any | None:
    """A refusal when the input mentions a skill that cannot be used now, else None."""
    from host.skills.context_blocks import check_skill_blocks
    from host.skills.errors import SkillError

    try:
        check_skill_blocks(ctx.engine, msgspec.to_builtins(op.input.attached_context))
    except SkillError as exc:
        code = exc.code if exc.code in ui.ERROR_CODES else "skill_not_found"
        return ctx.reject(client, op, mark, code, str(exc))
    return None


def queue_run(ctx: OpContext, client: Client, op: Any, mark: str, *, anchor_id: str | None = None) -> Any:
    """Store a queued run (with the receipt) and start it if the thread is free."""
    engine = ctx.engine
    refused = skills_refused(ctx, client, op, mark)
    if refused is not None:
        return refused

    def write(conn):
        run = engine.store.insert_run(conn, op.thread_id, state=runs.QUEUED, input=msgspec.to_builtins(op.input),
                                      overrides=msgspec.to_builtins(op.overrides) if op.overrides else None,
                                      anchor_id=anchor_id)
        return ctx.ack(op, thread_id=op.thread_id, run_id=run.id)

    response = ctx.commit(client, op, mark, write)
    client.subscribe(op.thread_id)
    engine.start_next(op.thread_id)
    engine.queue_changed(op.thread_id)
    _after_first_step(listing_changed, engine, op.thread_id)
    return response


def _after_first_step(callback: Any, *args: Any) -> None:
    """Call `callback` once a run just started has taken its first step, in which its turn names
    the thread: the thread list's count follows the turn's own events, as a page sees them."""
    try:
        asyncio.get_running_loop().call_soon(callback, *args)
    except RuntimeError:  # no loop (a synchronous caller): nothing to wait for
        callback(*args)


def turn_submit(ctx: OpContext, client: Client, op: ui.TurnSubmit, mark: str) -> Any:
    """turn.submit: a new turn (refused while another one owns the thread)."""
    refused = ctx.thread_missing(client, op, mark) or ctx.busy(client, op, mark, "start another (or enqueue it)")
    return refused or queue_run(ctx, client, op, mark)


def turn_enqueue(ctx: OpContext, client: Client, op: ui.TurnEnqueue, mark: str) -> Any:
    """turn.enqueue: a turn that starts after the current one (at most 8 waiting)."""
    refused = ctx.thread_missing(client, op, mark)
    if refused is not None:
        return refused
    queued = ctx.engine.store.runs(op.thread_id, frozenset({runs.QUEUED}))
    if len(queued) >= MAX_QUEUED_TURNS:
        return ctx.reject(client, op, mark, "queue_full", f"{MAX_QUEUED_TURNS} turns are already queued")
    return queue_run(ctx, client, op, mark)


def turn_fork(ctx: OpContext, client: Client, op: ui.TurnFork, mark: str) -> Any:
    """turn.fork: a new user message beside an earlier one (edit and resubmit)."""
    engine = ctx.engine
    refused = ctx.thread_missing(client, op, mark) or ctx.busy(client, op, mark, "edit an earlier message")
    if refused is not None:
        return refused
    try:
        node = engine.store.node(op.sibling_of_node_id)
    except NotFound:
        node = None
    if node is None or node.thread_id != op.thread_id or node.kind != "user_message":
        return ctx.reject(client, op, mark, "node_not_found",
                          f"no user message {op.sibling_of_node_id!r} in this thread")
    return queue_run(ctx, client, op, mark, anchor_id=node.id)


def turn_steer(ctx: OpContext, client: Client, op: ui.TurnSteer, mark: str) -> Any:
    """turn.steer: input the running turn reads before its next model call."""
    engine = ctx.engine
    refused = ctx.thread_missing(client, op, mark)
    if refused is not None:
        return refused
    runner = engine.runners.get(op.thread_id)
    if runner is None or not runner.turn_id:
        return ctx.reject(client, op, mark, "no_active_turn", "no turn is running in this thread")
    if runner.turn_id != op.expected_turn_id:
        return ctx.reject(client, op, mark, "turn_mismatch",
                          f"the running turn is {runner.turn_id}, not {op.expected_turn_id}")
    run = engine.store.run(runner.run_id)
    if run.state not in (runs.PREPARING, runs.STREAMING, runs.EXECUTING, runs.WAITING_APPROVAL):
        return ctx.reject(client, op, mark, "turn_not_steerable", f"the turn is {run.state}")
    refused = skills_refused(ctx, client, op, mark)
    if refused is not None:
        return refused
    from host.skills.context_blocks import resolve_skill_blocks

    context = resolve_skill_blocks(engine, msgspec.to_builtins(op.input.attached_context))
    body = UserBody(text=op.input.text, context=context, steer=True)
    made: dict[str, Any] = {}

    def write(conn):
        made["node"] = engine.store.append_node(conn, op.thread_id, "user_message", body, turn_id=runner.turn_id)
        return ctx.ack(op, thread_id=op.thread_id, turn_id=runner.turn_id, node_id=made["node"].id)

    response = ctx.commit(client, op, mark, write)
    engine.emit_item(op.thread_id, runner.turn_id, made["node"].id, "user_message", text=body.text)
    return response


async def turn_interrupt(ctx: OpContext, client: Client, op: ui.TurnInterrupt, mark: str) -> Any:
    """turn.interrupt: stop the model stream and the running tool; settle a pending request."""
    engine = ctx.engine
    refused = ctx.thread_missing(client, op, mark)
    if refused is not None:
        return refused
    if not await engine.interrupt(op.thread_id, "user"):
        return ctx.reject(client, op, mark, "no_active_turn", "nothing is running in this thread")
    return ctx.commit(client, op, mark, lambda conn: ctx.ack(op, thread_id=op.thread_id))


def queued_run(ctx: OpContext, client: Client, op: Any, mark: str, states: frozenset[str]) -> Any:
    """(refusal, None) or (None, run) for an op naming a run of its thread in one of `states`."""
    engine = ctx.engine
    refused = ctx.thread_missing(client, op, mark)
    if refused is not None:
        return refused, None
    try:
        run = engine.store.run(op.run_id)
    except NotFound:
        run = None
    if run is None or run.thread_id != op.thread_id:
        return ctx.reject(client, op, mark, "run_not_found", f"no run {op.run_id!r} in this thread"), None
    if run.state not in states:
        return ctx.reject(client, op, mark, "invalid_state", f"run {run.id} is {run.state}"), None
    return None, run


def queue_update(ctx: OpContext, client: Client, op: ui.QueueUpdate, mark: str) -> Any:
    """queue.update: change a queued turn's input or overrides."""
    refused, run = queued_run(ctx, client, op, mark, frozenset({runs.QUEUED}))
    if refused is None:
        refused = skills_refused(ctx, client, op, mark)
    if refused is not None:
        return refused
    store = ctx.engine.store

    def write(conn):
        store.update_run(conn, run.id, expected_revision=run.revision, input=msgspec.to_builtins(op.input),
                         overrides=msgspec.to_builtins(op.overrides) if op.overrides else None)
        return ctx.ack(op, thread_id=op.thread_id, run_id=run.id)

    response = ctx.commit(client, op, mark, write)
    ctx.engine.queue_changed(op.thread_id)
    return response


def queue_remove(ctx: OpContext, client: Client, op: ui.QueueRemove, mark: str) -> Any:
    """queue.remove: drop a queued turn."""
    refused, run = queued_run(ctx, client, op, mark, frozenset({runs.QUEUED}))
    if refused is not None:
        return refused
    store = ctx.engine.store

    def write(conn):
        store.update_run(conn, run.id, state=runs.INTERRUPTED, expected_revision=run.revision,
                         stop_reason="interrupted")
        return ctx.ack(op, thread_id=op.thread_id, run_id=run.id)

    response = ctx.commit(client, op, mark, write)
    ctx.engine.queue_changed(op.thread_id)
    listing_changed(ctx.engine, op.thread_id)  # one task fewer
    return response


def run_resume(ctx: OpContext, client: Client, op: ui.RunResume, mark: str) -> Any:
    """run.resume: continue a turn paused by its token budget (with a fresh budget)."""
    refused, run = queued_run(ctx, client, op, mark, frozenset({runs.PAUSED_BUDGET}))
    if refused is not None:
        return refused
    store = ctx.engine.store

    def write(conn):
        store.update_run(conn, run.id, state=runs.STREAMING, expected_revision=run.revision, tokens_used=0,
                         stop_reason=None)
        return ctx.ack(op, thread_id=op.thread_id, run_id=run.id)

    response = ctx.commit(client, op, mark, write)
    ctx.engine.start_next(op.thread_id)
    return response


def run_resolve_uncertain(ctx: OpContext, client: Client, op: ui.RunResolveUncertain, mark: str) -> Any:
    """run.resolveUncertain: retry (checks again), mark_done, or fail an uncertain write."""
    refused, run = queued_run(ctx, client, op, mark, frozenset({runs.PAUSED_UNCERTAIN}))
    if refused is not None:
        return refused
    engine, store = ctx.engine, ctx.engine.store
    pending = run.pending_tool
    assert pending is not None

    def write(conn):
        if op.resolution == "retry":
            # Sent again from its checks; a fresh approval may be asked.
            store.update_run(conn, run.id, state=runs.EXECUTING, expected_revision=run.revision,
                             pending_tool=msgspec.structs.replace(pending, started_at=None))
        else:
            done = op.resolution == "mark_done"
            text = ("The host stopped while this call was running; the user checked and confirmed it took "
                    "effect (its output is lost)." if done else
                    "The host stopped while this call was running; the user marked it as failed.")
            result = ToolResultBody(call_id=pending.call_id, tool=pending.tool, ok=done, text=text,
                                    outcome="ok" if done else "failed", code=None if done else "uncertain")
            store.append_node(conn, op.thread_id, "tool_result", result, turn_id=run.turn_id,
                              node_id=f"{pending.node_id}:result")
            if done:
                store.update_run(conn, run.id, state=runs.STREAMING, expected_revision=run.revision,
                                 pending_tool=None)
            else:
                store.update_run(conn, run.id, state=runs.FAILED, expected_revision=run.revision,
                                 pending_tool=None, stop_reason="error", error="the user failed an uncertain call")
        return ctx.ack(op, thread_id=op.thread_id, run_id=run.id)

    response = ctx.commit(client, op, mark, write)
    try:
        engine.gatekeeper.record_outcome(thread_id=op.thread_id, tool=pending.tool,
                                         outcome=f"uncertain:{op.resolution}", target_origin=pending.target_origin,
                                         turn_id=run.turn_id, call_id=pending.node_id)
    except Exception:
        log.warning("the resolution of run %s could not be audited", run.id, exc_info=True)
    if op.resolution == "fail" and run.turn_id:
        engine.bus.emit(ui.TurnComplete, op.thread_id, turn_id=run.turn_id, run_id=run.id, stop_reason="error")
    engine.start_next(op.thread_id)
    return response
