"""The decision itself: `check(call, ctx)`, a pure function with an explained answer.

Order (the first step that hits decides):
   1 always-allowed built-ins                     allow  always_allowed
   2 reads (never denied; ask only under `always`) allow  read_allowed | ask read_ask
     --- writes from here on ---
   3 script-executing or invalid destination       deny   script_scheme | invalid_destination
   4 host-side fetch of a private address          deny   ssrf_blocked
   5 blocked origin (incl. every extension page)   deny   sensitive_origin
   6 deny rule                                     deny   rule_deny
   7 outside the thread's scope lock               deny   scope_lock
   8 ask rule                                      ask    rule_ask
   9 a decisive value the user did not give        ask    untrusted_value
  10 sensitive payload                             ask    sensitive_payload
  11 guarded origin (under `auto` with provenance:  ask    guarded_origin
     only writes that send, commit or remove)
 11b an MCP tool redefined since it was allowed    ask    definition_changed
  12 session grant                                 allow  session_grant
  13 allow rule                                    allow  rule_allow
  14 the policy's default                          ask | allow  policy_default
Rule conditions (steps 6, 8, 13) match the host's facts about the element (role, name,
destination: `rule_subject`), never the model's words for it.
Step 9 needs the thread's provenance (`Context.provenance`); without it the step is skipped and
the guarded tier asks on every write, as before provenance was known.
The scope lock is checked before every ask, so that a write outside the lock is always *denied*,
never turned into a question the user might wave through.

Where an element leads (its link, or the form its value is sent with: the target's
`destinations`), a write is also judged as going there, for each destination of another origin:
   a as a navigation to it (`navigate` rules, script and invalid destinations, blocked list,
     scope lock, guarded tier), at the tab's origin
   b as the same call at the destination's origin (what it carries is sent there: rules,
     blocked list, scope lock, payload bound for a third party, guarded tier)
The strictest of these decisions and the call's own is the answer (deny over ask over allow; on a
tie the destination's, so the card and the audit name where the call really goes). A destination
the page could not resolve makes the write ask (`unknown_destination`), never allow.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from protocol.permissions import (FLAG_CREDENTIAL_TARGET, FLAG_ESCALATION_L2, FLAG_GUARDED_ORIGIN,
                                  FLAG_SENSITIVE_PAYLOAD, FLAG_UNTRUSTED_VALUE, POLICY_LABELS)

from host.gatekeeper.facts.credential_target import targets_credential
from host.gatekeeper.facts.field_values import FieldValues, field_values
from host.gatekeeper.origins import NO_ORIGIN, destination, normalize_origin
from host.gatekeeper.patterns import OriginSet
from host.gatekeeper.facts import payload as P
from host.gatekeeper.facts.payload import (ALWAYS_FORCING, CARD_NUMBER, CREDENTIAL_TARGET, EMAIL_ADDRESS, IBAN,
                                           scan_params, scan_texts)
from host.gatekeeper.policy import DEFAULT_POLICY, normalize_policy
from host.gatekeeper.provenance import Provenance
from host.gatekeeper.provenance_check import untrusted_values
from host.gatekeeper.quiet import quiet_on_guarded
from host.gatekeeper.facts.rule_subject import rule_subject
from host.gatekeeper.facts.values import site_of
from host.gatekeeper.rules import EMPTY_RULES, Rule, RuleSet
from host.gatekeeper.sensitive import DEFAULT_LISTS, OriginLists
from host.tools.catalog import MCP_PREFIX, lookup
from host.tools.quoting import quoted

CODES: tuple[str, ...] = (
    "always_allowed", "read_allowed", "read_ask", "script_scheme", "invalid_destination", "ssrf_blocked",
    "sensitive_origin", "guarded_origin", "rule_deny", "rule_ask", "sensitive_payload", "scope_lock",
    "session_grant", "rule_allow", "policy_default", "unknown_destination", "definition_changed", "untrusted_value",
)
# Payload findings that are values step 9 judges: the user's own may go where the user named.
USERS_OWN_FINDINGS = frozenset({IBAN, CARD_NUMBER, EMAIL_ADDRESS})
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
# The payload findings in the words a reason uses (the codes stay in `findings`).
FINDING_WORDS = {
    P.CARD_NUMBER: "a card number", P.CREDENTIAL_FIELD: "a secret-named parameter (password, token, key)",
    P.EMAIL_ADDRESS: "an e-mail address", P.IBAN: "a bank account number (IBAN)", P.PRIVATE_KEY: "a private key",
    P.JWT: "a login token (JWT)", P.API_TOKEN: "an API key or token", P.CREDENTIAL_TARGET: "text for a password field",
    P.SECRET_VALUE: "a value labelled as a secret",
}


def _in_words(findings: frozenset[str]) -> str:
    return ", ".join(FINDING_WORDS.get(code, code) for code in sorted(findings))


# Not one of the approval flags (no request carries it): marks a decision that the user's answer
# turned into an allow.
FLAG_APPROVED = "approved"


class TraceStep(msgspec.Struct, frozen=True):
    """One evaluated step: `outcome` is `hit` (it decided), `pass` or `skip`."""

    step: str
    outcome: str
    detail: str


class Decision(msgspec.Struct, frozen=True):
    """The gatekeeper's answer, with the steps that led to it."""

    verdict: str  # allow | ask | deny
    code: str
    reason: str
    flags: tuple[str, ...] = ()
    target_origin: str = ""
    rule: Rule | None = None
    trace: tuple[TraceStep, ...] = ()
    findings: tuple[str, ...] = ()
    tool: str = ""
    revision: str = ""
    # The decisive values the user did not give ({"kind", "what", "value", "seenAt"}), for the card.
    untrusted: tuple[dict[str, Any], ...] = ()


@dataclass(slots=True)
class Call:
    """A tool call as the gatekeeper sees it. `effects`/`level` override the catalog (for what-if
    cases and unknown tools); MCP tools stay writes whatever is given."""

    tool: str
    params: Mapping[str, Any] = field(default_factory=dict)
    effects: str | None = None
    level: str | None = None


@dataclass(slots=True)
class Context:
    """Everything else a decision depends on, already loaded and compiled."""

    origin: str = ""  # the resolved target's origin (tab, MCP server); "" when there is none
    policy: str = DEFAULT_POLICY
    rules: RuleSet = EMPTY_RULES
    lists: OriginLists = DEFAULT_LISTS
    grants: Collection[tuple[str, str]] = frozenset()  # (tool, normalised origin) of this thread
    scope_origins: Collection[str] = frozenset()  # normalised origins the user has accepted
    scope_lock: OriginSet | None = None
    # Element facts, e.g. {"input_type": "password", "autocomplete": "cc-number", "hints": [...],
    # "values": {ref: the field's value before the call}}
    target: Mapping[str, Any] | None = None
    # The MCP tool's definition differs from the one its grants and rules were made for.
    definition_changed: bool = False
    # What the thread's model was shown and where it came from (None: not known, step 9 skipped).
    provenance: Provenance | None = None


class _Trace:
    __slots__ = ("steps",)

    def __init__(self) -> None:
        self.steps: list[TraceStep] = []

    def ok(self, step: str, detail: str) -> None:
        self.steps.append(TraceStep(step, "pass", detail))

    def skip(self, step: str, detail: str) -> None:
        self.steps.append(TraceStep(step, "skip", detail))

    def hit(self, step: str, detail: str) -> None:
        self.steps.append(TraceStep(step, "hit", detail))


def check(call: Call, ctx: Context) -> Decision:
    """Decide one tool call: allow, ask or deny, with a stable code, a reason and a trace (see the
    module docstring for the order, and for how destinations add their decisions)."""
    own = _check_call(call, ctx)
    leads = destinations_of(ctx.target)
    if not leads or own.verdict == "deny" or _effects(call) != "write":
        return own
    here = normalize_origin(ctx.origin) if ctx.origin else NO_ORIGIN
    stay = dict(ctx.target or {})
    stay.pop("destinations", None)
    stay.pop("destination", None)
    decided, notes = own, []
    for lead in leads:
        if lead.get("unresolved"):
            decisions = [_unknown_destination(own)]
        else:
            url = str(lead.get("url") or "")
            dest = destination(url)
            if dest.valid and not dest.script and dest.origin.text == here.text:
                continue  # it stays on this origin: the call's own decision covers it
            via = {"url": url}
            decisions = [_check_call(Call("navigate", via), replace(ctx, target=stay))]
            if dest.valid and not dest.script:
                decisions.append(_check_call(call, replace(ctx, origin=dest.origin.text, target=stay)))
        for decision in decisions:
            notes.append(f"{decision.tool} @ {_where(decision.target_origin)}: {decision.verdict} "
                         f"({decision.code})")
            if _STRICTNESS[decision.verdict] >= _STRICTNESS[decided.verdict] and decision.verdict != "allow":
                decided = decision
    if decided is own:
        return own
    flags = tuple(dict.fromkeys((*own.flags, *decided.flags)))
    findings = tuple(sorted({*own.findings, *decided.findings}))
    trace = (*own.trace, TraceStep("destinations", "hit", "; ".join(notes)), *decided.trace)
    return Decision(decided.verdict, decided.code, f"it leads to {_where(decided.target_origin, 'an unknown place')}: "
                    f"{decided.reason}", flags, decided.target_origin, decided.rule, trace, findings, own.tool,
                    untrusted=decided.untrusted or own.untrusted)


def destinations_of(target: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The target's destinations as `{"url", "method"?, "newTab"?}` mappings (or `{"unresolved":
    true}`), from a `destinations` list (of mappings or URLs) or a single `destination`."""
    if not isinstance(target, Mapping):
        return []
    found = target.get("destinations")
    if found is None and target.get("destination") is not None:
        found = [{"url": target.get("destination"), "method": target.get("method")}]
    out = []
    for item in found or ():
        if isinstance(item, str):
            out.append({"url": item})
        elif isinstance(item, Mapping):
            out.append(item)
    return out


def _effects(call: Call) -> str:
    spec = lookup(call.tool)
    if call.tool.startswith(MCP_PREFIX):
        return "write"
    return call.effects or (spec.effects if spec is not None else "write")


def _where(origin: str | None, missing: str = "(no origin)") -> str:
    return quoted(origin) if origin else missing


def _unknown_destination(own: Decision) -> Decision:
    step = TraceStep("destinations", "hit", "the page could not say where the action leads")
    return Decision("ask", "unknown_destination", "the page could not say where this action leads; confirm it",
                    own.flags, own.target_origin, None, (*own.trace, step), own.findings, own.tool)


def _check_call(call: Call, ctx: Context) -> Decision:
    """The decision on the call at `ctx.origin`, in the order of the module docstring."""
    trace = _Trace()
    tool = call.tool
    spec = lookup(tool)
    is_mcp = tool.startswith(MCP_PREFIX)
    if is_mcp:
        effects = "write"
    else:
        effects = call.effects or (spec.effects if spec is not None else "write")
    level = call.level or (spec.level if spec is not None else "")
    category = spec.category if spec is not None and effects == "write" else None
    if category is None and is_mcp:
        category = "mcp"
    policy = normalize_policy(ctx.policy) or DEFAULT_POLICY
    # Reasons are read by people: the policy by the name the pages give it.
    named = f"the “{POLICY_LABELS[policy]}” policy"
    params = call.params if isinstance(call.params, Mapping) else {}
    name = spec.name if spec is not None else tool

    # Where the call acts: a URL-bearing tool is judged by its destination, not the current tab.
    dest = None
    if spec is not None and spec.url_param is not None:
        raw = params.get(spec.url_param)
        if raw is not None and raw != "":
            dest = destination(raw if isinstance(raw, str) else str(raw))
    if dest is not None:
        origin = dest.origin
    elif spec is not None and spec.originless:
        origin = NO_ORIGIN
    else:
        origin = normalize_origin(ctx.origin) if ctx.origin else NO_ORIGIN
    # Reasons reach the model unfenced, and a site picks its own host name: quoted as data.
    where = _where(origin.text)
    if spec is None:
        trace.ok("tool", f"{tool} is not in the tool catalog: treated as {effects}")

    def done(verdict: str, code: str, reason: str, flags: tuple[str, ...] = (), rule: Rule | None = None,
             findings: tuple[str, ...] = (), untrusted: tuple[dict[str, Any], ...] = ()) -> Decision:
        return Decision(verdict, code, reason, flags, origin.text, rule, tuple(trace.steps), findings, name,
                        untrusted=untrusted)

    # 1. Built-ins that cannot act on the world.
    if spec is not None and spec.always_allowed:
        trace.hit("always_allowed", f"{name} is allowed under every policy")
        return done("allow", "always_allowed", f"{name} is always allowed")
    trace.ok("always_allowed", "not an always-allowed built-in")

    # 2. Reads: never denied, never judged by rules.
    if effects == "read":
        if policy != "always":
            trace.hit("read", f"{named} allows reads")
            return done("allow", "read_allowed", f"{name} only reads; {named} allows reads")
        flags = (FLAG_ESCALATION_L2,) if level == "L2" else ()
        if (name, origin.text) in ctx.grants:
            trace.hit("read", f"{named} asks, but this session granted {name} @ {where}")
            return done("allow", "session_grant", f"allowed for this session: {name} @ {where}", flags)
        trace.hit("read", f"{named} asks before every read")
        return done("ask", "read_ask", f"{named} asks before {name} reads {where}", flags)
    trace.ok("read", "the call writes")

    # 3. Destinations that run script, or that are no URL at all.
    if dest is not None:
        if dest.script:
            trace.hit("destination", f"{dest.scheme}: runs script in the page")
            return done("deny", "script_scheme",
                        f"the destination uses the {dest.scheme}: scheme, which runs script; it is never allowed")
        if not dest.valid:
            trace.hit("destination", "the destination is not a valid URL")
            return done("deny", "invalid_destination", f"the destination {origin.text!r} is not a valid URL")
        trace.ok("destination", f"the call goes to {where}")
    else:
        trace.skip("destination", "no destination URL: judged at the target origin")

    # 4. The host fetching a private or internal address.
    if spec is not None and spec.host_fetch and dest is not None:
        from host.gatekeeper.ssrf import check_url

        blocked = check_url(dest.href)
        if blocked is not None:
            trace.hit("ssrf", blocked)
            return done("deny", "ssrf_blocked", f"{name} may not fetch {where}: {blocked}")
        trace.ok("ssrf", "the destination host is public")

    # 5. Blocked origins: nothing overrides them.
    pattern = ctx.lists.blocked(origin)
    if pattern is not None:
        trace.hit("sensitive_origin", f"{where} matches the blocked pattern {pattern.text}")
        subject = "the destination" if dest is not None else "the target"
        return done("deny", "sensitive_origin",
                    f"{subject} {where} is on the blocked list ({pattern.text}): writes there are never allowed")
    trace.ok("sensitive_origin", "not a blocked origin")

    flags: list[str] = []
    # Payload findings (skipped for origin-less calls, which send nothing anywhere).
    findings: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()
    filled = FieldValues()
    forced = False
    if origin.text:
        # Judged on what the fields will hold, not only on this call's piece of it.
        carried = scan_params(params)
        filled = field_values(name, params, ctx.target)
        held = scan_texts(filled.all) - carried
        findings = carried | held
        if category == "fill" and targets_credential(ctx.target):
            findings = findings | {CREDENTIAL_TARGET}
        if findings:
            forced = bool(findings & ALWAYS_FORCING) or (
                EMAIL_ADDRESS in findings and origin.text not in ctx.scope_origins)
            if forced:
                flags.append(FLAG_SENSITIVE_PAYLOAD)
            if CREDENTIAL_TARGET in findings:
                flags.append(FLAG_CREDENTIAL_TARGET)  # the card says what the element is
    if level == "L2":
        flags.append(FLAG_ESCALATION_L2)
    guarded = ctx.lists.guarded(origin)
    if guarded is not None:
        flags.append(FLAG_GUARDED_ORIGIN)
    found = tuple(sorted(findings))
    flag_tuple = tuple(flags)

    # 6. Rules (one lookup; the winner is used by steps 6, 8 and 13).
    # Conditions see the host's facts about the element, never the model's words for it.
    rule = ctx.rules.match(name, category, origin, rule_subject(params, ctx.target)) if len(ctx.rules) else None
    if rule is not None and rule.verdict == "deny":
        trace.hit("rule_deny", f"denied by {rule.describe()}")
        return done("deny", "rule_deny", f"denied by rule {rule.describe()}", flag_tuple, rule, found)
    trace.ok("rule_deny", "no deny rule wins")

    # 7. Task scope lock.
    lock = ctx.scope_lock
    if lock is not None and origin.text:
        if lock.match(origin) is None:
            allowed = ", ".join(p.text for p in lock.patterns) or "nothing"
            trace.hit("scope_lock", f"{where} is outside the scope lock ({allowed})")
            return done("deny", "scope_lock", f"{where} is outside this task's scope lock ({allowed})",
                        flag_tuple, None, found)
        trace.ok("scope_lock", f"{where} is inside the scope lock")
    else:
        trace.skip("scope_lock", "no scope lock applies")

    # 8. Ask rules: a grant cannot silence them.
    if rule is not None and rule.verdict == "ask":
        trace.hit("rule_ask", f"{rule.describe()} asks")
        return done("ask", "rule_ask", f"rule {rule.describe()} requires confirmation", flag_tuple, rule, found)
    trace.ok("rule_ask", "no ask rule wins")

    # 9. Values the user did not give: neither a grant, an allow rule nor `auto` silences it.
    prov = ctx.provenance
    released = False
    if prov is not None and origin.text:
        foreign = untrusted_values(spec, tool, params, prov, ctx.origin if dest is not None else origin.text,
                                   filled.whole)
        if foreign:
            said = "; ".join(v.describe() for v in foreign[:3]) + ("; and more" if len(foreign) > 3 else "")
            trace.hit("untrusted_value", said)
            return done("ask", "untrusted_value", f"{name} @ {where} would send values you did not give: {said}. "
                        "Confirm only if you meant them", (*flag_tuple, FLAG_UNTRUSTED_VALUE), None, found,
                        tuple(v.fact() for v in foreign))
        trace.ok("untrusted_value", "every decisive value is the user's")
        if forced and findings <= USERS_OWN_FINDINGS and (
                origin.text in ctx.scope_origins or prov.site_is_users(site_of(origin.host))):
            # The user's own IBAN, card or address, to a site they named: what they asked for.
            forced, released = False, True
            flag_tuple = tuple(f for f in flag_tuple if f != FLAG_SENSITIVE_PAYLOAD)
    else:
        trace.skip("untrusted_value", "no provenance known" if prov is None else "an origin-less call sends nothing")

    # 10. Sensitive payload: neither a grant nor an allow rule silences it.
    if forced:
        parts = [f"the parameters carry {_in_words(findings - held)}"] if findings - held else []
        if held:
            parts.append(f"the field would then hold {_in_words(held)}")
        what = " and ".join(parts)
        trace.hit("sensitive_payload", what)
        return done("ask", "sensitive_payload", f"{what}, bound for {where}; confirm before sending",
                    flag_tuple, None, found)
    if released:
        trace.ok("sensitive_payload", f"{', '.join(found)}: the user's own values, bound for a site they named")
    else:
        trace.ok("sensitive_payload", f"findings {', '.join(found)} do not force a question" if found
                 else "no sensitive data in the parameters")

    # 11. Guarded origins: writes ask, whatever the grants or rules. Under `auto`, with the values
    # judged by step 9, only writes that send, commit or remove something still ask.
    if guarded is not None:
        quiet = quiet_on_guarded(name, category, params, ctx.target) if policy == "auto" and prov is not None \
            else None
        if quiet is None:
            trace.hit("guarded_origin", f"{where} matches the guarded pattern {guarded.text}")
            return done("ask", "guarded_origin",
                        f"{where} is guarded ({guarded.text}): every write there needs confirmation",
                        flag_tuple, None, found)
        trace.ok("guarded_origin", f"{where} is guarded ({guarded.text}), but under auto {quiet}")
    else:
        trace.ok("guarded_origin", "not a guarded origin")

    # 11b. A tool the server redefined: what was allowed was another tool; grants, allow rules
    # and the auto policy do not carry over.
    if ctx.definition_changed:
        trace.hit("definition_changed", f"the server changed the definition of {name} since it was allowed")
        return done("ask", "definition_changed",
                    f"the MCP server changed the description or parameters of {name} since it was allowed; "
                    "confirm the new definition", flag_tuple, None, found)
    if is_mcp:
        trace.ok("definition_changed", "the tool's definition is the one allowed")

    # 12. Session grant.
    if (name, origin.text) in ctx.grants:
        trace.hit("session_grant", f"granted for this session: {name} @ {where}")
        return done("allow", "session_grant", f"allowed for this session: {name} @ {where}", flag_tuple, None, found)
    trace.ok("session_grant", "no session grant")

    # 13. Allow rule.
    if rule is not None:
        trace.hit("rule_allow", f"allowed by {rule.describe()}")
        return done("allow", "rule_allow", f"allowed by rule {rule.describe()}", flag_tuple, rule, found)
    trace.ok("rule_allow", "no allow rule matches")

    # 14. The policy's default.
    if policy == "auto":
        trace.hit("policy_default", f"{named} allows changes")
        return done("allow", "policy_default", f"{named} allows {name} @ {where}", flag_tuple, None, found)
    trace.hit("policy_default", f"{named} asks before changes")
    return done("ask", "policy_default", f"{named} asks before {name} @ {where}", flag_tuple, None, found)
