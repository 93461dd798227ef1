"""Control-socket methods for the gatekeeper, so the REPL (a client like the side panel) can look
at and edit permission state on the running host. Nothing here runs a tool or skips a check.

    gatekeeper.permissions  {thread_id?}                      -> what is in force (policy, rules, lists, revision)
    gatekeeper.rules        {}                                -> rules with provenance
    gatekeeper.add_rule     {tool, origin, verdict, args?}    -> the stored rule
    gatekeeper.remove_rule  {id}                              -> {"removed": id}
    gatekeeper.add_origin   {pattern, list}                   -> {"pattern": normalised}
    gatekeeper.remove_origin {pattern, list}                  -> {"removed": pattern}
    gatekeeper.grants       {thread_id?}                      -> session grants, by thread
    gatekeeper.revoke_grants {thread_id?}                     -> what remains
    gatekeeper.set_policy   {thread_id, policy|null}          -> the thread's effective policy
    gatekeeper.set_scope_lock {thread_id, patterns|null}      -> the thread's scope lock (its patterns)
    gatekeeper.explain      {tool, params?, origin?, thread_id?, policy?, target?, effects?, level?}
                                                              -> a what-if decision with its trace (not audited)
    gatekeeper.audit        {after?, last?, thread_id?, tool?, verdict?} -> audit rows
    gatekeeper.verify_audit {}                                -> the hash chain's verdict

Errors carry the gatekeeper's own stable codes (`invalid_pattern`, `unknown_rule`,
`rule_not_removable`...) or `gatekeeper_unavailable` when permission state cannot be trusted.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from protocol.errors import ErrorCode
from protocol.permissions import OriginList, PolicyName, Verdict
from protocol.tools import ToolEffects, ToolLevel
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer
    from host.gatekeeper.service import Gatekeeper

UNAVAILABLE = "gatekeeper_unavailable"
MAX_AUDIT_ROWS = 1000

ThreadId = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
Text = Annotated[str, msgspec.Meta(max_length=4096)]


class _Thread(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId | None = None


class _NewRule(msgspec.Struct, forbid_unknown_fields=True):
    tool: Text
    origin: Text
    verdict: Verdict
    args: dict[str, Text] | None = None


class _RuleId(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]


class _Origin(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Text
    list: OriginList = "blocked"


class _Policy(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId
    policy: PolicyName | None


class _ScopeLock(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: ThreadId
    patterns: Annotated[list[Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]],
                        msgspec.Meta(max_length=200)] | None


class _Explain(msgspec.Struct, forbid_unknown_fields=True):
    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=256)]
    params: dict[str, Any] = {}
    origin: Text = ""
    thread_id: ThreadId = "default"
    policy: PolicyName | None = None
    target: dict[str, Any] | None = None
    effects: ToolEffects | None = None
    level: ToolLevel | None = None


class _Audit(msgspec.Struct, forbid_unknown_fields=True):
    after: Annotated[int, msgspec.Meta(ge=0)] | None = None  # rows with a larger seq, oldest first
    last: Annotated[int, msgspec.Meta(ge=1, le=MAX_AUDIT_ROWS)] = 50  # otherwise: the newest `last` rows
    thread_id: ThreadId | None = None
    tool: Text | None = None
    verdict: Verdict | None = None


def _error(code: str, message: str, details: dict[str, Any] | None = None) -> Exception:
    from host.control.server import ControlError

    return ControlError(code, message, details)


def _gatekeeper(conn: "ControlConnection") -> "Gatekeeper":
    """The gatekeeper that judges this host's tool calls (the host's own, shared with its gateway)."""
    host = conn.server.host
    services = getattr(host, "services", None)
    if services is not None:
        return services.gatekeeper
    from host.browser.control_methods import gateway_for

    gatekeeper = gateway_for(host).gatekeeper
    if not hasattr(gatekeeper, "list_rules"):
        raise _error(UNAVAILABLE, getattr(gatekeeper, "reason", "permission state is unavailable"))
    return gatekeeper


def _store(conn: "ControlConnection") -> Any:
    services = getattr(conn.server.host, "services", None)
    store = getattr(services, "store", None) if services is not None else None
    if store is None:
        raise _error(UNAVAILABLE, "the host's store is not available, so there is no audit log to read")
    return store


def _guarded(action):
    """Run a gatekeeper action, turning its exceptions into structured control errors."""
    from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput

    try:
        return action()
    except InvalidInput as exc:
        raise _error(exc.code, exc.message, {"path": exc.path}) from None
    except GatekeeperUnavailable as exc:
        raise _error(exc.code, str(exc)) from None


def _view(view: Any) -> dict[str, Any]:
    return {"rule": msgspec.to_builtins(view.rule), "provenance": view.provenance, "removable": view.removable}


async def permissions(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_Thread, params)
    active = _guarded(lambda: _gatekeeper(conn).active_permissions(p.thread_id))
    out = msgspec.to_builtins(active)
    out["rules"] = [_view(v) for v in active.rules]
    return out


async def rules(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    if params:
        raise _error(ErrorCode.INVALID_MESSAGE, f"gatekeeper.rules takes no parameters, got {sorted(params)}")
    return [_view(v) for v in _guarded(lambda: _gatekeeper(conn).list_rules())]


def _stored(conn: "ControlConnection") -> None:
    """A change is stored: open settings pages must show it (they hear only the engine's events)."""
    notify = getattr(getattr(conn.server.host, "services", None), "settings_changed", None)
    if notify is not None:
        notify()


async def add_rule(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_NewRule, params)
    body = {"tool": p.tool, "origin": p.origin, "verdict": p.verdict, "source": "user_setting"}
    if p.args:
        body["args"] = p.args
    added = msgspec.to_builtins(_guarded(lambda: _gatekeeper(conn).add_rule(body)))
    _stored(conn)
    return added


async def remove_rule(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_RuleId, params)
    _guarded(lambda: _gatekeeper(conn).remove_rule(p.id))
    _stored(conn)
    return {"removed": p.id}


async def add_origin(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_Origin, params)
    pattern = _guarded(lambda: _gatekeeper(conn).add_origin_pattern(p.pattern, list_name=p.list))
    _stored(conn)
    return {"pattern": pattern, "list": p.list}


async def remove_origin(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    from host.gatekeeper.patterns import PatternError

    p = _params(_Origin, params)
    try:
        _guarded(lambda: _gatekeeper(conn).remove_origin_pattern(p.pattern, list_name=p.list))
    except PatternError as exc:
        raise _error("invalid_pattern", str(exc), {"path": "$.pattern"}) from None
    _stored(conn)
    return {"removed": p.pattern, "list": p.list}


def _grants_view(gatekeeper: "Gatekeeper", thread_id: str | None) -> dict[str, Any]:
    snapshot = gatekeeper.grants.snapshot()
    if thread_id is not None:
        snapshot = {thread_id: snapshot.get(thread_id, [])}
    return {"browserSession": gatekeeper.grants.session,
            "grants": {thread: [{"tool": tool, "origin": origin} for tool, origin in keys]
                       for thread, keys in snapshot.items()}}


async def grants(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_Thread, params)
    gatekeeper = _gatekeeper(conn)
    return _guarded(lambda: _grants_view(gatekeeper, p.thread_id))


async def revoke_grants(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_Thread, params)
    gatekeeper = _gatekeeper(conn)
    if p.thread_id is None:
        _guarded(gatekeeper.revoke_grants)
    else:
        _guarded(lambda: gatekeeper.grants.clear_thread(p.thread_id))
    _stored(conn)
    return _guarded(lambda: _grants_view(gatekeeper, None))


async def set_policy(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_Policy, params)
    gatekeeper = _gatekeeper(conn)
    gatekeeper.set_thread_policy(p.thread_id, p.policy)
    _stored(conn)
    return {"threadId": p.thread_id, "policy": _guarded(lambda: gatekeeper.effective_policy(p.thread_id))}


async def set_scope_lock(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    p = _params(_ScopeLock, params)
    gatekeeper = _gatekeeper(conn)
    _guarded(lambda: gatekeeper.set_scope_lock(p.thread_id, p.patterns))
    _stored(conn)
    lock = gatekeeper.scope_lock(p.thread_id)
    return {"threadId": p.thread_id, "patterns": [pattern.text for pattern in lock.patterns] if lock else None}


def _explain(gatekeeper: "Gatekeeper", p: _Explain) -> dict[str, Any]:
    from host.gatekeeper.decision import Call, Context, check

    _, rule_set, lists = gatekeeper.decision_inputs()
    ctx = Context(origin=p.origin, policy=gatekeeper.effective_policy(p.thread_id, p.policy), rules=rule_set,
                  lists=lists, grants=frozenset(gatekeeper.grants.for_thread(p.thread_id)),
                  scope_origins=gatekeeper.scope_origins(p.thread_id),
                  scope_lock=gatekeeper.scope_lock(p.thread_id), target=p.target)
    decision = check(Call(p.tool, p.params, p.effects, p.level), ctx)
    out = msgspec.to_builtins(decision)
    out["policy"] = ctx.policy
    out["threadId"] = p.thread_id
    out["ruleText"] = decision.rule.describe() if decision.rule is not None else None
    return out


async def explain(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Decide a call against the live rules, lists, grants and scope of a thread, without
    auditing it or counting it towards denial alerts: a question, not an attempt."""
    from host.tools.catalog import lookup, unknown_name_hint

    p = _params(_Explain, params)
    if p.effects is None and lookup(p.tool) is None:
        raise _error("unknown_tool", f"no tool is called {p.tool!r}{unknown_name_hint(p.tool) or '.'} If it is an outside "
                     "tool, give its effects (read or write)", {"path": "$.effects"})
    gatekeeper = _gatekeeper(conn)
    return _guarded(lambda: _explain(gatekeeper, p))


_JSON_COLUMNS = ("params_redacted", "rule", "flags")


def _audit_rows(store: Any, p: _Audit) -> list[dict[str, Any]]:
    where, args = [], []
    for column, value in (("thread_id", p.thread_id), ("tool", p.tool), ("verdict", p.verdict)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    if p.after is not None:
        where.append("seq > ?")
        args.append(p.after)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    if p.after is not None:
        sql = f"SELECT * FROM audit_log{clause} ORDER BY seq LIMIT ?"
    else:  # the newest rows, shown oldest first
        sql = f"SELECT * FROM (SELECT * FROM audit_log{clause} ORDER BY seq DESC LIMIT ?) ORDER BY seq"
    rows = []
    for row in store.query(sql, [*args, p.last if p.after is None else MAX_AUDIT_ROWS]):
        item = {key: row[key] for key in row.keys()}
        for column in _JSON_COLUMNS:
            if item.get(column) is not None:
                item[column] = json.loads(item[column])
        rows.append(item)
    return rows


async def audit(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    """Audit rows: with `after`, every later row (up to 1000, oldest first: what a tail polls);
    otherwise the newest `last` rows."""
    from host.store import StoreError

    p = _params(_Audit, params)
    try:
        return _audit_rows(_store(conn), p)
    except StoreError as exc:
        raise _error(UNAVAILABLE, f"the audit log cannot be read: {exc}") from None


async def verify_audit(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    from host.gatekeeper.storage.audit import AuditLog
    from host.store import StoreError

    if params:
        raise _error(ErrorCode.INVALID_MESSAGE, f"gatekeeper.verify_audit takes no parameters, got {sorted(params)}")
    try:
        return msgspec.to_builtins(AuditLog(_store(conn)).verify())
    except StoreError as exc:
        raise _error(UNAVAILABLE, f"the audit log cannot be read: {exc}") from None


def register(server: "ControlServer") -> None:
    """Serve the gatekeeper's methods on `server`."""
    for name, method in (
        ("permissions", permissions), ("rules", rules), ("add_rule", add_rule), ("remove_rule", remove_rule),
        ("add_origin", add_origin), ("remove_origin", remove_origin), ("grants", grants),
        ("revoke_grants", revoke_grants), ("set_policy", set_policy), ("set_scope_lock", set_scope_lock),
        ("explain", explain), ("audit", audit),
        ("verify_audit", verify_audit),
    ):
        server.register(f"gatekeeper.{name}", method)
