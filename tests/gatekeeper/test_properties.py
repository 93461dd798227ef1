"""Properties that must hold whatever rules, grants and policies are in force."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.gatekeeper.decision import Call, Context, check
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.patterns import OriginSet
from host.gatekeeper.rules import Rule, RuleSet, compile_rule
from host.gatekeeper.sensitive import OriginLists
from host.tools.catalog import CATALOG

WRITES = sorted(n for n, s in CATALOG.items() if s.effects == "write" and not s.url_param and not s.originless)
READS = sorted(n for n, s in CATALOG.items() if s.effects == "read" and not s.always_allowed)
TOOL_PATTERNS = ["*", "click", "type", "category:click", "category:fill", "category:navigate", "cl*", "mcp__*",
                 "navigate", "hover"] + WRITES[:8]
ORIGIN_PATTERNS = ["*", "*.chase.com", "https://www.chase.com", "*.example.com", "https://shop.example.com",
                   "shop.example.com", "mail.google.com", "*.google.com", "chrome://*", "about:*",
                   "chrome-extension://*", "https://evil.test", "*.test", ""]
ORIGINS = ["https://shop.example.com", "https://www.chase.com", "http://WWW.CHASE.COM.:80", "https://mail.google.com",
           "chrome://settings", "view-source:https://www.paypal.com", "chrome-extension://abc/p.html",
           "https://evil.test", "https://a.b.example.com", "http://127.0.0.1:8000", "about:blank"]
BLOCKED = ["https://www.chase.com", "http://WWW.CHASE.COM.:80", "chrome://settings", "CHROME://flags",
           "view-source:https://www.paypal.com", "chrome-extension://abc/p.html", "https://x.gov", "about:blank",
           "https://pay.google.com:8443", "blob:https://secure.chase.com/1"]
OPEN = [origin for origin in ORIGINS if OriginLists().blocked(normalize_origin(origin)) is None]
# Reads that act on a page (listings of tabs, history and bookmarks act on none).
PAGE_READS = sorted(n for n, s in CATALOG.items() if s.effects == "read" and not s.always_allowed and not s.originless)
GUARDED = ["https://mail.google.com", "https://drive.google.com", "https://team.slack.com",
           "https://accounts.google.com", "https://console.aws.amazon.com"]

rules_st = st.lists(st.builds(
    Rule, tool=st.sampled_from(TOOL_PATTERNS), origin=st.sampled_from(ORIGIN_PATTERNS),
    verdict=st.sampled_from(["allow", "ask", "deny"]),
    source=st.sampled_from(["managed", "user_setting", "approval_persist", "plugin_default"]),
    created_at=st.floats(0, 1e6, allow_nan=False)), max_size=12)
allow_rules_st = st.lists(st.builds(
    Rule, tool=st.sampled_from(TOOL_PATTERNS), origin=st.sampled_from(ORIGIN_PATTERNS), verdict=st.just("allow"),
    source=st.sampled_from(["user_setting", "approval_persist", "plugin_default"]),
    created_at=st.floats(0, 2e6, allow_nan=False)), min_size=1, max_size=6)
policy_st = st.sampled_from(["always", "untrusted", "auto"])
json_st = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                       lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
                       max_leaves=20)
params_st = st.dictionaries(st.sampled_from(["ref", "text", "element", "url", "password", "values"]), json_st,
                            max_size=4)

fast = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def grants_for(tools, origins):
    return {(t, normalize_origin(o).text) for t in tools for o in origins}


@fast
@given(tool=st.sampled_from(WRITES), origin=st.sampled_from(BLOCKED), rules=rules_st, policy=policy_st,
       params=params_st)
def test_no_rule_or_grant_turns_a_sensitive_origin_write_into_allow(tool, origin, rules, policy, params):
    ctx = Context(origin=origin, policy=policy, rules=RuleSet(rules), grants=grants_for(WRITES, BLOCKED),
                  scope_origins={normalize_origin(origin).text})
    decision = check(Call(tool, params), ctx)
    assert decision.verdict == "deny"


@fast
@given(url=st.sampled_from(BLOCKED + ["javascript:alert(1)", "DATA:text/html,x", "view-source:javascript:1"]),
       tool=st.sampled_from(["navigate", "tab_open", "download"]), rules=rules_st, policy=policy_st)
def test_no_rule_or_grant_allows_navigating_to_a_sensitive_or_script_destination(url, tool, rules, policy):
    ctx = Context(origin="https://shop.example.com", policy=policy, rules=RuleSet(rules),
                  grants=grants_for([tool], BLOCKED + ["javascript:", "data:"]))
    assert check(Call(tool, {"url": url}), ctx).verdict == "deny"


@fast
@given(tool=st.sampled_from(WRITES), origin=st.sampled_from(GUARDED), rules=rules_st, params=params_st)
def test_a_guarded_origin_write_is_never_allowed(tool, origin, rules, params):
    ctx = Context(origin=origin, policy="auto", rules=RuleSet(rules), grants=grants_for(WRITES, GUARDED),
                  scope_origins={normalize_origin(origin).text})
    assert check(Call(tool, params), ctx).verdict != "allow"


@fast
@given(tool=st.sampled_from(WRITES), origin=st.sampled_from(ORIGINS), rules=rules_st, policy=policy_st,
       params=params_st, extra=allow_rules_st)
def test_adding_allow_rules_never_turns_a_non_rule_deny_into_allow(tool, origin, rules, policy, params, extra):
    lock = OriginSet.parse(["*.example.com"])
    base = Context(origin=origin, policy=policy, rules=RuleSet(rules), scope_lock=lock)
    before = check(Call(tool, params), base)
    after = check(Call(tool, params), Context(origin=origin, policy=policy, rules=RuleSet(rules + extra),
                                              scope_lock=lock))
    if before.verdict == "deny" and (before.code != "rule_deny" or before.rule.source == "managed"):
        assert after.verdict == "deny"
    if before.verdict == "deny" and before.code == "rule_deny" and after.verdict != "deny":
        # A user's deny rule gives way only by the precedence of rules.py: to an added allow rule that is more
        # specific, or as specific and from a higher source (a tie on both goes to the deny).
        deny_key = compile_rule(before.rule).sort_key[:3]
        assert any(compile_rule(r).sort_key[:3] < deny_key for r in extra)


@fast
@given(tool=st.sampled_from(WRITES), rules=rules_st, policy=policy_st, params=params_st,
       origin=st.sampled_from(["https://evil.test", "https://a.other.org", "http://127.0.0.1"]))
def test_a_write_outside_the_scope_lock_is_never_allowed(tool, rules, policy, params, origin):
    ctx = Context(origin=origin, policy=policy, rules=RuleSet(rules), scope_lock=OriginSet.parse(["*.example.com"]),
                  grants=grants_for(WRITES, [origin]))
    assert check(Call(tool, params), ctx).verdict == "deny"


@fast
@given(tool=st.sampled_from(["type", "type_trusted", "click", "mcp__x__y"]), rules=rules_st,
       secret=st.sampled_from(["4111 1111 1111 1111", "378282246310005", "AKIAIOSFODNN7EXAMPLE",
                               "-----BEGIN EC PRIVATE KEY-----"]), policy=policy_st)
def test_sensitive_payload_is_never_silently_allowed(tool, rules, secret, policy):
    origin = "https://shop.example.com"
    ctx = Context(origin=origin, policy=policy, rules=RuleSet(rules), grants={(tool, origin)},
                  scope_origins={origin})
    assert check(Call(tool, {"ref": "s1", "text": secret}), ctx).verdict != "allow"


@fast
@given(tool=st.sampled_from(READS), origin=st.sampled_from(OPEN), rules=rules_st, policy=policy_st,
       params=params_st)
def test_reads_off_the_blocked_list_are_never_denied(tool, origin, rules, policy, params):
    assert check(Call(tool, params), Context(origin=origin, policy=policy, rules=RuleSet(rules))).verdict != "deny"


@fast
@given(tool=st.sampled_from(PAGE_READS + ["frobnicate"]), origin=st.sampled_from(BLOCKED + ["https://bank.example"]),
       rules=rules_st, extra=allow_rules_st, policy=policy_st, params=params_st, direct=st.booleans(),
       locked=st.booleans())
def test_no_policy_rule_grant_or_direct_call_lets_a_read_reach_a_blocked_origin(tool, origin, rules, extra, policy,
                                                                                params, direct, locked):
    # The blocked list is no access: a read there is denied as a write is, whatever else allows it.
    ctx = Context(origin=origin, policy=policy, rules=RuleSet(rules + extra),
                  lists=OriginLists(["https://bank.example"]), direct=direct,
                  grants=grants_for(READS + WRITES, BLOCKED + ["https://bank.example"]),
                  scope_origins={normalize_origin(origin).text},
                  scope_lock=OriginSet.parse(["*"]) if locked else None)
    decision = check(Call(tool, params, effects="read" if tool == "frobnicate" else None), ctx)
    assert (decision.verdict, decision.code) == ("deny", "sensitive_origin")


@settings(max_examples=500, deadline=None)
@given(origin=st.text(max_size=60) | st.sampled_from(ORIGINS + BLOCKED), params=params_st,
       tool=st.sampled_from(WRITES + READS + ["navigate", "fetch_url", "unknown_tool", "mcp__a__b"]))
def test_check_never_raises_and_always_explains(origin, params, tool):
    lists = OriginLists(guarded=["crm.example.com"])
    decision = check(Call(tool, params), Context(origin=origin, lists=lists))
    assert decision.verdict in ("allow", "ask", "deny") and decision.reason
    assert decision.trace and decision.trace[-1].outcome == "hit"


@settings(max_examples=300, deadline=None)
@given(host=st.from_regex(r"[a-zA-Z][a-zA-Z0-9\-]{0,10}(\.[a-zA-Z][a-zA-Z0-9\-]{0,10}){1,3}", fullmatch=True),
       scheme=st.sampled_from(["http", "https", "HTTPS", "hTtP"]), dots=st.sampled_from(["", ".", ".."]),
       port=st.sampled_from(["", ":443", ":80", ":8080"]))
def test_normalisation_folds_spellings(host, scheme, dots, port):
    spelled = normalize_origin(f"{scheme}://{host.upper()}{dots}{port}/x")
    plain = normalize_origin(f"{scheme.lower()}://{host.lower()}{port}")
    assert spelled == plain
    assert normalize_origin(spelled.text) == spelled  # idempotent
    blocked = OriginLists(blocked=[f"*.{host}"])
    assert blocked.blocked(spelled) is not None
