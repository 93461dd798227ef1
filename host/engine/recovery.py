"""What the engine does at start with runs a previous process left unfinished.

* queued, preparing, streaming_model: resume (a model call has no effect outside; it is redone).
* waiting_approval: the latest approval decides. Missing → the run fails. Decided → the run goes
  on with that decision. Deadline passed → declined ("timed out while the host was not running").
  Otherwise the runner offers the *same* approval again with the time that remains.
* executing_tool: if the call was never sent (`started_at` unset), it is processed again from
  its checks. If it was sent and is retry-safe (a read), it is run again. A write that may have
  happened is never replayed: the run goes to `paused_uncertain` and the user resolves it.
* waiting_interaction: like an approval: asked again with the time that remains, or settled as
  a timeout when its deadline passed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from protocol import ui

from host.engine import runs
from host.engine.records import NoticeBody, RunRow
from host.engine.views import run_view

if TYPE_CHECKING:
    from host.engine.parts import EngineParts

log = logging.getLogger("tabwarden.engine")

UNCERTAIN = ("The host stopped while {tool} was running; it may or may not have taken effect. Check the page, "
             "then choose: run it again, treat it as done, or fail the task.")


def _fail(engine: "EngineParts", run: RunRow, code: str, message: str) -> None:
    with engine.store.transaction() as conn:
        engine.store.update_run(conn, run.id, state=runs.FAILED, stop_reason="error", error=f"{code}: {message}",
                                pending_tool=None)
        engine.store.append_node(conn, run.thread_id, "system_notice",
                                 NoticeBody(notice_kind="recovery", text=message), turn_id=run.turn_id)
    log.warning("run %s failed at recovery: %s", run.id, code)


def _pause_uncertain(engine: "EngineParts", run: RunRow) -> None:
    assert run.pending_tool is not None
    message = UNCERTAIN.format(tool=run.pending_tool.tool)
    with engine.store.transaction() as conn:
        paused = engine.store.update_run(conn, run.id, state=runs.PAUSED_UNCERTAIN)
        engine.store.append_node(conn, run.thread_id, "system_notice",
                                 NoticeBody(notice_kind="recovery", text=message), turn_id=run.turn_id)
    try:
        engine.gatekeeper.record_outcome(thread_id=run.thread_id, tool=run.pending_tool.tool, outcome="uncertain",
                                         target_origin=run.pending_tool.target_origin, turn_id=run.turn_id,
                                         call_id=run.pending_tool.node_id)
    except Exception:
        log.warning("the uncertain outcome of run %s could not be audited", run.id, exc_info=True)
    engine.bus.emit(ui.RunRecoveryRequired, run.thread_id, run=run_view(paused), message=message)


def recover(engine: "EngineParts") -> list[str]:
    """Settle what cannot continue; return the threads whose runs may resume."""
    threads: list[str] = []
    for run in engine.store.live_runs():
        if run.state == runs.WAITING_APPROVAL:
            approval = engine.approvals.latest(run.id)
            if approval is None:
                _fail(engine, run, "recovery_missing_approval", "The task stopped: its pending approval was lost.")
                continue
            if approval.status == "pending" and approval.deadline_at <= engine.clock():
                settled = engine.approvals.settle_expired(approval)
                engine.approval_resolved(approval, settled)
        elif run.state == runs.EXECUTING:
            pending = run.pending_tool
            if pending is not None and pending.started_at is not None and pending.recovery != "retry-safe":
                _pause_uncertain(engine, run)
                continue
        elif run.state == runs.WAITING_INTERACTION:
            asked = engine.interactions.latest(run.id)
            if asked is None:
                _fail(engine, run, "recovery_missing_interaction", "The task stopped: its question was lost.")
                continue
            if asked.status == "pending" and asked.deadline_at <= engine.clock():
                engine.interaction_resolved(asked, engine.interactions.settle_expired(asked))
        elif run.state in runs.PAUSED:
            if run.state == runs.PAUSED_UNCERTAIN:
                engine.bus.emit(ui.RunRecoveryRequired, run.thread_id, run=run_view(run),
                                message=UNCERTAIN.format(tool=run.pending_tool.tool if run.pending_tool else "a tool"))
            continue
        if run.thread_id not in threads:
            threads.append(run.thread_id)
    return threads
