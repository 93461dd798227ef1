"""`Gatekeeper`: the stateful service the engine calls before every tool call.

A facade over the parts of the permission state, each in its own module:
  loaded_policy     the policy files, stored rules and origin lists in force (reloaded when edited)
  rule_edits        changes to the stored rules and lists, approvals' site rules, injected rules
  thread_state      session grants, thread scopes and policy overrides
  tool_definitions  the definitions MCP tools were trusted under
  audit_trail       the audit log and the denial-burst monitor
  availability      the fail-closed error and the change listeners
Two sets of its methods live in modules of their own: `opening` (the state opened over the
store, healed after a storage fault, or adopted with a store that opened late) and `in_force`
(what is in force, and the rule and list edits). It turns the parts into a `Context` for the
pure `decision.check`. Fail closed: when any of that state
cannot be loaded or saved, `check` raises `GatekeeperUnavailable` (and the engine treats the call
as denied).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec

from protocol.ui.approvals import DECISION_KINDS

from host.gatekeeper import revision as rev
from host.gatekeeper.alerts import Alert, DenialBurstMonitor
from host.gatekeeper.audit_trail import AuditTrail
from host.gatekeeper.availability import Availability
from host.gatekeeper.decision import FLAG_APPROVED, Call, Context, Decision, TraceStep, check
from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.grants import SessionGrants
from host.gatekeeper.healing import Healer, is_storage_error
from host.gatekeeper.in_force import ActivePermissions, InForce
from host.gatekeeper.loaded_policy import LoadedPolicy, RuleView
from host.gatekeeper.opening import Opening
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.policy import POLICIES, resolve_policy
from host.gatekeeper.policy_files import managed_policy_path, user_policy_path
from host.gatekeeper.reach import Reach, reach_of
from host.gatekeeper.rule_edits import DEFAULT_RULE, RuleEdits
from host.gatekeeper.rules import Rule
from host.gatekeeper.storage.audit import AuditLog
from host.gatekeeper.storage.pins import ToolPins, definition_of
from host.gatekeeper.storage.rule_storage import RuleStorage
from host.gatekeeper.thread_state import ThreadState
from host.gatekeeper.tool_definitions import ToolDefinitions
from host.store.db import Store, StoreError
from host.tools.catalog import MCP_PREFIX, lookup


class CheckRequest(msgspec.Struct, kw_only=True):
    """One tool call to judge, as the engine knows it after resolving the target."""

    thread_id: str
    tool: str
    params: dict[str, Any] = {}
    origin: str = ""  # the resolved target origin (tab, MCP server), "" if none
    turn_id: str | None = None
    call_id: str | None = None
    policy: str | None = None  # per-turn override
    target: dict[str, Any] | None = None  # element facts, e.g. {"input_type": "password"}
    phase: Literal["initial", "dispatch"] = "initial"
    approved_revision: str | None = None  # the revision the user approved (dispatch phase)
    approval_id: str | None = None  # the approval that covered this call (dispatch phase)
    # Where the thread's values came from (`host.gatekeeper.provenance.Provenance`); None: unknown
    # (a direct call from the console), and the decision's provenance step is skipped.
    provenance: Any = None
    # The user issued this call themself (the REPL, the control API): no model chose it, so what
    # it commits is what the user asked for.
    direct: bool = False


class AppliedDecision(msgspec.Struct, frozen=True):
    """What `apply_decision` changed; `revision` is the one to present at dispatch."""

    kind: str
    revision: str
    granted: bool = False
    rule: Rule | None = None
    scope_origin: str | None = None


class Gatekeeper(Opening, InForce):
    """Permission decisions with state: construct once per host process."""

    def __init__(self, store: Store | None = None, *, user_policy: Path | None = None,
                 managed_policy: Path | None = None, clock: Callable[[], float] = time.time,
                 on_alert: Callable[[Alert], None] | None = None, burst_threshold: int = 5,
                 burst_window_s: float = 60.0, reload_interval_s: float = 1.0) -> None:
        self._options = {"user_policy": user_policy, "managed_policy": managed_policy, "clock": clock,
                         "on_alert": on_alert, "burst_threshold": burst_threshold, "burst_window_s": burst_window_s,
                         "reload_interval_s": reload_interval_s}
        self._store = store
        rule_storage = RuleStorage(store) if store is not None else None
        self._availability = Availability()
        self._policy = LoadedPolicy(
            store, rule_storage, self._availability, reload_interval_s=reload_interval_s,
            user_path=user_policy if user_policy is not None else user_policy_path(),
            managed_path=managed_policy if managed_policy is not None else managed_policy_path())
        self._audit = AuditTrail(self._availability, clock=clock, on_alert=on_alert,
                                 burst_threshold=burst_threshold, burst_window_s=burst_window_s)
        self._threads = ThreadState(store)
        self._availability.add_source(lambda: self._threads.error)
        self._rules = RuleEdits(rule_storage, self._policy, self._availability, clock)
        self._definitions = ToolDefinitions(ToolPins(store), self._threads.grants, self._rules, self._availability)
        self._healer = Healer(self._reopen)
        self._healing = threading.Lock()
        self._availability.healer = self.heal
        try:
            self._open_state()
        except (StoreError, GatekeeperUnavailable) as exc:
            self._availability.fail(exc)

    # The parts callers and tests reach directly.

    @property
    def grants(self) -> SessionGrants:
        """The session grants."""
        return self._threads.grants

    @property
    def pins(self) -> ToolPins:
        """The pinned MCP tool definitions."""
        return self._definitions.pins

    @property
    def audit(self) -> AuditLog | None:
        """The audit log (None without a store, or when it could not be opened)."""
        return self._audit.log

    @property
    def monitor(self) -> DenialBurstMonitor:
        """The denial-burst monitor."""
        return self._audit.monitor

    @property
    def load_errors(self) -> list[InvalidInput]:
        """Why the last load of the policy files was refused (empty when it succeeded)."""
        return self._policy.load_errors

    # -- browser session, threads --------------------------------------------------------------

    def bind_browser_session(self, browser_session: str) -> None:
        """Adopt the browser-session id from the extension's hello (drops other sessions' grants)."""
        self._threads.bind_browser_session(browser_session)

    def set_thread_policy(self, thread_id: str, policy: str | None) -> None:
        """Set (or clear with None) a thread's policy override; legacy names are normalised."""
        self._threads.set_policy(thread_id, policy)

    def set_scope_lock(self, thread_id: str, patterns: list[str] | None) -> None:
        """Confine a thread's writes and navigations to origin patterns (None removes the lock)."""
        self._policy.current()
        self._threads.scopes.set_lock(thread_id, patterns)
        self._availability.changed()

    def scope_lock(self, thread_id: str) -> Any:
        """A thread's scope lock (the OriginSet its writes are confined to) or None."""
        return self._threads.scopes.lock(thread_id)

    def scope_origins(self, thread_id: str) -> frozenset[str]:
        """The origins the user accepted in this thread."""
        return self._threads.scopes.origins(thread_id)

    def clear_thread(self, thread_id: str) -> None:
        """Forget a deleted thread's grants, scope, lock and policy override."""
        self._policy.current()
        self._threads.clear(thread_id)
        self._audit.monitor.reset(thread_id)
        self._availability.changed()

    def revoke_grants(self) -> None:
        """Drop every session grant (the browser revoked site access, or the user asked)."""
        self._threads.grants.clear_all()

    # -- where a thread may not go -------------------------------------------------------------

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on whichever thread made the change) after anything that decides where
        a thread may go changed: rules, origin lists, scope locks, the policy files, availability."""
        self._availability.on_change(listener)

    @property
    def changes(self) -> int:
        """How many such changes happened (a cheap way to tell that a computed reach is stale)."""
        return self._availability.changes

    def reach(self, thread_id: str, tool: str = "navigate") -> Reach:
        """What this thread may not reach with `tool` (see `reach.py`). Raises
        `GatekeeperUnavailable` (fail closed)."""
        state = self._policy.current()
        return reach_of(tool, state.lists, state.rules, self._threads.scopes.lock(thread_id),
                        confine_page=state.lock_holds_page_requests)

    def destination_denied(self, thread_id: str, tool: str, url: str) -> Decision | None:
        """The decision that denies this thread sending `tool` to `url`, or None when it is not a
        deny. Pure: nothing is audited (the caller records what happened). Raises
        `GatekeeperUnavailable` (fail closed)."""
        state = self._policy.current()
        spec = lookup(tool)
        params = {spec.url_param: url} if spec is not None and spec.url_param else {}
        ctx = Context(origin=url, policy=resolve_policy(None, self._threads.policy(thread_id), state.default_policy),
                      rules=state.rules, lists=state.lists, **self._threads.context(thread_id))
        decision = check(Call(tool, params), ctx)
        return decision if decision.verdict == "deny" else None

    # -- deciding ------------------------------------------------------------------------------

    def effective_policy(self, thread_id: str, turn_policy: str | None = None) -> str:
        """Turn override, then thread override, then the files' default, then `untrusted`."""
        state = self._policy.current()
        return resolve_policy(turn_policy, self._threads.policy(thread_id), state.default_policy)

    def check(self, request: CheckRequest) -> Decision:
        """Judge one call and audit the decision. Raises `GatekeeperUnavailable` (fail closed);
        a call refused so while storage is down is written to the log once it answers."""
        try:
            self._policy.current()
        except GatekeeperUnavailable as exc:
            if is_storage_error(exc):
                self._audit.refused(thread_id=request.thread_id, turn_id=request.turn_id, call_id=request.call_id,
                                    tool=request.tool, target_origin=request.origin, cause=exc)
            raise
        definition = definition_of(request.target) if request.tool.startswith(MCP_PREFIX) else None
        pin_key = (request.tool, normalize_origin(request.origin).text if request.origin else "")
        # At the dispatch of an approved call, what the answer granted is for the new definition.
        changed = definition is not None and self._definitions.changed(
            *pin_key, definition, forget=request.approved_revision is None)
        state = self._policy.current()  # rules may have been dropped with the old definition
        thread_id = request.thread_id
        policy = resolve_policy(request.policy, self._threads.policy(thread_id), state.default_policy)
        ctx = Context(origin=request.origin, policy=policy, rules=state.rules, lists=state.lists,
                      **self._threads.context(thread_id), target=request.target, definition_changed=changed,
                      provenance=request.provenance, direct=request.direct)
        decision = check(Call(request.tool, request.params), ctx)
        revision = rev.authorization_revision(policy, state.rules_digest, state.lists.digest)
        if decision.verdict == "ask" and request.phase == "dispatch" and request.approved_revision is not None:
            accepted = {revision}
            if request.approval_id is not None:
                accepted.add(self.authorization_revision(policy, exclude_approval=request.approval_id))
            if request.approved_revision in accepted:
                step = TraceStep("dispatch", "hit", "the user approved this call under the same authorisation")
                decision = msgspec.structs.replace(
                    decision, verdict="allow", flags=(*decision.flags, FLAG_APPROVED),
                    reason=f"approved by the user ({decision.reason})", trace=(*decision.trace, step))
        if changed:
            decision = self._definitions.settle(decision, pin_key, definition,  # type: ignore[arg-type]
                                                approved=request.approved_revision is not None)
        decision = msgspec.structs.replace(decision, revision=revision)
        self._audit.decision(decision, thread_id=thread_id, turn_id=request.turn_id, call_id=request.call_id,
                             params=request.params, target=request.target, phase=request.phase)
        return decision

    # -- approvals -----------------------------------------------------------------------------

    def apply_decision(self, *, thread_id: str, approval_id: str, tool: str, target_origin: str, kind: str,
                       turn_id: str | None = None, call_id: str | None = None,
                       policy: str | None = None, effect: str = "") -> AppliedDecision:
        """Apply the side effects of a user's answer to an ASK and audit it.

        Any accept adds the target origin to the thread's scope; `acceptForSession` grants (tool,
        origin) for this browser session, and for a commit (`effect`) its class there too
        (`effect:<class>`: the commit step reads it as the task's consent); `acceptForSite`
        persists an allow rule (idempotent per
        approval id; for an origin-less call the rule covers origin-less calls only, never `*`).
        The returned revision already includes that rule, so the dispatch re-check passes."""
        state = self._policy.current()
        if kind not in DECISION_KINDS:
            raise InvalidInput("invalid_decision", f"unknown decision kind {kind!r}; expected one of "
                               f"{', '.join(DECISION_KINDS)}", "$.kind")
        spec = lookup(tool)
        name = spec.name if spec is not None else tool
        origin = normalize_origin(target_origin).text if target_origin else ""
        granted, rule, scope_origin = False, None, None
        if kind.startswith("accept"):
            if origin:
                self._threads.scopes.add_origin(thread_id, origin)
                scope_origin = origin
            if kind == "acceptForSession":
                self._threads.grants.grant(thread_id, name, origin)
                if effect and effect != "step":
                    self._threads.grants.grant(thread_id, f"effect:{effect}", origin)
                granted = True
            elif kind == "acceptForSite":
                rule = self._rules.persist_site_rule(thread_id, approval_id, name, origin)
        self._audit.approval(thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=name, target_origin=origin,
                             approval_id=approval_id, kind=kind)
        effective = resolve_policy(policy, self._threads.policy(thread_id), state.default_policy)
        return AppliedDecision(kind, self.authorization_revision(effective), granted, rule, scope_origin)

    def record_outcome(self, *, thread_id: str, tool: str, outcome: str, target_origin: str = "",
                       turn_id: str | None = None, call_id: str | None = None, detail: str | None = None) -> None:
        """Audit how a tool call ended (ok, failed, declined, timed out...)."""
        self._policy.current()
        self._audit.outcome(thread_id=thread_id, tool=tool, outcome=outcome, target_origin=target_origin,
                            turn_id=turn_id, call_id=call_id, detail=detail)


__all__ = ["ActivePermissions", "AppliedDecision", "CheckRequest", "DECISION_KINDS", "DEFAULT_RULE", "Gatekeeper",
           "POLICIES", "RuleView"]
