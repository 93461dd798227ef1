"""The decision itself: `check(call, ctx)`, a pure function with an explained answer.

Order (the first step that hits decides; each is one function of `steps`):
   1 always-allowed built-ins                     allow  always_allowed
   2 script-executing or invalid destination       deny   script_scheme | invalid_destination
   3 host-side fetch of a private address          deny   ssrf_blocked
   4 blocked origin (incl. every extension page):  deny   sensitive_origin
     no access, reads included
   5 reads (ask only under `always`)               allow  read_allowed | ask read_ask
     --- writes from here on ---
   6 deny rule                                     deny   rule_deny
   7 outside the thread's scope lock               deny   scope_lock
   8 ask rule                                      ask    rule_ask
   9 a decisive value the user did not give        ask    untrusted_value
  10 sensitive payload                             ask    sensitive_payload
  11 a commit the user's task did not ask for      ask    commit
     (under `auto` and `untrusted`; the effect class comes from `facts.consequence`, the task's
     consent from the user's own words; an allow rule naming the effect, `effect:pay`, covers it)
  12 guarded origin (under `auto` with provenance  ask    guarded_origin
     it asks nothing more: its values and commits were judged by 9 and 11)
  13 an MCP tool redefined since it was allowed    ask    definition_changed
  14 session grant                                 allow  session_grant
  15 allow rule                                    allow  rule_allow
  16 the policy's default                          ask | allow  policy_default
Only writes carry a destination URL (steps 2-3), so a read meets the blocked list first. The
blocked list is no access: a read there is denied as a write is, under every policy and whatever
a rule, a grant or the user's own call (`direct`) says, so nothing of a blocked page reaches the
model. Anywhere else a read is never denied (deny rules and the scope lock hold writes).
Origin-less reads (tabs, history, bookmarks, top sites, closed tabs, tab groups) act on no page:
they list a blocked site's title and URL, as the browser's tab strip shows them, never its content.
Rule conditions (steps 6, 8, 15) match the host's facts about the element (role, name,
destination: `rule_subject`), never the model's words for it; a rule's tool part may name an
effect class (`effect:delete`) as it names a category.
Step 9 needs the thread's provenance (`Context.provenance`); without it the step is skipped and
the guarded tier asks on every write, as before provenance was known.
A grant never silences step 11: it answers "may the agent change things here", not "may it pay".
The scope lock is checked before every ask, so that a write outside the lock is always *denied*,
never turned into a question the user might wave through.

Where an element leads (its link, or the form its value is sent with: the target's
`destinations`), and where a URL-bearing call may be redirected (a URL carried in its path, query
or fragment, encoded or not: `/redirect?to=…`), a write is also judged as going there, for each
destination of another origin:
   a as a navigation to it (`navigate` rules, script and invalid destinations, blocked list,
     scope lock, guarded tier), at the tab's origin
   b as the same call at the destination's origin (what it carries is sent there: rules,
     blocked list, scope lock, payload bound for a third party, guarded tier)
The strictest of these decisions and the call's own is the answer (deny over ask over allow; on a
tie the destination's, so the card and the audit name where the call really goes). A destination
the page could not resolve makes the write ask (`unknown_destination`), never allow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from host.gatekeeper import steps as S
from host.gatekeeper.decision_types import FLAG_APPROVED, Call, Context, Decision, TraceStep
from host.gatekeeper.origins import NO_ORIGIN, destination, normalize_origin
from host.gatekeeper.steps import FINDING_WORDS, USERS_OWN_FINDINGS, where as _where
from host.tools.catalog import MCP_PREFIX, lookup

__all__ = ["CODES", "FINDING_WORDS", "FLAG_APPROVED", "STEPS", "USERS_OWN_FINDINGS", "Call", "Context", "Decision",
           "TraceStep", "check", "destinations_of"]

CODES: tuple[str, ...] = (
    "always_allowed", "read_allowed", "read_ask", "script_scheme", "invalid_destination", "ssrf_blocked",
    "sensitive_origin", "guarded_origin", "rule_deny", "rule_ask", "sensitive_payload", "scope_lock",
    "session_grant", "rule_allow", "policy_default", "unknown_destination", "definition_changed", "untrusted_value",
    "commit",
)
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
_MAX_CARRIED = 8  # URLs carried inside one URL that are judged as destinations
# Steps 1-5 need nothing but the call; the facts (payload, effect, rule) are gathered before 6.
_BEFORE_FACTS = (S.always_allowed, S.bad_destination, S.private_fetch, S.blocked_origin, S.read)
_AFTER_FACTS = (S.rule_deny, S.scope_lock, S.rule_ask, S.untrusted_value, S.sensitive_payload, S.commit,
                S.guarded_origin, S.definition_changed, S.session_grant, S.rule_allow)
STEPS = (*_BEFORE_FACTS, S.gather_facts, *_AFTER_FACTS, S.policy_default)


def check(call: Call, ctx: Context) -> Decision:
    """Decide one tool call: allow, ask or deny, with a stable code, a reason and a trace (see the
    module docstring for the order, and for how destinations add their decisions)."""
    own = _check_call(call, ctx)
    # Where the page's own elements lead was chosen by the page; a URL the call carries, by the model.
    leads = [{**lead, "page": True} for lead in destinations_of(ctx.target)]
    leads += [{**carried, "page": True} for lead in leads for carried in _carried_in(lead.get("url"))]
    leads += _carried_urls(call)
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
            chosen = {**stay, "page_chosen": True} if lead.get("page") else stay
            decisions = [_check_call(Call("navigate", via), replace(ctx, target=chosen))]
            if dest.valid and not dest.script and not lead.get("carried"):
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
                    untrusted=decided.untrusted or own.untrusted, effect=own.effect, effect_facts=own.effect_facts)


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


def _carried_urls(call: Call) -> list[Mapping[str, Any]]:
    """The URLs a URL-bearing call carries in its path, query or fragment (`/redirect?to=…`,
    `?next=…`), encoded or not: where a redirect may take it, judged like a destination."""
    spec = lookup(call.tool)
    if spec is None or spec.url_param is None or not isinstance(call.params, Mapping):
        return []
    return _carried_in(call.params.get(spec.url_param))


def _carried_in(raw: Any) -> list[Mapping[str, Any]]:
    if not isinstance(raw, str) or "?" not in raw and "#" not in raw and "%" not in raw:
        return []
    from host.gatekeeper.facts.values import WEB, scan
    from host.gatekeeper.provenance_check import url_tail

    urls = [v.shown for v in scan(url_tail(raw))[:_MAX_CARRIED] if v.kind == WEB]
    return [{"url": url if "://" in url[:12] else f"https://{url}", "carried": True} for url in urls]


def _effects(call: Call) -> str:
    spec = lookup(call.tool)
    if call.tool.startswith(MCP_PREFIX):
        return "write"
    return call.effects or (spec.effects if spec is not None else "write")


def _unknown_destination(own: Decision) -> Decision:
    step = TraceStep("destinations", "hit", "the page could not say where the action leads")
    return Decision("ask", "unknown_destination", "the page could not say where this action leads; confirm it",
                    own.flags, own.target_origin, None, (*own.trace, step), own.findings, own.tool,
                    effect=own.effect, effect_facts=own.effect_facts)


def _check_call(call: Call, ctx: Context) -> Decision:
    """The decision on the call at `ctx.origin`, in the order of the module docstring."""
    state = S.judged(call, ctx)
    for step in _BEFORE_FACTS:
        decided = step(state)
        if decided is not None:
            return decided
    S.gather_facts(state)
    for step in _AFTER_FACTS:
        decided = step(state)
        if decided is not None:
            return decided
    return S.policy_default(state)
