"""One tool call inside the loop: the model's request, through the host's one authorisation
path (host/calls/authorize.py), to the call's result node.

The loop's part is what only it knows: the tool call node and its result, approvals persisted
with the run's waiting state and offered to the pages, the durable mark before a call is sent
(`started_at`: recovery after a crash knows a write may have happened and never replays it),
the request an interaction waits on, and the escalation of an ineffective synthetic input to
its trusted twin. Denials and declines reach the model with their reason and are not failures;
a cancel ends the turn.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Iterator

import msgspec

from protocol import ui
from protocol.ui.approvals import ActionTarget, OtherSite

from host.calls.authorize import commit_of
from host.calls.authorize import (Approved, Changed, Context, Denied, Ending, NoSiteAccess, Ran, Refused, Stopped,
                                  TargetChanged, Unavailable, Judgement, no_site_access)
from host.engine import runs
from host.engine.policies import fingerprint
from host.engine.records import CallRef, PendingTool, ToolCallBody, ToolResultBody, WaitRow
from host.engine.store import new_id
from host.engine.waits import RECOVERY_TIMEOUT_NOTE, Settled
from host.gatekeeper.facts.credential_target import hides_typed_value
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import failure
from host.tools.spec import ToolSpec

if TYPE_CHECKING:
    from host.engine.parts import TurnContext

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
STORAGE_UNAVAILABLE = ("Denied: storage is unavailable, so nothing ran ({reason}). The host opens again by itself "
                       "once its database answers; try the call again in a little while.")
INTERRUPTED_TOOL = "The task was interrupted while this call was running; it may have taken effect."
NOT_ALONE = "{tool} must be the only tool call of its answer; call it again on its own."
_WEB = frozenset({"http", "https"})
_MAX_OTHER_SITES = 8


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

    def __init__(self, runner: "TurnContext"):
        self.runner = runner
        self.engine = runner.engine

    async def process(self, ref: CallRef, step: int, ordinal: int, *, alone: bool = True,
                      node_id: str | None = None, escalated_from: str | None = None) -> bool:
        """Run one call to its result; returns True when the user cancelled the turn. `alone`:
        the call is the only one of its answer (questions to the user must be). `node_id` and
        `escalated_from` are given for an escalation (`<original node>:escalation:<tool>`)."""
        from host.tools.catalog import lookup

        runner, engine = self.runner, self.engine
        node_id = node_id or call_node_id(runner.turn_id, step, ordinal)
        spec = lookup(ref.name)
        params = ref.arguments
        self._started(node_id, ref, spec)
        one = _Call(self, node_id, ToolCallBody(
            call_id=ref.id, tool=ref.name, params=params or {}, label=spec.label if spec else ref.name,
            level=spec.level if spec else "", effects=spec.effects if spec else "write", step=step, ordinal=ordinal),
            fingerprint(ref.name, params if params is not None else ref.raw_arguments), spec, escalated_from)
        if params is None:
            return one.finish(ok=False, code=ToolCode.INVALID_PARAMS, counted=True,
                              text=f"Invalid parameters for {ref.name}: the arguments are not a JSON object "
                                   f"({(ref.raw_arguments or '')[:200]!r})")
        if spec is not None and ref.name not in engine.tool_names() and engine.tools.unavailable(ref.name):
            await engine.tools.revive(ref.name)  # its server may be back since the turn started
        if spec is None or ref.name not in engine.tool_names():
            why = engine.tools.unavailable(ref.name) if spec is not None else None
            if why is not None:  # a known server that is down: say so, not "no such tool"
                return one.finish(ok=False, code=ToolCode.UNAVAILABLE, counted=True, text=f"{why}.")
            return one.finish(ok=False, code=ToolCode.UNKNOWN_TOOL, counted=True,
                              text=f"There is no tool named {ref.name!r}. Use one of the tools you were given.")
        resumed = await self._resume(one)
        if resumed is not None:
            return resumed
        try:
            call = engine.tools.decode(runner.thread_id, spec.name, params)
        except ToolFailure as problem:
            return one.finish(ok=False, code=problem.code, counted=True, text=f"Error {problem.code}: {problem.message}")
        if spec.interaction and not alone:
            return one.finish(ok=False, code=ToolCode.INVALID_PARAMS, counted=True, text=NOT_ALONE.format(tool=spec.name))
        with self._progress_to_card(node_id):
            ending = await engine.authorizer.process(call, self.context(node_id), one)
        return await one.end(ending)

    @contextlib.contextmanager
    def _progress_to_card(self, node_id: str) -> Iterator[None]:
        """What the tool reports while it runs (an MCP server's progress) shows on its card, what
        it asks the user (an MCP server's elicitation) on a card of its own, and a model answer it
        asks for (sampling) comes from the thread's own connection."""
        from host.engine.tool_sampling import sample
        from host.tools.asking import reset_model_sink, reset_question_sink, set_model_sink, set_question_sink
        from host.tools.progress import reset_progress_sink, set_progress_sink

        engine, runner = self.engine, self.runner
        thread_id = runner.thread_id
        token = set_progress_sink(lambda line: engine.bus.delta(thread_id, node_id, progress=line))
        asking = set_question_sink(engine.tool_questions.asker(thread_id, runner.turn_id, node_id))
        sampling = set_model_sink(lambda request: sample(runner, request))
        try:
            yield
        finally:
            reset_model_sink(sampling)
            reset_question_sink(asking)
            reset_progress_sink(token)

    def context(self, node_id: str) -> Context:
        """The call as the gatekeeper's audit knows it."""
        runner = self.runner
        return Context(runner.thread_id, runner.turn_id, node_id, runner.policy)

    async def _resume(self, one: "_Call") -> bool | None:
        """After a restart: wait again on the request or approval this call left pending; None
        when there is none."""
        engine, runner = self.engine, self.runner
        run = engine.store.run(runner.run_id)
        pending = run.pending_tool
        if pending is None or pending.node_id != one.node_id:
            return None
        if run.state == runs.WAITING_INTERACTION:
            row = engine.interactions.latest(run.id)
            if row is not None and row.item_id == one.node_id:
                from host.calls.router import load_runner

                service = engine.tools.services["interactions"]
                result = await service.wait(row, load_runner(one.spec.runner))  # type: ignore[arg-type,union-attr]
                engine.authorizer.audit(_unresolved(one.spec, runner.thread_id, row.request.get("origin")),
                                        self.context(one.node_id), "ok" if result.ok else f"failed:{result.code}")
                return await one.end(Ran(result), origin=str(row.request.get("origin") or ""))
        if run.state != runs.WAITING_APPROVAL:
            return None
        approval = engine.approvals.latest(run.id)
        if approval is None or approval.item_id != one.node_id:
            return None
        # The approval comes first (its request is stored); the call is resolved again only once
        # the user has accepted it, and must still be on the tab and origin that were approved.
        settled = engine.approvals.settled(approval.id)
        if settled is None:
            engine.offer(approval)  # the same approval id again, with what remains of its time
        answer = await one.settle(approval, settled)
        if isinstance(answer, Stopped):
            return await one.end(answer)
        try:
            call = await engine.tools.resolve(engine.tools.decode(runner.thread_id, one.spec.name, dict(pending.params)))
        except ToolFailure as problem:
            problem = problem.in_own_words()
            return one.finish(ok=False, code=problem.code, counted=True,
                              text=f"Error {problem.code}: {problem.message} (checked again after the host restarted)")
        if not one.spec.url_param and (call.origin != pending.target_origin or call.tab_id != pending.tab_id):
            # Sites choose their origins: quoted as data in this text of ours.
            return one.finish(ok=False, code=ToolCode.TARGET_CHANGED, counted=True, text=(
                f"Error target_changed: the tool target changed after the permission check (tab {pending.tab_id} at "
                f"{_origin(pending.target_origin)}, now tab {call.tab_id} at {_origin(call.origin)}); do not reuse the "
                "previous approval."))
        approved_leads = [str(lead) for lead in approval.request.get("destinations") or ()]
        if leaving(call) != approved_leads:
            now = ", ".join(quoted(lead) for lead in leaving(call)) or "nowhere else"
            was = ", ".join(quoted(lead) for lead in approved_leads) or "nowhere else"
            return one.finish(ok=False, code=ToolCode.TARGET_CHANGED, counted=True, text=(
                f"Error target_changed: the element now leads to {now}, not to {was} as approved (checked again after the host "
                "restarted); do not reuse the previous approval."))
        with self._progress_to_card(one.node_id):
            ending = await engine.authorizer.dispatch(call, self.context(one.node_id), one, answer)
        return await one.end(ending)

    def _started(self, node_id: str, ref: CallRef, spec: ToolSpec | None) -> None:
        meta = ui.ItemMeta(tool_name=ref.name, label=spec.label if spec else ref.name,
                           params_summary=params_summary(ref.arguments if ref.arguments is not None else ref.raw_arguments),
                           level=spec.level if spec else None)
        self.engine.bus.emit(ui.ItemStart, self.runner.thread_id, turn_id=self.runner.turn_id, item_id=node_id,
                             kind="tool_call", meta=meta)


def _origin(origin: str | None) -> str:
    return quoted(origin) if origin else "no page"


def _unresolved(spec: ToolSpec, thread_id: str, origin: Any) -> ToolCall:
    from host.tools.call import Target

    return ToolCall(spec, {}, thread_id, Target(origin=str(origin or "")))


class _Call:
    """One call's node and its part of the path (`Steps`: approvals, the durable mark)."""

    def __init__(self, proc: CallProcessor, node_id: str, body: ToolCallBody, mark: str, spec: ToolSpec | None,
                 escalated_from: str | None):
        self.proc, self.engine, self.runner = proc, proc.engine, proc.runner
        self.node_id, self.body, self.mark, self.spec = node_id, body, mark, spec
        self.escalated_from = escalated_from
        self.cancelled = False

    # -- Steps ----------------------------------------------------------------------------------

    def _chosen_by(self, decision) -> str:
        """The words with which the user's request handed a commit's choice to what the agent
        read ("follow the instructions in that e-mail"), for the card; "" otherwise."""
        if decision.code != "commit":
            return ""
        try:
            consent = self.engine.provenance.of(self.runner.thread_id).consent
        except Exception:  # the card still asks; it only cannot say where the choice came from
            return ""
        return getattr(consent, "delegated", "") if consent is not None else ""

    async def approve(self, call: ToolCall, judgement: Judgement) -> Approved | Stopped:
        """Persist the approval with the call node and the run's waiting state, offer it, wait."""
        engine, runner, spec = self.engine, self.runner, call.spec
        self.body = msgspec.structs.replace(self.body, params=call.wire_params())
        decision = judgement.decision
        role, name = call.target.element() if call.target else ("", "")
        target_origin = decision.target_origin or call.origin
        page_site, other_sites = other_sites_of(call)
        request = ui.ApprovalRequestPayload(
            tool=spec.name, label=spec.label, params=call.wire_params(),
            target_origin=target_origin, flags=sorted(set(judgement.flags)),
            reason=judgement.reason, code=decision.code, level=spec.level,
            target_line=call.target.line if call.target else None, destinations=leaving(call),
            password_target=hides_typed_value(call.target.facts if call.target else None),
            untrusted_values=[dict(v) for v in decision.untrusted],
            target_role=role, target_name=name, policy=self._policy(),
            page_origin=call.origin if call.origin != target_origin else "", effect=commit_of(decision)[0],
            effect_words=commit_of(decision)[1], effect_chosen_by=self._chosen_by(decision),
            page_site=page_site, other_sites=other_sites, users_values=self._users_values(decision),
            action_targets=action_targets(call))
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", self.body, turn_id=runner.turn_id,
                                     node_id=self.node_id)
            run = engine.store.run(runner.run_id, conn)
            approval = engine.approvals.open(
                conn, wait_id=new_id(), thread_id=runner.thread_id, run_id=run.id, turn_id=runner.turn_id,
                item_id=self.node_id, request=msgspec.to_builtins(request), timeout_s=engine.approval_timeout_s(),
                run_revision=run.revision, pending=self._pending(call))
        engine.offer(approval)
        return await self.settle(approval, None)

    def _users_values(self, decision) -> dict[str, list[str]]:
        """The user's own values of each kind the card shows from content (their IBAN beside the
        page's), for the card; none when the thread's history cannot be read (the card then shows
        the page's values alone)."""
        if not decision.untrusted:
            return {}
        from host.gatekeeper.provenance_check import users_values

        try:
            return users_values(self.engine.provenance.of(self.runner.thread_id), decision.untrusted)
        except Exception:
            log.debug("the user's values of thread %s not read", self.runner.thread_id, exc_info=True)
            return {}

    def _policy(self) -> str:
        """The policy the call was judged under, for the card to name ("" when the gatekeeper
        cannot say now: the card then leaves it out)."""
        try:
            return self.engine.gatekeeper.effective_policy(self.runner.thread_id, self.runner.policy)
        except Exception:
            return ""

    def allowed(self, call: ToolCall) -> None:
        """The node is written and the run executes the call (an interaction writes both when
        its request is persisted)."""
        self.body = msgspec.structs.replace(self.body, params=call.wire_params())
        if call.spec.interaction:
            return
        engine, runner = self.engine, self.runner
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", self.body, turn_id=runner.turn_id,
                                     node_id=self.node_id)
            engine.store.update_run(conn, runner.run_id, state=runs.EXECUTING, pending_tool=self._pending(call))

    def dispatching(self, call: ToolCall, judgement: Judgement, approved: Approved | None) -> None:
        """Durable before anything is sent: recovery must know this call may have acted. An
        interaction persists its request here instead (what it dispatches is the wait)."""
        engine, runner = self.engine, self.runner
        if call.spec.interaction:
            self._open_interaction(call)
            return
        with engine.store.transaction() as conn:
            run = engine.store.run(runner.run_id, conn)
            pending = run.pending_tool or self._pending(call)
            pending = msgspec.structs.replace(pending, started_at=engine.clock(), target_origin=call.origin,
                                              approval_id=approved.approval_id if approved else None,
                                              approved_revision=approved.revision if approved else None)
            engine.store.update_run(conn, run.id, state=runs.EXECUTING, pending_tool=pending)
        engine.activity(runner.thread_id)

    # -- approvals ------------------------------------------------------------------------------

    async def settle(self, approval: WaitRow, settled: Settled | None) -> Approved | Stopped:
        """Wait for the approval's decision (unless `settled` is given) and apply it."""
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
                thread_id=runner.thread_id, approval_id=approval.id, tool=self.body.tool, target_origin=target_origin,
                kind=settled.kind, turn_id=runner.turn_id, call_id=self.node_id, policy=runner.policy,
                effect=str(approval.request.get("effect") or ""))
        except Exception as exc:  # GatekeeperUnavailable, InvalidInput: fail closed for accepts
            if settled.kind.startswith("accept"):
                return Stopped(None, Unavailable(str(exc), "initial"))
            applied = None
        if applied is not None and applied.granted and approval.request.get("effect"):
            engine.consent_changed(runner.thread_id)  # the panel lists the commit now allowed
        if settled.kind in ("decline", "cancel"):
            note = settled.answer.get("note")
            if settled.kind == "cancel":
                stopped = Stopped(ToolCode.CANCELLED, (CANCELLED, True))
            elif settled.by in ("timeout", "recovery"):
                stopped = Stopped(ToolCode.TIMED_OUT, (TIMED_OUT.format(note=note or RECOVERY_TIMEOUT_NOTE), False))
            else:
                stopped = Stopped(ToolCode.DECLINED, (DECLINED.format(note=f" User said: {note}" if note else ""), False))
            if self.spec is not None:
                engine.authorizer.audit(_unresolved(self.spec, runner.thread_id, target_origin),
                                        self.proc.context(self.node_id), str(stopped.outcome))
            return stopped
        assert applied is not None
        return Approved(approval.id, applied.revision)

    # -- interactions ---------------------------------------------------------------------------

    def _open_interaction(self, call: ToolCall) -> None:
        """The tool call node, the persisted request and the run's waiting state, in one transaction."""
        from host.calls.router import load_runner

        engine, runner = self.engine, self.runner
        kind = load_runner(call.spec.runner)  # type: ignore[arg-type]
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", self.body, turn_id=runner.turn_id,
                                     node_id=self.node_id)
            if engine.store.run(runner.run_id, conn).state == runs.WAITING_APPROVAL:
                # Approved: dispatched like any call, and what it dispatches is the wait.
                engine.store.update_run(conn, runner.run_id, state=runs.EXECUTING)
            engine.interactions.open(
                conn, wait_id=new_id(), thread_id=runner.thread_id, run_id=runner.run_id,
                turn_id=runner.turn_id, item_id=self.node_id, request=kind.request(call, engine.clock()),
                timeout_s=kind.timeout(call.params, engine.interaction_timeout_s()), pending=self._pending(call))

    # -- endings --------------------------------------------------------------------------------

    async def end(self, ending: Ending, *, origin: str | None = None) -> bool:
        """Write the result node of how the call ended; True when the user cancelled the turn."""
        if isinstance(ending, Ran):
            return await self._ran(ending, origin)
        if isinstance(ending, Refused):
            # Nothing ran, so this text is ours (stored trusted, not fenced): what the browser
            # reported while resolving the target is quoted, as are the page's values in ours.
            problem = ending.failure.in_own_words()
            if ending.phase == "dispatch":  # the tab went away or changed while the call waited
                tab_id = ending.call.tab_id if ending.call is not None else None
                return self.finish(ok=False, code=problem.code, counted=True,
                                   text=failure(self.body.tool, problem, tab_id=tab_id).text)
            return self.finish(ok=False, code=problem.code, counted=True, text=f"Error {problem.code}: {problem.message}")
        if isinstance(ending, Unavailable) and ending.storage:
            return self.finish(ok=False, code=ToolCode.STORAGE_UNAVAILABLE, counted=True, outcome="denied",
                               text=STORAGE_UNAVAILABLE.format(reason=_cause(ending.reason)))
        if isinstance(ending, Unavailable):
            return self.finish(ok=False, code=ToolCode.GATEKEEPER_UNAVAILABLE, counted=True,
                               text=UNAVAILABLE.format(reason=ending.reason), outcome="failed")
        if isinstance(ending, Denied):
            decision = ending.judgement.decision
            if ending.phase == "dispatch":
                return self.finish(ok=False, code=ToolCode.DENIED, counted=True,
                                   text=DENIED_AT_DISPATCH.format(reason=decision.reason))
            return self.finish(ok=False, code=decision.code, counted=False, outcome="denied",
                               text=DENIED.format(reason=decision.reason), details=_decision_details(decision))
        if isinstance(ending, Changed):
            return self.finish(ok=False, code=ToolCode.AUTHORIZATION_CHANGED, counted=True,
                               text=CHANGED.format(reason=ending.judgement.reason))
        if isinstance(ending, NoSiteAccess):
            return self.finish(ok=False, code=ToolCode.NO_SITE_ACCESS, counted=True, text=no_site_access(ending.origin))
        if isinstance(ending, TargetChanged):
            return self.finish(ok=False, code=ToolCode.TARGET_CHANGED, counted=True,
                               text=failure(self.body.tool, ending.failure(), tab_id=ending.before.tab_id).text)
        assert isinstance(ending, Stopped)
        if isinstance(ending.detail, Unavailable):
            return await self.end(ending.detail)
        text, cancelled = ending.detail
        self.finish(ok=False, code=ending.outcome, counted=False, outcome=ending.outcome, text=text)
        return cancelled

    async def _ran(self, ending: Ran, origin: str | None) -> bool:
        engine, spec = self.engine, self.spec
        assert spec is not None
        result = ending.result
        details = dict(result.details)
        if self.escalated_from is not None:
            details["escalatedFrom"] = self.escalated_from
            details["escalatedTo"] = spec.name
        trust = result.trust or spec.result_trust or "untrusted"
        provenance = result.provenance or spec.result_provenance or "page"
        if origin is None:
            origin = ending.call.origin if ending.call is not None else ""
        if spec.interaction:
            return self.finish(ok=result.ok, code=result.code, counted=False,
                               outcome="answered" if result.ok else "unanswered", text=result.text, trust=trust,
                               provenance=provenance, origin=origin, details=details)
        escalation = spec.escalation
        if (not result.ok and result.code == ToolCode.L1_NOT_EFFECTIVE and escalation is not None
                and details.get("escalationTool") == escalation and escalation in engine.tool_names()):
            self.finish(ok=False, code=result.code, counted=False, outcome="escalated", text=result.text, trust=trust,
                        provenance=provenance, origin=origin, details={**details, "escalatedTo": escalation})
            # The trusted twin runs as a call of its own (its own node, checks and approval) answering
            # the same model call id, so the model reads its result; this attempt's result stays.
            ref = CallRef(id=self.body.call_id, name=escalation, arguments=dict(self.body.params))
            return await self.proc.process(ref, self.body.step, self.body.ordinal, node_id=f"{self.node_id}:escalation:"
                                           f"{escalation}", escalated_from=spec.name)
        return self.finish(ok=result.ok, code=result.code, counted=not result.ok, text=result.text, trust=trust,
                           provenance=provenance, origin=origin, details=details)

    def finish(self, *, ok: bool, text: str, code: str | None, counted: bool, outcome: str | None = None,
               trust: str = "trusted", provenance: str = "tool", origin: str = "",
               details: dict[str, Any] | None = None) -> bool:
        """Write the call (if not yet written) and its result; clear the run's pending tool."""
        engine, runner = self.engine, self.runner
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n[result cut at {MAX_RESULT_CHARS} characters]"
        result = ToolResultBody(call_id=self.body.call_id, tool=self.body.tool, ok=ok, text=text,
                                outcome=outcome or ("ok" if ok else "failed"), counted=counted, code=code, trust=trust,
                                provenance=provenance, origin=origin, fingerprint=self.mark, details=details or {})
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, runner.thread_id, "tool_call", self.body, turn_id=runner.turn_id,
                                     node_id=self.node_id)
            engine.store.append_node(conn, runner.thread_id, "tool_result", result, turn_id=runner.turn_id,
                                     node_id=f"{self.node_id}:result")
            engine.store.update_run(conn, runner.run_id, pending_tool=None)
        try:  # indexed as it arrives, so the next decision only looks values up
            engine.provenance.of(runner.thread_id)
        except Exception:  # read again (or failed closed) when the next call is judged
            log.debug("provenance of %s not updated", runner.thread_id, exc_info=True)
        engine.bus.emit(ui.ItemComplete, runner.thread_id, item_id=self.node_id,
                        result=ui.ItemResult(ok=ok, text=text[:EVENT_TEXT_CHARS], code=code, details=details or None))
        return False

    def _pending(self, call: ToolCall) -> PendingTool:
        spec = call.spec
        return PendingTool(call_id=self.body.call_id, node_id=self.node_id, tool=spec.name, params=call.wire_params(),
                           target_origin=call.origin, tab_id=call.tab_id, effects=spec.effects,
                           recovery=spec.recovery or "never-retry")


def leaving(call: ToolCall) -> list[str]:
    """Where the call's element takes the page when that is another origin, as `METHOD URL`."""
    from host.gatekeeper.origins import destination, normalize_origin

    facts = call.target.facts if call.target is not None else None
    here = normalize_origin(call.origin).text if call.origin else ""
    out = []
    for lead in (facts or {}).get("destinations", ()):
        url = str(lead.get("url") or "")
        if destination(url).origin.text != here:
            out.append(f"{str(lead.get('method') or 'GET').upper()} {url}")
    return out


def other_sites_of(call: ToolCall) -> tuple[str, list[OtherSite]]:
    """The registrable domain of the page a call acts on and each place on another site it takes
    that page to (a URL it loads, where its element leads, a history entry), for the card to say
    that the agent leaves one site for another; ("", []) when it leaves no web page for another
    site. A fetch or a download loads nothing into the page."""
    from host.gatekeeper.facts.values import site_of
    from host.gatekeeper.origins import destination, normalize_origin

    spec, target = call.spec, call.target
    page = normalize_origin(call.origin) if call.origin else None
    if (page is None or page.scheme not in _WEB or not page.host or target is None or target.start_page
            or spec.target == "destination"):
        return "", []
    here = site_of(page.host)
    urls = []
    if spec.url_param is not None:
        urls.append(str(call.wire_params().get(spec.url_param) or ""))
    urls += [lead.split(" ", 1)[-1] for lead in leaving(call)]
    found: list[OtherSite] = []
    for url in urls:
        where = destination(url)
        if not where.valid or where.script or where.origin.scheme not in _WEB or not where.origin.host:
            continue
        site = site_of(where.origin.host)
        if site != here and all(other.url != where.href for other in found):
            found.append(OtherSite(url=where.href, site=site))
    return (here, found[:_MAX_OTHER_SITES]) if found else ("", [])


def action_targets(call: ToolCall) -> list[ActionTarget]:
    """Each action's element of a multi-action call (`actions`), as the host's ref map names it,
    for the card's line per action; an action whose element the host cannot name masks what it
    types when any element of the call is a password field."""
    actions = call.wire_params().get("actions")
    if not isinstance(actions, list):
        return []
    from host.tools.call import Target

    facts = call.target.facts if call.target is not None else None
    hints = {str(hint.get("ref")): hint for hint in (facts or {}).get("hints") or () if isinstance(hint, dict)}
    anywhere = hides_typed_value(facts)
    out = []
    for action in actions:
        hint = hints.get(str(action.get("ref"))) if isinstance(action, dict) else None
        if hint is None:
            out.append(ActionTarget(password_target=anywhere))
            continue
        role, name = Target(facts={"hints": [hint]}).element()
        out.append(ActionTarget(role=role, name=name, password_target=hides_typed_value({"hints": [hint]})))
    return out


def _decision_details(decision: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"verdict": decision.verdict, "reasonCode": decision.code,
                               "targetOrigin": decision.target_origin}
    if decision.rule is not None:
        details["rule"] = decision.rule.describe()
    return details


def _cause(reason: str) -> str:
    """The storage failure as a person reads it (see `healing.plain_cause`)."""
    from host.gatekeeper.healing import plain_cause

    return plain_cause(reason)[:300]
