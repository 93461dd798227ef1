"""`Gatekeeper`: the stateful service the engine calls before every tool call.

It owns the loaded policy files, the stored rules and origin lists, session grants, thread scopes,
the audit log and the denial-burst monitor, and turns them into a `Context` for the pure
`decision.check`. A policy file edited by hand is noticed without a restart: at most once a
second, a use of the gatekeeper compares the files' size and modification time with those it
last loaded and reloads when they differ (a file that became invalid leaves the previous state
in force; one fixed after start-up makes the gatekeeper available again). Fail closed: when any
of that state cannot be loaded or saved, `check` raises `GatekeeperUnavailable` (and the engine
treats the call as denied).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from protocol.permissions import ORIGIN_LISTS, OriginList
from protocol.ui.approvals import DECISION_KINDS

from host.gatekeeper import revision as rev
from host.gatekeeper.alerts import Alert, DenialBurstMonitor
from host.gatekeeper.storage.audit import AuditLog
from host.gatekeeper.decision import FLAG_APPROVED, Call, Context, Decision, TraceStep, check
from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.grants import SessionGrants
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.patterns import PatternError, parse_origin_pattern, parse_tool_pattern
from host.gatekeeper.storage.pins import ToolPins, definition_of
from host.gatekeeper.policy import DEFAULT_POLICY, POLICIES, normalize_policy, resolve_policy
from host.gatekeeper.policy_files import (
    PolicyFileError,
    PolicyLayer,
    load_policy_file,
    managed_policy_path,
    user_policy_path,
)
from host.gatekeeper.reach import Reach, reach_of
from host.gatekeeper.storage.rule_storage import RuleStorage
from host.gatekeeper.rules import BUILTIN_RULE_PREFIX, Rule, RuleSet, parse_rule
from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
from host.gatekeeper.scope import ThreadScopes
from host.gatekeeper.sensitive import BUILTIN_BLOCKED, BUILTIN_GUARDED, OriginLists
from host.gatekeeper.tool_names import unknown_tool_message
from host.store.db import Store, StoreError
from host.tools.catalog import MCP_PREFIX, lookup

# Stored like a user's rule (so the user may delete it, and it ranks as it always has) but shown
# as built in: its id starts with `BUILTIN_RULE_PREFIX`.
DEFAULT_RULE = Rule(tool="run_javascript", origin="*", verdict="deny", source="user_setting",
                    id=f"{BUILTIN_RULE_PREFIX}run_javascript-deny")
_SEEDED_META = "gatekeeper.default_rules_seeded_v1"

log = logging.getLogger("tabwarden.gatekeeper")


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


class AppliedDecision(msgspec.Struct, frozen=True):
    """What `apply_decision` changed; `revision` is the one to present at dispatch."""

    kind: str
    revision: str
    granted: bool = False
    rule: Rule | None = None
    scope_origin: str | None = None


class RuleView(msgspec.Struct, frozen=True):
    """A rule with where it came from, so a person can see why it is in force and whether they may
    remove it."""

    rule: Rule
    provenance: str  # builtin | user:<path> | managed:<path> | store | injected:<name>
    removable: bool


class ActivePermissions(msgspec.Struct, frozen=True):
    """A snapshot of what is in force: the policy, every rule with its provenance, the origin lists
    and their revision."""

    policy: str
    rules: list[RuleView]
    loaded_sources: list[str]
    sensitive_origins: list[str]
    guarded_origins: list[str]
    builtin_sensitive_count: int
    builtin_guarded_count: int
    revision: str


@dataclass(frozen=True)
class _State:
    default_policy: str
    rules: RuleSet
    views: tuple[RuleView, ...]
    lists: OriginLists
    sources: tuple[str, ...]
    rules_digest: str
    examples: tuple[tuple[str, dict[str, Any]], ...]
    warnings: tuple[InvalidInput, ...] = ()


class Gatekeeper:
    """Permission decisions with state: construct once per host process."""

    def __init__(self, store: Store | None = None, *, user_policy: Path | None = None,
                 managed_policy: Path | None = None, clock: Callable[[], float] = time.time,
                 on_alert: Callable[[Alert], None] | None = None, burst_threshold: int = 5,
                 burst_window_s: float = 60.0, reload_interval_s: float = 1.0) -> None:
        self._store = store
        self._rule_storage = RuleStorage(store) if store is not None else None
        self._clock = clock
        self._user_path = user_policy if user_policy is not None else user_policy_path()
        self._managed_path = managed_policy if managed_policy is not None else managed_policy_path()
        self._lock = threading.RLock()
        self._reload_interval_s = reload_interval_s
        self._files_seen: tuple[Any, ...] = ()
        self._files_checked_at = time.monotonic()
        self._reloading = threading.Lock()
        self._error: Exception | None = None
        self._thread_policy: dict[str, str] = {}
        self._injected: dict[str, tuple[Rule, ...]] = {}
        self._on_alert = on_alert
        # Told when where a thread may go changes (the navigation guard keeps the browser in step).
        self._listeners: list[Callable[[], None]] = []
        self._changes = 0
        self.monitor = DenialBurstMonitor(threshold=burst_threshold, window_s=burst_window_s, clock=clock,
                                          on_alert=self._alert)
        self.load_errors: list[InvalidInput] = []
        self._state: _State | None = None
        self._layers: tuple[PolicyLayer, ...] = ()
        self.grants = SessionGrants(store)
        self.pins = ToolPins(store)
        # (tool, origin) -> the changed definition the user was last asked about: an approval
        # covers that definition only (not one the server switched to while it waited).
        self._asked_definitions: dict[tuple[str, str], str] = {}
        self.audit: AuditLog | None = None
        self._scopes = ThreadScopes(None)
        try:
            if store is not None:
                store.migrate(COMPONENT, MIGRATIONS)
                self._seed_defaults()
                self.audit = AuditLog(store, clock=clock)
            self._scopes = ThreadScopes(store)
            self.reload()
        except (StoreError, GatekeeperUnavailable) as exc:
            self._error = exc

    # -- availability -------------------------------------------------------------------------

    @property
    def error(self) -> Exception | None:
        """Why the gatekeeper is unavailable (None when it works)."""
        return self._error or self.grants.error or self._scopes.error

    def _ensure(self) -> _State:
        self._reload_if_edited()
        error = self.error
        if error is not None:
            raise GatekeeperUnavailable(f"permission state is unavailable: {error}")
        if self._state is None:
            problems = "; ".join(str(e) for e in self.load_errors) or "not loaded"
            raise GatekeeperUnavailable(f"permission policy is unavailable: {problems}. Every tool call is refused "
                                        "until the file is fixed; the host reads it again within a second")
        return self._state

    def mark_unavailable(self, reason: Exception) -> None:
        """Fail closed from now on (e.g. the host could not open its store)."""
        self._error = reason
        self._changed()

    def _fail(self, exc: Exception) -> GatekeeperUnavailable:
        self._error = exc
        return GatekeeperUnavailable(f"permission state is unavailable: {exc}")

    # -- loading ------------------------------------------------------------------------------

    def _seed_defaults(self) -> None:
        assert self._rule_storage is not None
        # Once per database: the user may have deleted the default rule, so never bring it back.
        self._rule_storage.seed_once(_SEEDED_META, DEFAULT_RULE, self._clock)

    def _file_signatures(self) -> tuple[Any, ...]:
        out = []
        for path in (self._managed_path, self._user_path):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def _reload_if_edited(self) -> None:
        now = time.monotonic()
        if now - self._files_checked_at < self._reload_interval_s:
            return
        self._files_checked_at = now
        if self._file_signatures() == self._files_seen or not self._reloading.acquire(blocking=False):
            return
        try:
            problems = self.reload()
        except GatekeeperUnavailable:
            return  # `error` is set: the caller fails closed
        finally:
            self._reloading.release()
        if problems:
            log.warning("an edited policy file is refused, the previous rules stay in force: %s",
                        "; ".join(str(p) for p in problems))
        else:
            log.info("policy files reloaded after an edit")

    def reload(self) -> list[InvalidInput]:
        """(Re)read the policy files and stored rules. On any error the previous state stays in
        force (or, at start-up, nothing does and `check` raises) and the errors are returned."""
        self._files_seen = self._file_signatures()  # taken first: an edit while reading is seen next time
        errors: list[InvalidInput] = []
        layers: list[PolicyLayer] = []
        for path, managed in ((self._managed_path, True), (self._user_path, False)):
            try:
                layer = load_policy_file(path, managed=managed)
            except PolicyFileError as exc:
                errors.extend(exc.errors)
                continue
            if layer is not None:
                layers.append(layer)
        if not errors:
            try:
                state = self._build_state(layers)
                errors.extend(self._check_examples(state))
            except StoreError as exc:
                raise self._fail(exc) from exc
            except InvalidInput as exc:
                errors.append(exc)
        with self._lock:
            self.load_errors = errors
            if not errors:
                self._state = state
                self._layers = tuple(layers)
        if not errors:
            self._changed()
        return errors

    def _stored(self) -> tuple[list[Rule], list[str], list[str]]:
        if self._rule_storage is None:
            return [], [], []
        rules = self._rule_storage.rules()
        blocked, guarded = self._rule_storage.origin_lists()
        return rules, blocked, guarded

    def _build_state(self, layers: list[PolicyLayer]) -> _State:
        stored_rules, blocked, guarded = self._stored()
        views: list[RuleView] = []
        warnings: list[InvalidInput] = []
        sources = ["builtin"]
        default_policy = None
        examples: list[tuple[str, dict[str, Any]]] = []
        # The managed file's default policy wins over the user's.
        for layer in layers:
            sources.append(layer.label)
            if default_policy is None and layer.policy is not None:
                default_policy = layer.policy
            views.extend(RuleView(r, layer.label, False) for r in layer.rules)
            blocked = [*blocked, *layer.sensitive_origins]
            guarded = [*guarded, *layer.guarded_origins]
            examples.extend((layer.label, e) for e in layer.examples)
            warnings.extend(layer.skipped)
        if self._store is not None:
            sources.append(f"store:{self._store.path}")
        for index, rule in enumerate(stored_rules):
            # Stored before names were checked: kept (the user can see and delete it; it can
            # never match) and reported.
            never = unknown_tool_message(parse_tool_pattern(rule.tool))
            if never is not None:
                warnings.append(InvalidInput("unknown_tool", f"stored rule {rule.describe()}: {never}",
                                             f"$.rules[{index}].tool", "stored rules"))
            views.append(RuleView(rule, "builtin" if rule.id.startswith(BUILTIN_RULE_PREFIX) else "store", True))
        for name, rules in self._injected.items():
            sources.append(f"injected:{name}")
            views.extend(RuleView(r, f"injected:{name}", False) for r in rules)
        rules = [v.rule for v in views]
        lists = OriginLists(blocked, guarded)
        for warning in warnings:
            log.warning("rule left out or never matching: %s", warning)
        return _State(default_policy or DEFAULT_POLICY, RuleSet(rules), tuple(views), lists, tuple(sources),
                      rev.rules_digest(rules), tuple(examples), tuple(warnings))

    def _check_examples(self, state: _State) -> list[InvalidInput]:
        errors = []
        for index, (label, example) in enumerate(state.examples):
            ctx = Context(origin=example.get("origin") or "", policy=example.get("policy") or state.default_policy,
                          rules=state.rules, lists=state.lists, target=example.get("target"))
            decision = check(Call(example["tool"], example.get("params") or {}, example.get("effects"),
                                  example.get("level")), ctx)
            expected, code = example["expect"], example.get("expect_code")
            if decision.verdict != expected or (code is not None and decision.code != code):
                errors.append(InvalidInput(
                    "policy_example_failed",
                    f"example expects {expected}{f' ({code})' if code else ''} but the policy gives "
                    f"{decision.verdict} ({decision.code}): {decision.reason}",
                    f"$.examples[{index}]", label.split(":", 1)[1]))
        return errors

    def _rebuild(self) -> None:
        # Stored rules or lists changed: rebuild from the files as last loaded (re-reading them
        # here could half-apply a file the user is in the middle of editing).
        with self._lock:
            self._state = self._build_state(list(self._layers))
        self._changed()

    # -- browser session, threads --------------------------------------------------------------

    def bind_browser_session(self, browser_session: str) -> None:
        """Adopt the browser-session id from the extension's hello (drops other sessions' grants)."""
        self.grants.bind(browser_session)

    def set_thread_policy(self, thread_id: str, policy: str | None) -> None:
        """Set (or clear with None) a thread's policy override; legacy names are normalised."""
        normalized = normalize_policy(policy)
        with self._lock:
            if normalized is None:
                self._thread_policy.pop(thread_id, None)
            else:
                self._thread_policy[thread_id] = normalized

    def set_scope_lock(self, thread_id: str, patterns: list[str] | None) -> None:
        """Confine a thread's writes and navigations to origin patterns (None removes the lock)."""
        self._ensure()
        self._scopes.set_lock(thread_id, patterns)
        self._changed()

    def scope_lock(self, thread_id: str) -> Any:
        """A thread's scope lock (the OriginSet its writes are confined to) or None."""
        return self._scopes.lock(thread_id)

    def scope_origins(self, thread_id: str) -> frozenset[str]:
        """The origins the user accepted in this thread."""
        return self._scopes.origins(thread_id)

    def clear_thread(self, thread_id: str) -> None:
        """Forget a deleted thread's grants, scope, lock and policy override."""
        self._ensure()
        self.grants.clear_thread(thread_id)
        self._scopes.clear_thread(thread_id)
        self._thread_policy.pop(thread_id, None)
        self.monitor.reset(thread_id)
        self._changed()

    def revoke_grants(self) -> None:
        """Drop every session grant (the browser revoked site access, or the user asked)."""
        self.grants.clear_all()

    # -- where a thread may not go -------------------------------------------------------------

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on whichever thread made the change) after anything that decides where
        a thread may go changed: rules, origin lists, scope locks, the policy files, availability."""
        self._listeners.append(listener)

    @property
    def changes(self) -> int:
        """How many such changes happened (a cheap way to tell that a computed reach is stale)."""
        return self._changes

    def _changed(self) -> None:
        self._changes += 1
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("a gatekeeper change listener failed")

    def reach(self, thread_id: str, tool: str = "navigate") -> Reach:
        """What this thread may not reach with `tool` (see `reach.py`). Raises
        `GatekeeperUnavailable` (fail closed)."""
        state = self._ensure()
        return reach_of(tool, state.lists, state.rules, self._scopes.lock(thread_id))

    def destination_denied(self, thread_id: str, tool: str, url: str) -> Decision | None:
        """The decision that denies this thread sending `tool` to `url`, or None when it is not a
        deny. Pure: nothing is audited (the caller records what happened). Raises
        `GatekeeperUnavailable` (fail closed)."""
        state = self._ensure()
        spec = lookup(tool)
        params = {spec.url_param: url} if spec is not None and spec.url_param else {}
        ctx = Context(origin=url, policy=resolve_policy(None, self._thread_policy.get(thread_id), state.default_policy),
                      rules=state.rules, lists=state.lists, grants=self.grants.for_thread(thread_id),
                      scope_origins=self._scopes.origins_view(thread_id), scope_lock=self._scopes.lock(thread_id))
        decision = check(Call(tool, params), ctx)
        return decision if decision.verdict == "deny" else None

    # -- deciding ------------------------------------------------------------------------------

    def effective_policy(self, thread_id: str, turn_policy: str | None = None) -> str:
        """Turn override, then thread override, then the files' default, then `untrusted`."""
        state = self._ensure()
        return resolve_policy(turn_policy, self._thread_policy.get(thread_id), state.default_policy)

    def authorization_revision(self, policy: str, *, exclude_approval: str | None = None) -> str:
        """The current revision under `policy` (optionally ignoring one approval's own rules)."""
        state = self._ensure()
        digest = state.rules_digest if exclude_approval is None else rev.rules_digest(
            state.rules.rules, exclude_approval=exclude_approval)
        return rev.authorization_revision(policy, digest, state.lists.digest)

    def check(self, request: CheckRequest) -> Decision:
        """Judge one call and audit the decision. Raises `GatekeeperUnavailable` (fail closed)."""
        self._ensure()
        definition = definition_of(request.target) if request.tool.startswith(MCP_PREFIX) else None
        pin_key = (request.tool, normalize_origin(request.origin).text if request.origin else "")
        # At the dispatch of an approved call, what the answer granted is for the new definition.
        changed = definition is not None and self._definition_changed(
            *pin_key, definition, forget=request.approved_revision is None)
        state = self._ensure()  # rules may have been dropped with the old definition
        thread_id = request.thread_id
        policy = resolve_policy(request.policy, self._thread_policy.get(thread_id), state.default_policy)
        ctx = Context(origin=request.origin, policy=policy, rules=state.rules, lists=state.lists,
                      grants=self.grants.for_thread(thread_id), scope_origins=self._scopes.origins_view(thread_id),
                      scope_lock=self._scopes.lock(thread_id), target=request.target, definition_changed=changed,
                      provenance=request.provenance)
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
        if changed and decision.verdict == "ask" and request.approved_revision is None:
            if len(self._asked_definitions) > 1024:
                self._asked_definitions.clear()
            self._asked_definitions[pin_key] = definition  # type: ignore[assignment]
        if changed and decision.verdict == "allow" and FLAG_APPROVED in decision.flags:
            if self._asked_definitions.get(pin_key) != definition:
                # Approved for another definition (or before a restart that forgot which): ask again.
                step = TraceStep("definition_changed", "hit", "the approval was given for another definition")
                decision = msgspec.structs.replace(
                    decision, verdict="ask", flags=tuple(f for f in decision.flags if f != FLAG_APPROVED),
                    reason=f"the MCP server changed {request.tool} again after it was approved; confirm it anew",
                    trace=(*decision.trace, step))
            else:
                try:  # the user approved the new definition: grants and rules are made for it from now on
                    self.pins.pin(*pin_key, definition)  # type: ignore[arg-type]
                except StoreError as exc:
                    raise self._fail(exc) from exc
                self._asked_definitions.pop(pin_key, None)
        decision = msgspec.structs.replace(decision, revision=revision)
        self._audit_decision(request, decision)
        if decision.verdict == "deny":
            self.monitor.note_denial(thread_id, decision.code)
        return decision

    def _definition_changed(self, tool: str, origin: str, definition: str, *, forget: bool) -> bool:
        """Whether an MCP tool's definition differs from its pin (the first one seen is pinned).
        With `forget`, a changed tool loses its session grants and the site rules approvals made
        for it."""
        try:
            pinned = self.pins.pinned(tool, origin)
            if pinned is None:
                self.pins.pin(tool, origin, definition)
                return False
            if pinned == definition:
                return False
            if not forget:
                return True
            self.grants.clear_tool(tool, origin)
            dropped = [v.rule.id for v in self._ensure().views if v.removable and v.rule.tool == tool
                       and v.rule.origin == origin and v.rule.source == "approval_persist" and v.rule.id]
            if dropped and self._rule_storage is not None:
                for rule_id in dropped:
                    self._rule_storage.delete_rule(rule_id)
                self._rebuild()
            if dropped:
                log.warning("the definition of %s at %s changed: dropped its rules %s", tool, origin, dropped)
            return True
        except StoreError as exc:
            raise self._fail(exc) from exc

    def _audit_decision(self, request: CheckRequest, decision: Decision) -> None:
        if self.audit is None:
            return
        try:
            self.audit.append(kind="decision", thread_id=request.thread_id, turn_id=request.turn_id,
                              call_id=request.call_id, tool=decision.tool, target_origin=decision.target_origin,
                              params=request.params, target=request.target, verdict=decision.verdict,
                              code=decision.code, rule=decision.rule, flags=list(decision.flags),
                              detail=request.phase)
        except StoreError as exc:
            raise self._fail(exc) from exc

    def _alert(self, alert: Alert) -> None:
        if self.audit is not None:
            try:
                self.audit.append(kind="alert", thread_id=alert.thread_id, tool="", detail=alert.message)
            except StoreError as exc:
                self._error = exc  # the alert still goes out; later checks fail closed
        if self._on_alert is not None:
            self._on_alert(alert)

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
        state = self._ensure()
        if kind not in DECISION_KINDS:
            raise InvalidInput("invalid_decision", f"unknown decision kind {kind!r}; expected one of "
                               f"{', '.join(DECISION_KINDS)}", "$.kind")
        spec = lookup(tool)
        name = spec.name if spec is not None else tool
        origin = normalize_origin(target_origin).text if target_origin else ""
        granted, rule, scope_origin = False, None, None
        if kind.startswith("accept"):
            if origin:
                self._scopes.add_origin(thread_id, origin)
                scope_origin = origin
            if kind == "acceptForSession":
                self.grants.grant(thread_id, name, origin)
                if effect and effect != "step":
                    self.grants.grant(thread_id, f"effect:{effect}", origin)
                granted = True
            elif kind == "acceptForSite":
                rule = self._persist_site_rule(thread_id, approval_id, name, origin)
        if self.audit is not None:
            try:
                self.audit.append(kind="approval", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=name,
                                  target_origin=origin, approval_id=approval_id, approval_decision=kind)
            except StoreError as exc:
                raise self._fail(exc) from exc
        effective = resolve_policy(policy, self._thread_policy.get(thread_id), state.default_policy)
        return AppliedDecision(kind, self.authorization_revision(effective), granted, rule, scope_origin)

    def _persist_site_rule(self, thread_id: str, approval_id: str, tool: str, origin: str) -> Rule:
        if self._rule_storage is None:
            raise InvalidInput("no_store", "acceptForSite needs persistent storage")
        persisted = self._rule_storage.rule_of_approval(approval_id)
        if persisted is not None:
            return persisted  # idempotent per approval
        # Origin-less calls get an origin-less rule (""), never a global "*" allow.
        rule = Rule(tool=tool, origin=origin, verdict="allow", source="approval_persist",
                    created_at=self._clock(), id=f"approval:{approval_id}", source_thread_id=thread_id,
                    source_approval_id=approval_id)
        self._insert_rule(rule)
        return rule

    def record_outcome(self, *, thread_id: str, tool: str, outcome: str, target_origin: str = "",
                       turn_id: str | None = None, call_id: str | None = None, detail: str | None = None) -> None:
        """Audit how a tool call ended (ok, failed, declined, timed out...)."""
        self._ensure()
        if self.audit is None:
            return
        try:
            self.audit.append(kind="outcome", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=tool,
                              target_origin=target_origin, tool_outcome=outcome, detail=detail)
        except StoreError as exc:
            raise self._fail(exc) from exc

    # -- rules and lists -----------------------------------------------------------------------

    def add_rule(self, rule: Mapping[str, Any] | Rule) -> Rule:
        """Validate and store a user rule (source `user_setting` unless given as
        `approval_persist`/`plugin_default`; `managed` only comes from the managed file)."""
        self._ensure()
        body = msgspec.to_builtins(rule) if isinstance(rule, Rule) else dict(rule)
        if body.get("source") == "managed":
            raise InvalidInput("rule_not_allowed", "managed rules come only from the managed policy file", "$.source")
        body.setdefault("source", "user_setting")
        parsed = parse_rule(body)
        parsed = msgspec.structs.replace(parsed, id=parsed.id or f"rule:{uuid.uuid4()}",
                                         created_at=parsed.created_at or self._clock())
        self._insert_rule(parsed)
        return parsed

    def _insert_rule(self, rule: Rule) -> None:
        if self._rule_storage is None:
            raise InvalidInput("no_store", "rules need persistent storage")
        try:
            self._rule_storage.insert_rule(rule)
            self._rebuild()
        except StoreError as exc:
            raise self._fail(exc) from exc

    def remove_rule(self, rule_id: str) -> None:
        """Remove a stored rule. Rules from policy files (managed above all) and injected rules
        cannot be removed here; raises `InvalidInput` for them or an unknown id."""
        state = self._ensure()
        view = next((v for v in state.views if v.rule.id == rule_id and v.rule.id), None)
        if view is None:
            raise InvalidInput("unknown_rule", f"no rule with id {rule_id!r}", "$.id")
        if not view.removable:
            raise InvalidInput("rule_not_removable", f"rule {rule_id!r} comes from {view.provenance} and cannot be "
                               "removed here", "$.id")
        try:
            self._rule_storage.delete_rule(rule_id)  # type: ignore[union-attr]
            self._rebuild()
        except StoreError as exc:
            raise self._fail(exc) from exc

    def inject_rules(self, name: str, rules: Iterable[Mapping[str, Any]], *, source: str = "plugin_default") -> None:
        """Add host-computed rules under the provenance `injected:<name>` (replacing that name's
        previous set). They may not claim the `managed` source."""
        self._ensure()
        if source == "managed":
            raise InvalidInput("rule_not_allowed", "injected rules cannot be managed", "$.source")
        parsed = tuple(parse_rule(r, path=f"$[{i}]", force_source=source) for i, r in enumerate(rules))
        with self._lock:
            self._injected[name] = parsed
            self._rebuild()

    @property
    def load_warnings(self) -> list[InvalidInput]:
        """Rules in force that can never match, or left out of a policy file for that reason
        (each names the nearest tool). Empty when all rules are sound or nothing is loaded."""
        state = self._state
        return list(state.warnings) if state is not None else []

    def list_rules(self) -> list[RuleView]:
        """Every rule in force with its provenance."""
        return list(self._ensure().views)

    def add_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> str:
        """Add a user pattern to the blocked or guarded list; return its normalised form."""
        self._ensure()
        if list_name not in ORIGIN_LISTS:
            raise InvalidInput("invalid_list", "the list is `blocked` or `guarded`", "$.list")
        try:
            text = parse_origin_pattern(pattern).text
        except PatternError as exc:
            raise InvalidInput("invalid_pattern", str(exc), "$.pattern") from None
        if self._rule_storage is None:
            raise InvalidInput("no_store", "origin lists need persistent storage")
        try:
            self._rule_storage.add_origin_pattern(list_name, text, self._clock())
            self._rebuild()
        except StoreError as exc:
            raise self._fail(exc) from exc
        return text

    def remove_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> None:
        """Remove a user pattern; built-in patterns cannot be removed."""
        self._ensure()
        text = parse_origin_pattern(pattern).text
        builtin = BUILTIN_BLOCKED if list_name == "blocked" else BUILTIN_GUARDED
        if text in {parse_origin_pattern(p).text for p in builtin}:
            raise InvalidInput("builtin_pattern", f"{text} is built in and cannot be removed", "$.pattern")
        try:
            self._rule_storage.delete_origin_pattern(list_name, text)  # type: ignore[union-attr]
            self._rebuild()
        except StoreError as exc:
            raise self._fail(exc) from exc

    # -- snapshot ------------------------------------------------------------------------------

    def decision_inputs(self) -> tuple[str, RuleSet, OriginLists]:
        """(default policy, rules, origin lists) in force: what a what-if check builds on."""
        state = self._ensure()
        return state.default_policy, state.rules, state.lists

    def active_permissions(self, thread_id: str | None = None) -> ActivePermissions:
        """What is in force now: policy (for a thread if given), rules with provenance, loaded
        sources, the user's list additions and the authorisation revision."""
        state = self._ensure()
        policy = resolve_policy(self._thread_policy.get(thread_id) if thread_id else None, state.default_policy)
        return ActivePermissions(
            policy=policy, rules=list(state.views), loaded_sources=list(state.sources),
            sensitive_origins=list(state.lists.blocked_extra), guarded_origins=list(state.lists.guarded_extra),
            builtin_sensitive_count=len(BUILTIN_BLOCKED), builtin_guarded_count=len(BUILTIN_GUARDED),
            revision=self.authorization_revision(policy))


__all__ = ["ActivePermissions", "AppliedDecision", "CheckRequest", "DECISION_KINDS", "Gatekeeper", "POLICIES",
           "RuleView"]
