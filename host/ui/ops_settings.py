"""Settings ops from the settings page: read the state, change rules, origin lists, the default
policy and a thread's scope lock, ask "what would happen if", read the audit log.

Changes go through the gatekeeper's public methods, which validate them (a bad rule or pattern
changes nothing and is refused with the gatekeeper's code and the path of the bad field). A
change is acknowledged once the gatekeeper stored it; then every page gets the new
`settings.state`. A resent op gets the stored answer; a rule added by an op whose answer was
lost in a crash has an id derived from the op, so sending it again does not add it twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from protocol import ui

from host.ui.client import Client
from host.ui.op_context import OpContext
from host.ui.ops_threads import listing_changed
from host.config_files import EditRefused
from host.ui.settings_files import set_default_policy
from host.ui.settings_state import broadcast_settings, scope_lock, snapshot

MAX_AUDIT_ROWS = 500


def op_scoped_id(prefix: str, client: Client, op: Any) -> str:
    """An id that is the same every time this page sends this op (command identity)."""
    digest = hashlib.sha256(f"{client.key}\x00{op.submission_id}".encode()).hexdigest()[:24]
    return f"{prefix}:ui:{digest}"


def change(ctx: OpContext, client: Client, op: Any, mark: str, action: Callable[[], None],
           thread_id: str | None = None) -> Any:
    """Run a settings change; acknowledge it (with its receipt) or refuse it with the reason."""
    from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
    from host.gatekeeper.patterns import PatternError

    try:
        action()
    except InvalidInput as exc:
        return ctx.reject(client, op, mark, exc.code, str(exc))
    except PatternError as exc:
        return ctx.reject(client, op, mark, "invalid_pattern", f"{exc} - at `$.pattern`")
    except EditRefused as exc:
        return ctx.reject(client, op, mark, exc.code, exc.message)
    except GatekeeperUnavailable as exc:
        # Not stored: once the gatekeeper works again (a host restart), the same op may succeed.
        return ui.CommandRejected(submission_id=op.submission_id, code="gatekeeper_unavailable", message=str(exc),
                                  thread_id=thread_id)
    response = ctx.commit(client, op, mark, lambda conn: ctx.ack(op, thread_id=thread_id))
    broadcast_settings(ctx.engine)
    return response


# -- reads --------------------------------------------------------------------------------------


def settings_get(ctx: OpContext, client: Client, op: ui.SettingsGet, mark: str) -> Any:
    """settings.get: the settings page's state (read only, no receipt)."""
    return ui.SettingsState(submission_id=op.submission_id, state=snapshot(ctx.engine, op.thread_id))


def policy_explain(ctx: OpContext, client: Client, op: ui.PolicyExplain, mark: str) -> Any:
    """policy.explain: the gatekeeper's decision for a call, with its steps, against the live
    rules, lists, grants and scope of a thread; nothing is audited or run."""
    from host.gatekeeper.decision import Call, Context, check
    from host.gatekeeper.errors import GatekeeperUnavailable
    from host.tools.catalog import lookup, unknown_name_hint

    spec = lookup(op.tool)
    if spec is None:
        return ui.CommandRejected(submission_id=op.submission_id, code="unknown_tool",
                                  message=f"{op.tool!r} is not a tool Tabwarden knows{unknown_name_hint(op.tool)} "
                                          "- at `$.tool`")
    gatekeeper = ctx.engine.gatekeeper
    thread_id = op.thread_id or ""
    params = dict(op.params)
    if spec.url_param is not None and op.url and spec.url_param not in params:
        params[spec.url_param] = op.url  # URL-bearing tools are judged by where they go
    try:
        _, rules, lists = gatekeeper.decision_inputs()
        ctx = Context(origin=op.url, policy=gatekeeper.effective_policy(thread_id, op.policy), rules=rules,
                      lists=lists, grants=frozenset(gatekeeper.grants.for_thread(thread_id)) if thread_id else frozenset(),
                      scope_origins=gatekeeper.scope_origins(thread_id) if thread_id else frozenset(),
                      scope_lock=scope_lock(gatekeeper, thread_id) if thread_id else None)
        decision = check(Call(spec.name, params), ctx)
    except GatekeeperUnavailable as exc:
        return ui.CommandRejected(submission_id=op.submission_id, code="gatekeeper_unavailable", message=str(exc))
    return ui.PolicyExplained(
        submission_id=op.submission_id, tool=decision.tool or spec.name, target_origin=decision.target_origin,
        policy=ctx.policy, verdict=decision.verdict, code=decision.code, reason=decision.reason,  # type: ignore[arg-type]
        flags=list(decision.flags), findings=list(decision.findings),
        rule=decision.rule.describe() if decision.rule is not None else None,
        trace=[ui.TraceLine(step=s.step, outcome=s.outcome, detail=s.detail) for s in decision.trace])


def audit_query(ctx: OpContext, client: Client, op: ui.AuditQuery, mark: str) -> Any:
    """audit.query: the newest audit rows that match (parameters are already redacted there)."""
    import json

    where, args = [], []
    for column, value in (("thread_id", op.thread_id), ("tool", op.tool), ("verdict", op.verdict), ("kind", op.kind)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    sql = f"SELECT * FROM (SELECT * FROM audit_log{clause} ORDER BY seq DESC LIMIT ?) ORDER BY seq"
    rows = []
    for row in ctx.engine.store.db.query(sql, [*args, min(op.limit, MAX_AUDIT_ROWS)]):
        rule = json.loads(row["rule"]) if row["rule"] else None
        rows.append(ui.AuditRow(
            seq=row["seq"], at=row["at"], kind=row["kind"], thread_id=row["thread_id"], tool=row["tool"],
            turn_id=row["turn_id"], call_id=row["call_id"],
            target_origin=row["target_origin"] or "",
            params_redacted=json.loads(row["params_redacted"]) if row["params_redacted"] else None,
            verdict=row["verdict"], code=row["code"], rule=_rule_text(rule),
            flags=json.loads(row["flags"]) if row["flags"] else None, approval_decision=row["approval_decision"],
            tool_outcome=row["tool_outcome"], detail=row["detail"]))
    return ui.AuditRows(submission_id=op.submission_id, rows=rows)


def audit_verify(ctx: OpContext, client: Client, op: ui.AuditVerify, mark: str) -> Any:
    """audit.verify: recompute the audit log's hash chain (what `tabwarden audit verify` checks)."""
    from host.gatekeeper.storage.audit import AuditLog
    from host.store import StoreError

    try:
        result = AuditLog(ctx.engine.store.db).verify()
    except StoreError as exc:
        return ui.CommandRejected(submission_id=op.submission_id, code="gatekeeper_unavailable",
                                  message=f"the audit log cannot be read: {exc}")
    return ui.AuditVerified(submission_id=op.submission_id, ok=result.ok, rows=result.rows, head=result.head,
                            broken_seq=result.broken_seq, problem=result.problem)


def _rule_text(rule: Any) -> str | None:
    if not isinstance(rule, dict):
        return None
    return f"{rule.get('tool')} @ {rule.get('origin') or '(no origin)'} → {rule.get('verdict')} ({rule.get('source')})"


# -- changes ------------------------------------------------------------------------------------


def policy_set_default(ctx: OpContext, client: Client, op: ui.PolicySetDefault, mark: str) -> Any:
    """policy.setDefault: the policy threads use when neither the turn nor the thread sets one."""
    return change(ctx, client, op, mark, lambda: set_default_policy(ctx.engine.gatekeeper, op.policy))


def rules_add(ctx: OpContext, client: Client, op: ui.RulesAdd, mark: str) -> Any:
    """rules.add: a user rule (validated by the gatekeeper)."""
    gatekeeper = ctx.engine.gatekeeper
    rule_id = op_scoped_id("rule", client, op)

    def add() -> None:
        if any(view.rule.id == rule_id for view in gatekeeper.list_rules()):
            return  # added before the answer was lost
        gatekeeper.add_rule({"tool": op.tool, "origin": op.origin, "verdict": op.verdict, "source": "user_setting",
                             "id": rule_id})

    return change(ctx, client, op, mark, add)


def rules_remove(ctx: OpContext, client: Client, op: ui.RulesRemove, mark: str) -> Any:
    """rules.remove: a stored rule (rules from policy files, managed ones above all, stay)."""
    return change(ctx, client, op, mark, lambda: ctx.engine.gatekeeper.remove_rule(op.rule_id))


def origins_add(ctx: OpContext, client: Client, op: ui.OriginsAdd, mark: str) -> Any:
    """origins.add: a user pattern on the blocked or guarded list."""
    return change(ctx, client, op, mark,
                  lambda: ctx.engine.gatekeeper.add_origin_pattern(op.pattern, list_name=op.list))


def origins_remove(ctx: OpContext, client: Client, op: ui.OriginsRemove, mark: str) -> Any:
    """origins.remove: a pattern the user added here (built-ins and policy-file entries stay)."""
    from host.gatekeeper.patterns import parse_origin_pattern

    gatekeeper = ctx.engine.gatekeeper

    def remove() -> None:
        text = parse_origin_pattern(op.pattern).text
        entries = getattr(snapshot(ctx.engine), op.list)
        entry = next((e for e in entries if e.pattern == text), None)
        if entry is None:
            raise EditRefused("unknown_pattern", f"{text} is not on the {op.list} list - at `$.pattern`")
        if not entry.removable:
            where = "built in" if entry.origin == "builtin" else "set in a policy file"
            raise EditRefused("pattern_not_removable", f"{text} is {where} and cannot be removed here - at `$.pattern`")
        gatekeeper.remove_origin_pattern(text, list_name=op.list)

    return change(ctx, client, op, mark, remove)


def scope_set_lock(ctx: OpContext, client: Client, op: ui.ScopeSetLock, mark: str) -> Any:
    """scope.setLock: confine a thread's writes and navigations to origin patterns (null lifts it)."""
    missing = ctx.thread_missing(client, op, mark)
    if missing is not None:
        return missing
    response = change(ctx, client, op, mark, lambda: ctx.engine.gatekeeper.set_scope_lock(op.thread_id, op.patterns),
                      thread_id=op.thread_id)
    if isinstance(response, ui.CommandAck):
        listing_changed(ctx.engine, op.thread_id)  # the panel's list and header show the lock
    return response
