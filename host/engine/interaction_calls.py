"""One interaction tool call inside the loop:

    validate → must be alone in its answer → resolve the target (watch_page: the tab)
      → gatekeeper (initial) → deny: result │ ask: approval, then gatekeeper (dispatch)
      → tool_call node + interaction + waiting_interaction, one transaction
      → hand the tabs over (the agent stops driving them) → offer → wait for the answer, the
        deadline, or the watcher → result node

After a restart the runner comes back here: a pending interaction is offered again with the time
it has left (its watcher restarted); an approval still open is offered again first.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from host.engine import runs
from host.engine.executor import Prepared, ToolError
from host.engine.interaction_kinds import KINDS, Kind
from host.engine.records import InteractionRow, ToolCallBody
from host.engine.store import new_id
from host.tools import builtin_params as bp

if TYPE_CHECKING:
    from host.engine.calls import CallProcessor

log = logging.getLogger("tabwarden.engine")

NOT_ALONE = "{tool} must be the only tool call of its answer; call it again on its own."
NO_WATCHER = "this host cannot watch pages (no browser executor)"


async def run_interaction(proc: "CallProcessor", node_id: str, body: ToolCallBody, mark: str, spec,
                          params: dict[str, Any], alone: bool) -> bool:
    """Process one interaction call to its result; True when the user cancelled the turn."""
    from host.engine.calls import DENIED, UNAVAILABLE

    engine, runner = proc.engine, proc.runner
    kind = KINDS[spec.name]
    run = engine.store.run(runner.run_id)
    if run.pending_tool is not None and run.pending_tool.node_id == node_id:
        if run.state == runs.WAITING_INTERACTION:
            row = engine.store.latest_interaction(run.id)  # after a restart: the same request again
            if row is not None and row.item_id == node_id:
                return await _wait(proc, node_id, body, mark, spec, kind, row)
        resumed = proc._resumable_approval(run, node_id)
        if resumed is not None:
            approval, settled = resumed
            if settled is None:
                engine.offer(approval)
            return await _after_approval(proc, node_id, body, mark, spec, kind, approval, settled, None)
    try:
        typed = bp.decode(spec.params_type, params, spec.name)
    except bp.InvalidParams as exc:
        return proc._finish(node_id, body, mark, ok=False, code="invalid_params", counted=True, text=str(exc))
    if not alone:
        return proc._finish(node_id, body, mark, ok=False, code="invalid_params", counted=True,
                            text=NOT_ALONE.format(tool=spec.name))
    try:
        prepared = await _prepare(proc, spec, kind, typed)
    except ToolError as error:
        return proc._finish(node_id, body, mark, ok=False, code=error.code, counted=True,
                            text=f"Error {error.code}: {error.message}")
    body = msgspec.structs.replace(body, params=prepared.params)
    decision, problem = proc._check(prepared, node_id, "initial")
    if decision is None:
        return proc._finish(node_id, body, mark, ok=False, code="gatekeeper_unavailable", counted=True,
                            text=UNAVAILABLE.format(reason=problem), outcome="failed")
    verdict, flags, reason = proc.initial_verdict(decision, prepared, needs_site_access=_reads_page(kind, typed))
    if verdict == "deny":
        proc._outcome(spec.name, "denied", prepared.origin, node_id)
        return proc._finish(node_id, body, mark, ok=False, code=decision.code, counted=False, outcome="denied",
                            text=DENIED.format(reason=decision.reason))
    if verdict == "ask":
        approval = proc._open_approval(node_id, body, spec, prepared, decision, flags, reason)
        return await _after_approval(proc, node_id, body, mark, spec, kind, approval, None, prepared)
    row = _open(proc, node_id, body, spec, kind, typed, prepared)
    return await _wait(proc, node_id, body, mark, spec, kind, row)


def _reads_page(kind: Kind, typed: Any) -> bool:
    """Whether the watch needs the page's text (and so site access); a URL needs only the tab."""
    return kind.targeted and (getattr(typed, "text_appears", None) is not None or
                              getattr(typed, "text_gone", None) is not None)


async def _prepare(proc: "CallProcessor", spec, kind: Kind, typed: Any) -> Prepared:
    """The call as the gatekeeper sees it: targeted kinds are resolved by the executor (the tab
    and its origin); the others have no target."""
    params = msgspec.to_builtins(typed)
    if not kind.targeted:
        return Prepared(tool=spec.name, params=params)
    return await proc.engine.executor.prepare(proc.runner.thread_id, spec.name, params)


async def _after_approval(proc: "CallProcessor", node_id: str, body: ToolCallBody, mark: str, spec, kind: Kind,
                          approval, settled, prepared: Prepared | None) -> bool:
    """An interaction that needed an approval (watch_page under the `always` policy, or without
    site access): once accepted, resolve the target again and check it at dispatch."""
    from host.engine.calls import CHANGED, DENIED_AT_DISPATCH, NO_SITE_ACCESS, UNAVAILABLE

    engine, runner = proc.engine, proc.runner
    applied, cancelled = await proc.settle_approval(node_id, body, mark, spec, approval, settled)
    if applied is None:
        return cancelled
    run = engine.store.run(runner.run_id)
    stored = run.pending_tool.params if run.pending_tool is not None else (prepared.params if prepared else {})
    try:
        typed = bp.decode(spec.params_type, dict(stored), spec.name)
        fresh = await _prepare(proc, spec, kind, typed)
    except (bp.InvalidParams, ToolError) as error:
        code = getattr(error, "code", "invalid_params")
        return proc._finish(node_id, body, mark, ok=False, code=code, counted=True, text=str(error))
    approved_origin = str(approval.request.get("targetOrigin", ""))
    if kind.targeted and fresh.origin != approved_origin:
        return proc._finish(node_id, body, mark, ok=False, code="target_changed", counted=True,
                            text=f"The tab moved from {approved_origin} to {fresh.origin or 'no page'} after the "
                                 "permission check; look at it again and do not reuse the previous approval.")
    decision, problem = proc._check(fresh, node_id, "dispatch", applied.revision, approval.id)
    if decision is None:
        return proc._finish(node_id, body, mark, ok=False, code="gatekeeper_unavailable", counted=True,
                            text=UNAVAILABLE.format(reason=problem))
    if decision.verdict != "allow":
        text = DENIED_AT_DISPATCH if decision.verdict == "deny" else CHANGED
        return proc._finish(node_id, body, mark, ok=False, code="authorization_changed", counted=True,
                            text=text.format(reason=decision.reason))
    if fresh.site_access is False and _reads_page(kind, typed):
        return proc._finish(node_id, body, mark, ok=False, code="no_site_access", counted=True,
                            text=NO_SITE_ACCESS.format(origin=fresh.origin or "this page"))
    row = _open(proc, node_id, body, spec, kind, typed, fresh)
    return await _wait(proc, node_id, body, mark, spec, kind, row)


def _open(proc: "CallProcessor", node_id: str, body: ToolCallBody, spec, kind: Kind, typed: Any,
          prepared: Prepared) -> InteractionRow:
    """The tool call node, the persisted request and the run's waiting state, in one transaction."""
    engine, runner = proc.engine, proc.runner
    pending = proc._pending_tool(node_id, body, spec, prepared)
    with engine.store.transaction() as conn:
        engine.store.append_node(conn, runner.thread_id, "tool_call", body, turn_id=runner.turn_id, node_id=node_id)
        if engine.store.run(runner.run_id, conn).state == runs.WAITING_APPROVAL:
            # Approved: dispatched like any call, and what it dispatches is the wait.
            engine.store.update_run(conn, runner.run_id, state=runs.EXECUTING)
        return engine.interactions.open(
            conn, interaction_id=new_id(), thread_id=runner.thread_id, run_id=runner.run_id, turn_id=runner.turn_id,
            item_id=node_id, request=kind.request(typed, prepared, engine.clock()),
            timeout_s=kind.timeout(typed, engine.interaction_timeout_s()), pending=pending)


async def _wait(proc: "CallProcessor", node_id: str, body: ToolCallBody, mark: str, spec, kind: Kind,
                row: InteractionRow) -> bool:
    engine, runner = proc.engine, proc.runner
    answered = engine.interactions.answered(row.id)
    if answered is None:
        if row.deadline_at <= engine.clock():
            answered = engine.interactions.settle(row.id, {"kind": "timeout"}, "timeout")
        else:
            _hand_over(engine, runner.thread_id)
            engine.offer_interaction(row)
            watcher = asyncio.create_task(_watch(proc, row), name=f"watch:{row.id[:8]}") if kind.watched else None
            try:
                answered = await engine.interactions.wait(row)
            finally:
                if watcher is not None:
                    watcher.cancel()
                    await asyncio.gather(watcher, return_exceptions=True)
    engine.interaction_resolved(row, answered)
    reading = kind.read(answered, row.request, engine.clock() - row.requested_at)
    proc._outcome(spec.name, f"answer:{answered.kind}", str(row.request.get("origin") or ""), node_id)
    return proc._finish(node_id, body, mark, ok=reading.ok, code=None if reading.ok else answered.kind, counted=False,
                        outcome="answered" if reading.ok else "unanswered", text=reading.text, trust=reading.trust,
                        provenance=reading.provenance, origin=str(row.request.get("origin") or ""),
                        details={"interactionId": row.id, "response": answered.kind, "by": answered.by})


def _hand_over(engine: Any, thread_id: str) -> None:
    """While the run waits on the user, it drives no tab: the user's own clicks there do not pause
    it, and the page indicator goes away."""
    hand_over = getattr(engine.executor, "hand_over", None)
    if hand_over is None:
        return
    try:
        hand_over(thread_id)
    except Exception:
        log.debug("hand_over failed", exc_info=True)


async def _watch(proc: "CallProcessor", row: InteractionRow) -> None:
    """Run the executor's page watcher until the condition holds (or the watch cannot go on), then
    settle the interaction; the runner cancels it when the wait ends another way."""
    engine, runner = proc.engine, proc.runner

    async def recheck(origin: str) -> str | None:
        # The tab moved to another origin: the watch goes on only if the gatekeeper allows it there.
        prepared = Prepared(tool="watch_page", params=_params_of(row.request), origin=origin,
                            tab_id=row.request.get("tabId"))
        decision, problem = proc._check(prepared, row.item_id, "dispatch")
        if decision is None:
            return f"permission state is unavailable ({problem})"
        if decision.verdict != "allow":
            return f"the tab moved to {origin or 'another page'}, where watching needs permission again ({decision.reason})"
        return None

    watch = getattr(engine.executor, "watch", None)
    try:
        outcome = await watch(runner.thread_id, row.request, recheck) if watch is not None else \
            {"kind": "cancel", "note": NO_WATCHER}
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("the watcher of %s failed", row.id)
        outcome = {"kind": "cancel", "note": f"the watcher failed: {type(exc).__name__}: {exc}"}
    engine.interactions.settle(row.id, outcome, "watch")


def _params_of(request: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in request.items() if k not in ("kind", "origin")}
