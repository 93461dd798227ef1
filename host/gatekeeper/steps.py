"""The steps of a decision, one short function each, in the order `decision.STEPS` runs them.

Every step reads the facts gathered once for the call (`Judged`), adds a line to the trace, and
either decides (returns a `Decision`) or passes (returns None). The order and what each step
means are in `decision`'s docstring; this module holds only how each is checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from protocol.permissions import (FLAG_COMMIT, FLAG_CREDENTIAL_TARGET, FLAG_ESCALATION_L2, FLAG_GUARDED_ORIGIN,
                                  FLAG_SENSITIVE_PAYLOAD, FLAG_UNTRUSTED_VALUE, POLICY_LABELS)

from host.gatekeeper.decision_types import Call, Context, Decision, TraceStep
from host.gatekeeper.facts import payload as P
from host.gatekeeper.facts.consequence import EFFECT_WORDS, Effect, effect_of, search_field
from host.gatekeeper.facts.decisive_fields import decisive_field, reference_field
from host.gatekeeper.facts.credential_target import targets_credential
from host.gatekeeper.facts.field_values import FieldValues, field_values
from host.gatekeeper.facts.payload import ALWAYS_FORCING, CARD_NUMBER, CREDENTIAL_TARGET, EMAIL_ADDRESS, IBAN, \
    scan_params, scan_texts
from host.gatekeeper.facts.rule_subject import rule_subject
from host.gatekeeper.facts.values import site_of, words_form
from host.gatekeeper.origins import NO_ORIGIN, Destination, Origin, destination, normalize_origin
from host.gatekeeper.policy import DEFAULT_POLICY, normalize_policy
from host.gatekeeper.provenance_check import untrusted_values
from host.gatekeeper.rules import Rule
from host.tools.catalog import MCP_PREFIX, lookup
from host.tools.quoting import quoted

# Payload findings that are values step 9 judges: the user's own may go where the user named.
USERS_OWN_FINDINGS = frozenset({IBAN, CARD_NUMBER, EMAIL_ADDRESS})
# The payload findings in the words a reason uses (the codes stay in `findings`).
FINDING_WORDS = {
    P.CARD_NUMBER: "a card number", P.CREDENTIAL_FIELD: "a secret-named parameter (password, token, key)",
    P.EMAIL_ADDRESS: "an e-mail address", P.IBAN: "a bank account number (IBAN)", P.PRIVATE_KEY: "a private key",
    P.JWT: "a login token (JWT)", P.API_TOKEN: "an API key or token", P.CREDENTIAL_TARGET: "text for a password field",
    P.SECRET_VALUE: "a value labelled as a secret",
}
# Allow rules a person wrote (settings, policy files) answer a commit's question; one saved from a
# card's "always" answered "may it act here", not "may it pay".
WRITTEN_RULES = frozenset({"managed", "user_setting"})
# Policies under which a commit asks unless the user's task asked for it.
COMMIT_POLICIES = frozenset({"auto", "untrusted"})


def in_words(findings: frozenset[str]) -> str:
    """Payload finding codes in the words a reason uses."""
    return ", ".join(FINDING_WORDS.get(code, code) for code in sorted(findings))


def where(origin: str | None, missing: str = "(no origin)") -> str:
    """An origin as a reason names it: quoted as data (a site picks its own host name)."""
    return quoted(origin) if origin else missing


@dataclass(slots=True)
class Judged:
    """What the steps read about one call, gathered once."""

    call: Call
    ctx: Context
    name: str
    effects: str
    level: str
    category: str | None
    policy: str
    named: str
    params: Mapping[str, Any]
    dest: Destination | None
    origin: Origin
    is_mcp: bool
    trace: list[TraceStep] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    findings: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()
    forced: bool = False
    released: bool = False
    filled: FieldValues = field(default_factory=FieldValues)
    guarded: Any = None
    rule: Rule | None = None
    effect: Effect | None = None

    @property
    def where(self) -> str:
        return where(self.origin.text)

    def step(self, name: str, outcome: str, detail: str) -> None:
        self.trace.append(TraceStep(name, outcome, detail))

    def done(self, verdict: str, code: str, reason: str, *, flags: tuple[str, ...] | None = None,
             rule: Rule | None = None, untrusted: tuple[dict[str, Any], ...] = ()) -> Decision:
        effect = self.effect
        return Decision(verdict, code, reason, tuple(self.flags) if flags is None else flags, self.origin.text, rule,
                        tuple(self.trace), tuple(sorted(self.findings)), self.name, untrusted=untrusted,
                        effect=effect.effect if effect is not None else "",
                        effect_facts=effect.facts if effect is not None else ())


def judged(call: Call, ctx: Context) -> Judged:
    """Gather what every step reads: the tool's catalog facts, the policy, where the call acts."""
    tool = call.tool
    spec = lookup(tool)
    is_mcp = tool.startswith(MCP_PREFIX)
    effects = "write" if is_mcp else call.effects or (spec.effects if spec is not None else "write")
    category = spec.category if spec is not None and effects == "write" else None
    if category is None and is_mcp:
        category = "mcp"
    policy = normalize_policy(ctx.policy) or DEFAULT_POLICY
    params = call.params if isinstance(call.params, Mapping) else {}
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
    state = Judged(call, ctx, spec.name if spec is not None else tool, effects,
                   call.level or (spec.level if spec is not None else ""), category, policy,
                   f"the “{POLICY_LABELS[policy]}” policy", params, dest, origin, is_mcp)
    if spec is None:
        state.step("tool", "pass", f"{tool} is not in the tool catalog: treated as {effects}")
    return state


# -- 1 and 5: what is never judged as a write (5, reads, runs after the blocked list) ----------------

def always_allowed(s: Judged) -> Decision | None:
    spec = lookup(s.call.tool)
    if spec is not None and spec.always_allowed:
        s.step("always_allowed", "hit", f"{s.name} is allowed under every policy")
        return s.done("allow", "always_allowed", f"{s.name} is always allowed")
    s.step("always_allowed", "pass", "not an always-allowed built-in")
    return None


def read(s: Judged) -> Decision | None:
    if s.effects != "read":
        s.step("read", "pass", "the call writes")
        return None
    if s.policy != "always":
        s.step("read", "hit", f"{s.named} allows reads")
        return s.done("allow", "read_allowed", f"{s.name} only reads; {s.named} allows reads")
    flags = (FLAG_ESCALATION_L2,) if s.level == "L2" else ()
    if (s.name, s.origin.text) in s.ctx.grants:
        s.step("read", "hit", f"{s.named} asks, but this session granted {s.name} @ {s.where}")
        return s.done("allow", "session_grant", f"allowed for this session: {s.name} @ {s.where}", flags=flags)
    s.step("read", "hit", f"{s.named} asks before every read")
    return s.done("ask", "read_ask", f"{s.named} asks before {s.name} reads {s.where}", flags=flags)


# -- 2-4: where the call goes (a read has no destination URL: only 4 applies to it) ------------------

def bad_destination(s: Judged) -> Decision | None:
    dest = s.dest
    if dest is None:
        s.step("destination", "skip", "no destination URL: judged at the target origin")
        return None
    if dest.script:
        s.step("destination", "hit", f"{dest.scheme}: runs script in the page")
        return s.done("deny", "script_scheme",
                      f"the destination uses the {dest.scheme}: scheme, which runs script; it is never allowed")
    if not dest.valid:
        s.step("destination", "hit", "the destination is not a valid URL")
        return s.done("deny", "invalid_destination", f"the destination {s.origin.text!r} is not a valid URL")
    s.step("destination", "pass", f"the call goes to {s.where}")
    return None


def private_fetch(s: Judged) -> Decision | None:
    spec = lookup(s.call.tool)
    if spec is None or not spec.host_fetch or s.dest is None:
        return None
    from host.gatekeeper.ssrf import check_url

    blocked = check_url(s.dest.href)
    if blocked is not None:
        s.step("ssrf", "hit", blocked)
        return s.done("deny", "ssrf_blocked", f"{s.name} may not fetch {s.where}: {blocked}")
    s.step("ssrf", "pass", "the destination host is public")
    return None


def blocked_origin(s: Judged) -> Decision | None:
    pattern = s.ctx.lists.blocked(s.origin)
    if pattern is not None:
        s.step("sensitive_origin", "hit", f"{s.where} matches the blocked pattern {pattern.text}")
        subject = "the destination" if s.dest is not None else "the target"
        mine = pattern.text in s.ctx.lists.blocked_extra
        change = (f"to change that, remove {pattern.text} from Blocked sites in Settings → Sites, or run "
                  f"tw.unblock({pattern.text!r}) at the REPL" if mine else "built-in blocked sites cannot be removed")
        return s.done("deny", "sensitive_origin", f"{subject} {s.where} is on {'your' if mine else 'the built-in'} "
                      f"blocked list ({pattern.text}): no access, the agent can neither read nor change it; {change}")
    s.step("sensitive_origin", "pass", "not a blocked origin")
    return None


def gather_facts(s: Judged) -> None:
    """Not a step of its own: what the call carries, what it commits, and the winning rule."""
    ctx = s.ctx
    if s.origin.text:
        carried = scan_params(s.params)
        s.filled = field_values(s.name, s.params, ctx.target)
        s.held = scan_texts(s.filled.all) - carried
        s.findings = carried | s.held
        if s.category == "fill" and targets_credential(ctx.target):
            s.findings = s.findings | {CREDENTIAL_TARGET}
        if s.findings:
            s.forced = bool(s.findings & ALWAYS_FORCING) or (
                EMAIL_ADDRESS in s.findings and s.origin.text not in ctx.scope_origins)
            if s.forced:
                s.flags.append(FLAG_SENSITIVE_PAYLOAD)
            if CREDENTIAL_TARGET in s.findings:
                s.flags.append(FLAG_CREDENTIAL_TARGET)  # the card says what the element is
    if s.level == "L2":
        s.flags.append(FLAG_ESCALATION_L2)
    s.guarded = ctx.lists.guarded(s.origin)
    if s.guarded is not None:
        s.flags.append(FLAG_GUARDED_ORIGIN)
    s.effect = effect_of(s.name, s.params, ctx.target, s.category)
    if len(ctx.rules):
        # Conditions see the host's facts about the element, never the model's words for it.
        s.rule = ctx.rules.match(s.name, s.category, s.origin, rule_subject(s.params, ctx.target), s.effect.effect)


# -- 6-8: rules and the lock ------------------------------------------------------------------------

def rule_deny(s: Judged) -> Decision | None:
    rule = s.rule
    if rule is not None and rule.verdict == "deny":
        s.step("rule_deny", "hit", f"denied by {rule.describe()}")
        change = ("your administrator's policy file sets it" if rule.source == "managed" else
                  f"to change that, delete it in Settings → Permission rules, or run tw.remove_rule({rule.id!r}) at "
                  "the REPL" if rule.id else "to change that, edit your policy.json")
        named = f", id {rule.id}" if rule.id else ""
        return s.done("deny", "rule_deny", f"denied by rule {rule.describe()}{named}; {change}", rule=rule)
    s.step("rule_deny", "pass", "no deny rule wins")
    return None


def scope_lock(s: Judged) -> Decision | None:
    lock = s.ctx.scope_lock
    if lock is None or not s.origin.text:
        s.step("scope_lock", "skip", "no scope lock applies")
        return None
    if lock.match(s.origin) is None:
        allowed = ", ".join(p.text for p in lock.patterns) or "nothing"
        s.step("scope_lock", "hit", f"{s.where} is outside the scope lock ({allowed})")
        return s.done("deny", "scope_lock", f"{s.where} is outside this task's scope lock ({allowed}); to change "
                      "that, edit the lock in Settings → Scope lock, or run tw.unlock() at the REPL")
    s.step("scope_lock", "pass", f"{s.where} is inside the scope lock")
    return None


def rule_ask(s: Judged) -> Decision | None:
    rule = s.rule
    if rule is not None and rule.verdict == "ask":
        s.step("rule_ask", "hit", f"{rule.describe()} asks")
        return s.done("ask", "rule_ask", f"rule {rule.describe()} requires confirmation", rule=rule)
    s.step("rule_ask", "pass", "no ask rule wins")
    return None


# -- 9-10: what the call carries --------------------------------------------------------------------

def untrusted_value(s: Judged) -> Decision | None:
    prov = s.ctx.provenance
    if prov is None or not s.origin.text:
        s.step("untrusted_value", "skip", "no provenance known" if prov is None else "an origin-less call sends nothing")
        return None
    spec = lookup(s.call.tool)
    # A title or a name looked for in a site's own search reaches no one; decisive values
    # (accounts, addresses) are judged there too.
    names = not (s.call.tool in ("type", "type_trusted") and search_field(s.ctx.target))
    page_chosen = bool(s.ctx.target and s.ctx.target.get("page_chosen"))  # a link's or form's own destination
    # Typed into a payment field (a select offers only the page's own options, a quantity often).
    typed = s.call.tool in ("type", "type_trusted", "press_key", "batch_actions")
    field = decisive_field(s.ctx.target) if typed else None
    reference = typed and reference_field(s.ctx.target)
    foreign = untrusted_values(spec, s.call.tool, s.params, prov, s.ctx.origin if s.dest is not None else s.origin.text,
                               s.filled.whole, names=names, page_chosen=page_chosen, field=field, reference=reference)
    if foreign:
        said = "; ".join(v.describe() for v in foreign[:3]) + ("; and more" if len(foreign) > 3 else "")
        s.step("untrusted_value", "hit", said)
        return s.done("ask", "untrusted_value", f"{s.name} @ {s.where} would send values you did not give: {said}. "
                      "Confirm only if you meant them", flags=(*s.flags, FLAG_UNTRUSTED_VALUE),
                      untrusted=tuple(v.fact() for v in foreign))
    s.step("untrusted_value", "pass", "every decisive value is the user's")
    own = USERS_OWN_FINDINGS | {CREDENTIAL_TARGET} if _typed_by_user(s) else USERS_OWN_FINDINGS
    # The user's own e-mail addresses may go anywhere the task takes them (an address is how a
    # task names people); account numbers, cards and passwords only to a site the user chose or
    # an MCP server they configured.
    anywhere = s.findings <= {EMAIL_ADDRESS}
    if s.forced and s.findings <= own and (anywhere or s.is_mcp or s.origin.text in s.ctx.scope_origins
                                           or prov.site_is_users(site_of(s.origin.host))):
        # The user's own IBAN, card, address or password, to a site they named: what they asked
        # for (a sign-in with the password they gave; a code read from a page still asks).
        s.forced, s.released = False, True
        s.flags = [f for f in s.flags if f != FLAG_SENSITIVE_PAYLOAD]
    return None


def _typed_by_user(s: Judged) -> bool:
    """Whether every text the call types is in the user's own words (or saved details)."""
    prov = s.ctx.provenance
    texts = [s.params.get("text")]
    actions = s.params.get("actions")
    if isinstance(actions, list):
        texts += [a.get("text") for a in actions if isinstance(a, Mapping) and a.get("action") == "type"]
    typed = [t for t in texts if isinstance(t, str) and t.strip()]
    return bool(typed) and prov is not None and all(prov.name_is_users(words_form(t).strip()) for t in typed)


def sensitive_payload(s: Judged) -> Decision | None:
    found = ", ".join(sorted(s.findings))
    if s.forced:
        carried = s.findings - s.held
        parts = [f"the parameters carry {in_words(carried)}"] if carried else []
        if s.held:
            parts.append(f"the field would then hold {in_words(s.held)}")
        what = " and ".join(parts)
        s.step("sensitive_payload", "hit", what)
        return s.done("ask", "sensitive_payload", f"{what}, bound for {s.where}; confirm before sending")
    if s.released:
        s.step("sensitive_payload", "pass", f"{found}: the user's own values, bound for a site they named")
    else:
        s.step("sensitive_payload", "pass", f"findings {found} do not force a question" if found
               else "no sensitive data in the parameters")
    return None


# -- 11-12: what the call commits, and where ---------------------------------------------------------

def commit(s: Judged) -> Decision | None:
    effect = s.effect
    if effect is None or not effect.commits:
        s.step("commit", "pass", f"an ordinary step: {effect.describe() if effect else 'no effect known'}")
        return None
    if s.policy not in COMMIT_POLICIES:
        s.step("commit", "skip", f"{effect.describe()}; {s.named} asks before every change anyway")
        return None
    if s.ctx.direct:
        s.step("commit", "pass", f"{effect.describe()}; you issued this call yourself")
        return None
    consent = getattr(s.ctx.provenance, "consent", None)
    item = consent.covers(effect.effect, s.origin.host) if consent is not None and s.origin.text else None
    if item is not None:
        s.step("commit", "pass", f"{effect.describe()}; your request asked for it ({item.describe()})")
        return None
    granted = _effect_granted(effect.effect, s.origin.text, s.ctx.grants)
    if granted is not None:
        s.step("commit", "pass", f"{effect.describe()}; you allowed {granted} here for this task")
        return None
    if s.rule is not None and s.rule.verdict == "allow" and (
            s.rule.tool.startswith("effect:") or s.rule.source in WRITTEN_RULES):
        s.step("commit", "pass", f"{effect.describe()}; allowed by {s.rule.describe()}")
        return None
    what = EFFECT_WORDS.get(effect.effect, effect.effect)
    delegated = getattr(consent, "delegated", "") if consent is not None else ""
    if delegated:
        why = f"your request left the choice to what the agent read (\u201c{delegated}\u201d)"
        which = "what the agent read chose, not your request"
    else:
        why, which = "your request did not ask for it", "your request did not ask for"
    s.step("commit", "hit", f"{effect.describe()}; {why}")
    return s.done("ask", "commit", f"{s.name} @ {s.where} commits {what} ({'; '.join(effect.facts)}), which "
                  f"{which}; confirm it", flags=(*s.flags, FLAG_COMMIT))


def _effect_granted(effect: str, origin: str, grants) -> str | None:
    """The effect class a card allowed on this origin for the task that covers `effect`: its own
    class, or for a form the host could not name further, any commit allowed here (as consent
    treats it)."""
    if (f"effect:{effect}", origin) in grants:
        return effect
    if effect == "submit":
        return next((tool[7:] for tool, where in grants if where == origin and tool.startswith("effect:")), None)
    return None


def guarded_origin(s: Judged) -> Decision | None:
    guarded = s.guarded
    if guarded is None:
        s.step("guarded_origin", "pass", "not a guarded origin")
        return None
    if s.policy == "auto" and s.ctx.provenance is not None:
        # Values were judged by provenance and commits by the step before: a step asks nowhere.
        s.step("guarded_origin", "pass", f"{s.where} is guarded ({guarded.text}), but under auto its values and "
               "commits were judged")
        return None
    s.step("guarded_origin", "hit", f"{s.where} matches the guarded pattern {guarded.text}")
    return s.done("ask", "guarded_origin",
                  f"{s.where} is guarded ({guarded.text}): every write there needs confirmation")


def definition_changed(s: Judged) -> Decision | None:
    if s.ctx.definition_changed:
        s.step("definition_changed", "hit", f"the server changed the definition of {s.name} since it was allowed")
        return s.done("ask", "definition_changed",
                      f"the MCP server changed the description or parameters of {s.name} since it was allowed; "
                      "confirm the new definition")
    if s.is_mcp:
        s.step("definition_changed", "pass", "the tool's definition is the one allowed")
    return None


# -- 13-15: what silences the policy's question ------------------------------------------------------

def session_grant(s: Judged) -> Decision | None:
    if (s.name, s.origin.text) in s.ctx.grants:
        s.step("session_grant", "hit", f"granted for this session: {s.name} @ {s.where}")
        return s.done("allow", "session_grant", f"allowed for this session: {s.name} @ {s.where}")
    s.step("session_grant", "pass", "no session grant")
    return None


def rule_allow(s: Judged) -> Decision | None:
    if s.rule is not None:
        s.step("rule_allow", "hit", f"allowed by {s.rule.describe()}")
        return s.done("allow", "rule_allow", f"allowed by rule {s.rule.describe()}", rule=s.rule)
    s.step("rule_allow", "pass", "no allow rule matches")
    return None


def policy_default(s: Judged) -> Decision:
    if s.policy == "auto":
        s.step("policy_default", "hit", f"{s.named} allows changes")
        return s.done("allow", "policy_default", f"{s.named} allows {s.name} @ {s.where}")
    s.step("policy_default", "hit", f"{s.named} asks before changes")
    return s.done("ask", "policy_default", f"{s.named} asks before {s.name} @ {s.where}")
