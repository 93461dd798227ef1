"""One tool call, from the model's request to its result node:

    validate → resolve the target → gatekeeper (initial) → [approval] → hold the tab, resolve
    again, gatekeeper (dispatch) → mark the run as dispatching → execute → result

Denials and declines are reported to the model with their reason and are not failures; a
cancel ends the turn. Nothing reaches the browser unless the dispatch-phase check allowed it,
and the run records `started_at` before the call is sent, so recovery after a crash knows that
a write may have happened and never replays it on its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any

import msgspec

from protocol import ui

from host.engine import runs
from host.engine.approvals import RECOVERY_TIMEOUT_NOTE, Settled
from host.engine.executor import Outcome, Prepared, ToolError
from host.engine.policies import fingerprint
from host.engine.records import ApprovalRow, CallRef, PendingTool, ToolCallBody, ToolResultBody
from host.engine.store import new_id
from host.store.db import StoreError

if TYPE_CHECKING:
    from host.engine.turn import TurnRunner

log = logging.getLogger("tabwarden.engine")

MAX_RESULT_CHARS = 60_000
EVENT_TEXT_CHARS = 4000

DENIED = "Action denied by policy: {reason}"
DENIED_AT_DISPATCH = "Action denied by policy during final authorization: {reason}"
DECLINED = "The user declined this action.{note} Do not retry it unchanged. Adapt or ask."
TIMED_OUT = ("Nobody answered the approval request in time ({note}); the action did not run. Do not retry it "
             "unchanged. Adapt or ask.")
CANCELLED = "The user cancelled this action and stopped the task."
CHANGED = "Tool authorization changed before dispatch ({reason}); the action did not run. Look at the page again."
UNAVAILABLE = "Permission state is unavailable, so nothing runs: {reason}"
NO_SITE_ACCESS = ("Tabwarden has no access to {origin} yet; the user must grant it (the approval card asks for it) "
                  "before page tools can run there.")
INTERRUPTED_TOOL = "The task was interrupted while this call was running; it may have taken effect."
# An L1 tool whose synthetic input the page ignored (`l1_not_effective`) is retried once as its
# trusted L2 twin: a call of its own, validated and judged by the gatekeeper again.
ESCALATIONS = {"type": "type_trusted"}


def call_node_id(turn_id: str, step: int, ordinal: int) -> str:
    """The stable id of a call's node: the same call keeps it through retries and restarts."""
    return f"tool-call:{turn_id}:{step}:{ordinal}"


def provider_call_id(turn_id: str, step: int, ordinal: int) -> str:
    """The id the model sees for a call (both APIs accept `[A-Za-z0-9_-]{1,64}`)."""
    return "call_" + hashlib.sha256(f"{turn_id}:{step}:{ordinal}".encode()).hexdigest()[:24]


def params_summary(params: Any) -> str:
    """The parameters as short JSON for an item card (at most 200 characters)."""
    text = json.dumps(params, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 200 else text[:197] + "…"


class CallProcessor:
    """Processes the calls of one turn (one instance per TurnRunner)."""

    def __init__(self, runner: "TurnRunner"):
        self.runner = runner
        self.engine = runner.engine

    # -- the pipeline ---------------------------------------------------------------------------

    async def process(self, ref: CallRef, step: int, ordinal: int, *, alone: bool = True,
                      node_id: str | None = None) -> bool:
        """Run one call to its result; returns True when the user cancelled the turn. `alone`:
        the call is the only one of its answer (questions to the user must be). `node_id` is
        given for an escalation (`<original node>:escalation:<tool>`)."""
        from host.tools.catalog import lookup

        runner, engine = self.runner, self.engine
        node_id = node_id or call_node_id(runner.turn_id, step, ordinal)
        spec = lookup(ref.name)
        params = ref.arguments
        mark = fingerprint(ref.name, params if params is not None else ref.raw_arguments)
        self._started(node_id, ref, spec)
        body = ToolCallBody(call_id=ref.id, tool=ref.name, params=params or {}, label=spec.label if spec else ref.name,
                            level=spec.level if spec else "", effects=spec.effects if spec else "write", step=step,
                            ordinal=ordinal)
        if params is None:
            return self._finish(node_id, body, mark, ok=False, code="invalid_params", counted=True,
                                text=f"Invalid parameters for {ref.name}: the arguments are not a JSON object "
                                     f"({(ref.raw_arguments or '')[:200]!r})")
        if spec is None or ref.name not in engine.tool_names():
            return self._finish(node_id, body, mark, ok=False, code="unknown_tool", counted=True,
                                text=f"There is no tool named {ref.name!r}. Use one of the tools you were given.")
        if spec.interaction:
            return await self._ask(node_id, body, mark, spec, params, alone)
        run = engine.store.run(runner.run_id)
        resumed = self._resumable_approval(run, node_id)
        if resumed is not None:
            # After a restart: the approval comes first (its request is stored); the call is
            # prepared again only once the user has accepted it.
            approval, settled = resumed
            if settled is None:
                engine.offer(approval)  # the same approval id again, with what remains of its time
            return await self._after_approval(node_id, body, mark, spec, None, approval, settled, run.pending_tool)
        try:
            prepared = await engine.executor.prepare(runner.thread_id, spec.name, params)
        except ToolError as error:
            return self._finish(node_id, body, mark, ok=False, code=error.code, counted=True,
                                text=f"Error {error.code}: {error.message}")
        body = msgspec.structs.replace(body, params=prepared.params)
        decision, problem = self._check(prepared, node_id, "initial")
        if decision is None:
            return self._finish(node_id, body, mark, ok=False, code="gatekeeper_unavailable", counted=True,
                                text=UNAVAILABLE.format(reason=problem), outcome="failed")
        verdict, flags, reason = self.initial_verdict(decision, prepared, needs_site_access=True)
        if verdict == "deny":
            self._outcome(spec.name, "denied", prepared.origin, node_id)
            return self._finish(node_id, body, mark, ok=False, code=decision.code, counted=False, outcome="denied",
                                text=DENIED.format(reason=decision.reason), details=_decision_details(decision))
        if verdict == "ask":
            approval = self._open_approval(node_id, body, spec, prepared, decision, flags, reason)
            return await self._after_approval(node_id, body, mark, spec, prepared, approval, None)
        self._pend(node_id, body, spec, prepared, state=runs.EXECUTING)
        return await self._dispatch(node_id, body, mark, spec, prepared, None, None)

    # -- approval -------------------------------------------------------------------------------

    def _resumable_approval(self, run, node_id: str) -> tuple[ApprovalRow, Settled | None] | None:
        """After a restart: the approval this call was waiting on (and its decision, if made)."""
        if run.state != runs.WAITING_APPROVAL or run.pending_tool is None or run.pending_tool.node_id != node_id:
            return None
        approval = self.engine.store.latest_approval(run.id)
        if approval is None or approval.item_id != node_id:
            return None
        return approval, self.engine.approvals.settled(approval.id)

    def _open_approval(self, node_id: str, body: ToolCallBody, spec, prepared: Prepared, decision, flags: list[str],
                       reason: str) -> ApprovalRow:
        runner, engine = self.runner, self.engine
        request = ui.ApprovalRequestPayload(
            tool=spec.name, label=spec.label, params=prepared.params,
            target_origin=decision.target_origin or prepared.origin, flags=sorted(set(flags)), reason=reason,
            code=decision.code, level=spec.level, target_line=prepared.target_line)
        pending = self._pending_tool(node_id, body, spec, prepared)
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", body, turn_id=runner.turn_id, node_id=node_id)
            run = engine.store.run(runner.run_id, conn)
            approval = engine.approvals.open(
                conn, approval_id=new_id(), thread_id=runner.thread_id, run_id=run.id, turn_id=runner.turn_id,
                item_id=node_id, request=msgspec.to_builtins(request), timeout_s=engine.approval_timeout_s(),
                run_revision=run.revision, pending=pending)
        engine.offer(approval)
        return approval

    async def _after_approval(self, node_id: str, body: ToolCallBody, mark: str, spec, prepared: Prepared | None,
                              approval: ApprovalRow, settled: Settled | None,
                              recovered: PendingTool | None = None) -> bool:
        engine, runner = self.engine, self.runner
        applied, cancelled = await self.settle_approval(node_id, body, mark, spec, approval, settled)
        if applied is None:
            return cancelled
        if prepared is None:
            assert recovered is not None
            try:
                prepared = await engine.executor.prepare(runner.thread_id, spec.name, dict(recovered.params))
            except ToolError as error:
                return self._finish(node_id, body, mark, ok=False, code=error.code, counted=True,
                                    text=f"Error {error.code}: {error.message} (checked again after the host restarted)")
            if not spec.url_param and (prepared.origin != recovered.target_origin or
                                       prepared.tab_id != recovered.tab_id):
                return self._finish(node_id, body, mark, ok=False, code="target_changed", counted=True,
                                    text=f"The tool target changed after the permission check (tab {recovered.tab_id} "
                                         f"at {recovered.target_origin}, now tab {prepared.tab_id} at "
                                         f"{prepared.origin or 'no page'}); do not reuse the previous approval.")
        return await self._dispatch(node_id, body, mark, spec, prepared, approval.id, applied.revision)

    async def settle_approval(self, node_id: str, body: ToolCallBody, mark: str, spec, approval: ApprovalRow,
                              settled: Settled | None) -> tuple[Any, bool]:
        """Wait for the approval's decision (unless `settled` is given) and apply it. Returns
        (applied, False) on an accept; (None, cancelled) when the call ended here with its
        result written (declined, timed out, cancelled, or the gatekeeper failed)."""
        engine, runner = self.engine, self.runner
        if settled is None:
            if approval.deadline_at <= engine.clock():
                settled = engine.approvals.settle_expired(approval)
            else:
                settled = await engine.approvals.wait(approval)
        engine.approval_resolved(approval, settled)
        target_origin = str(approval.request.get("targetOrigin", ""))
        try:
            applied = engine.gatekeeper.apply_decision(
                thread_id=runner.thread_id, approval_id=approval.id, tool=spec.name, target_origin=target_origin,
                kind=settled.kind, turn_id=runner.turn_id, call_id=node_id, policy=runner.policy)
        except Exception as exc:  # GatekeeperUnavailable, InvalidInput: fail closed for accepts
            if settled.kind.startswith("accept"):
                return None, self._finish(node_id, body, mark, ok=False, code="gatekeeper_unavailable", counted=True,
                                          text=UNAVAILABLE.format(reason=exc))
            applied = None
        if settled.kind in ("decline", "cancel"):
            note = settled.decision.get("note")
            if settled.kind == "cancel":
                text, outcome = CANCELLED, "cancelled"
            elif settled.by in ("timeout", "recovery"):
                text, outcome = TIMED_OUT.format(note=note or RECOVERY_TIMEOUT_NOTE), "timed_out"
            else:
                text, outcome = DECLINED.format(note=f" User said: {note}" if note else ""), "declined"
            self._outcome(spec.name, outcome, target_origin, node_id)
            self._finish(node_id, body, mark, ok=False, code=outcome, counted=False, outcome=outcome, text=text)
            return None, settled.kind == "cancel"
        assert applied is not None
        return applied, False

    # -- interactions (the run waits on the user or a condition) -------------------------------

    async def _ask(self, node_id: str, body: ToolCallBody, mark: str, spec, params: dict[str, Any],
                   alone: bool) -> bool:
        from host.engine.interaction_calls import run_interaction

        return await run_interaction(self, node_id, body, mark, spec, params, alone)

    # -- dispatch -------------------------------------------------------------------------------

    async def _dispatch(self, node_id: str, body: ToolCallBody, mark: str, spec, prepared: Prepared,
                        approval_id: str | None, approved_revision: str | None) -> bool:
        engine, runner = self.engine, self.runner

        async def authorize(fresh: Prepared) -> None:
            decision, problem = self._check(fresh, node_id, "dispatch", approved_revision, approval_id)
            if decision is None:
                raise ToolError("gatekeeper_unavailable", UNAVAILABLE.format(reason=problem))
            if decision.verdict == "deny":
                raise ToolError("denied", DENIED_AT_DISPATCH.format(reason=decision.reason))
            if decision.verdict == "ask":
                raise ToolError("authorization_changed", CHANGED.format(reason=decision.reason))
            if fresh.site_access is False:
                raise ToolError("no_site_access", NO_SITE_ACCESS.format(origin=fresh.origin or "this page"))
            # Durable before anything is sent: recovery must know this call may have acted.
            with engine.store.transaction() as conn:
                run = engine.store.run(runner.run_id, conn)
                pending = run.pending_tool or self._pending_tool(node_id, body, spec, fresh)
                pending = msgspec.structs.replace(pending, started_at=engine.clock(), target_origin=fresh.origin,
                                                  approval_id=approval_id, approved_revision=approved_revision)
                engine.store.update_run(conn, run.id, state=runs.EXECUTING, pending_tool=pending)
            engine.activity(runner.thread_id)

        try:
            outcome = await engine.executor.execute(runner.thread_id, prepared, authorize)
        except ToolError as error:
            self._outcome(spec.name, f"refused:{error.code}", prepared.origin, node_id)
            return self._finish(node_id, body, mark, ok=False, code=error.code, counted=True,
                                text=error.message if error.code in ("denied", "authorization_changed",
                                                                     "gatekeeper_unavailable", "no_site_access")
                                else f"Error {error.code}: {error.message}")
        except (asyncio.CancelledError, StoreError):
            raise  # a storage failure before dispatch stops the run: nothing was sent (fail closed)
        except Exception as exc:
            log.exception("tool %s failed inside the executor", spec.name)
            outcome = Outcome(ok=False, text=f"Error internal: {type(exc).__name__}: {exc}. It may have taken effect.",
                              code="internal", effect_may_have_occurred=True)
        self._outcome(spec.name, "ok" if outcome.ok else f"failed:{outcome.code}", prepared.origin, node_id)
        details = dict(outcome.details)
        if outcome.effect_may_have_occurred:
            details["effectMayHaveOccurred"] = True
        if ":escalation:" in node_id:
            details["escalatedFrom"] = next((k for k, v in ESCALATIONS.items() if v == spec.name), "")
            details["escalatedTo"] = spec.name
        escalation = ESCALATIONS.get(spec.name)
        if (not outcome.ok and outcome.code == "l1_not_effective" and escalation is not None
                and details.get("escalationTool") == escalation and escalation in engine.tool_names()):
            self._finish(node_id, body, mark, ok=False, code=outcome.code, counted=False, outcome="escalated",
                         text=outcome.text, trust=spec.result_trust or "untrusted",
                         provenance=spec.result_provenance or "page", origin=prepared.origin,
                         details={**details, "escalatedTo": escalation})
            return await self._escalate(escalation, node_id, body)
        return self._finish(node_id, body, mark, ok=outcome.ok, code=outcome.code, counted=not outcome.ok,
                            text=outcome.text, trust=spec.result_trust or "untrusted",
                            provenance=spec.result_provenance or "page", origin=prepared.origin, details=details)

    async def _escalate(self, tool: str, node_id: str, body: ToolCallBody) -> bool:
        """Run the trusted twin of an ineffective call as a call of its own (new node
        `<node>:escalation:<tool>`, same parameters, its own gatekeeper check and approval).
        It answers the same model call id, so the model reads its result; the first attempt's
        result stays in the tree (not counted as a failure)."""
        ref = CallRef(id=body.call_id, name=tool, arguments=dict(body.params))
        return await self.process(ref, body.step, body.ordinal, node_id=f"{node_id}:escalation:{tool}")

    # -- helpers --------------------------------------------------------------------------------

    @staticmethod
    def initial_verdict(decision, prepared: Prepared, *, needs_site_access: bool) -> tuple[str, list[str], str]:
        """(verdict, flags, reason) of a call's first check: a page the extension may not script
        yet turns anything but a deny into an ask, whose card asks for the site access too."""
        verdict, flags, reason = decision.verdict, list(decision.flags), decision.reason
        if needs_site_access and prepared.site_access is False and verdict != "deny":
            verdict = "ask"
            flags.append("host_permission")
            reason = NO_SITE_ACCESS.format(origin=prepared.origin or "this page")
        return verdict, flags, reason

    def _check(self, prepared: Prepared, node_id: str, phase: str, approved_revision: str | None = None,
               approval_id: str | None = None):
        from host.gatekeeper.errors import GatekeeperUnavailable
        from host.gatekeeper.service import CheckRequest

        runner = self.runner
        try:
            return self.engine.gatekeeper.check(CheckRequest(
                thread_id=runner.thread_id, tool=prepared.tool, params=prepared.params, origin=prepared.origin,
                turn_id=runner.turn_id, call_id=node_id, policy=runner.policy, target=prepared.target,
                phase=phase, approved_revision=approved_revision, approval_id=approval_id)), None  # type: ignore[arg-type]
        except GatekeeperUnavailable as exc:
            return None, str(exc)

    def _pending_tool(self, node_id: str, body: ToolCallBody, spec, prepared: Prepared) -> PendingTool:
        return PendingTool(call_id=body.call_id, node_id=node_id, tool=spec.name, params=prepared.params,
                           target_origin=prepared.origin, tab_id=prepared.tab_id, effects=spec.effects,
                           recovery=spec.recovery or "never-retry")

    def _pend(self, node_id: str, body: ToolCallBody, spec, prepared: Prepared, *, state: str) -> None:
        engine, runner = self.engine, self.runner
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", body, turn_id=runner.turn_id, node_id=node_id)
            engine.store.update_run(conn, runner.run_id, state=state,
                                    pending_tool=self._pending_tool(node_id, body, spec, prepared))

    def _outcome(self, tool: str, outcome: str, origin: str, node_id: str) -> None:
        try:
            self.engine.gatekeeper.record_outcome(thread_id=self.runner.thread_id, tool=tool, outcome=outcome,
                                                  target_origin=origin, turn_id=self.runner.turn_id, call_id=node_id)
        except Exception:
            log.warning("the outcome of %s could not be audited", node_id, exc_info=True)

    def _started(self, node_id: str, ref: CallRef, spec) -> None:
        meta = ui.ItemMeta(tool_name=ref.name, label=spec.label if spec else ref.name,
                           params_summary=params_summary(ref.arguments if ref.arguments is not None else ref.raw_arguments),
                           level=spec.level if spec else None)
        self.engine.bus.emit(ui.ItemStart, self.runner.thread_id, turn_id=self.runner.turn_id, item_id=node_id,
                             kind="tool_call", meta=meta)

    def _finish(self, node_id: str, body: ToolCallBody, mark: str, *, ok: bool, text: str, code: str | None,
                counted: bool, outcome: str | None = None, trust: str = "trusted", provenance: str = "tool",
                origin: str = "", details: dict[str, Any] | None = None) -> bool:
        """Write the call (if not yet written) and its result; clear the run's pending tool."""
        engine, runner = self.engine, self.runner
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n[result cut at {MAX_RESULT_CHARS} characters]"
        result = ToolResultBody(call_id=body.call_id, tool=body.tool, ok=ok, text=text,
                                outcome=outcome or ("ok" if ok else "failed"), counted=counted, code=code, trust=trust,
                                provenance=provenance, origin=origin, fingerprint=mark, details=details or {})
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", body, turn_id=runner.turn_id, node_id=node_id)
            engine.store.append_node(conn, runner.thread_id, "tool_result", result, turn_id=runner.turn_id,
                                     node_id=f"{node_id}:result")
            engine.store.update_run(conn, runner.run_id, pending_tool=None)
        engine.bus.emit(ui.ItemComplete, runner.thread_id, item_id=node_id,
                        result=ui.ItemResult(ok=ok, text=text[:EVENT_TEXT_CHARS], code=code, details=details or None))
        return False


def _decision_details(decision) -> dict[str, Any]:
    details: dict[str, Any] = {"verdict": decision.verdict, "reasonCode": decision.code,
                               "targetOrigin": decision.target_origin}
    if decision.rule is not None:
        details["rule"] = decision.rule.describe()
    return details
