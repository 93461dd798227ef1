"""`Reach`, the part of the decision a network filter can enforce: it never lets through what
`check` denies for a navigation, it denies no more than `check` where patterns can say exactly
what the rules say, and combining two threads' reaches keeps every denial of both."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from host.gatekeeper.decision import Call, Context, check
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.patterns import OriginSet, parse_origin_pattern
from host.gatekeeper.reach import Reach, combine, covers, intersect, reach_of
from host.gatekeeper.rules import Rule, RuleSet
from host.gatekeeper.sensitive import OriginLists

PATTERNS = ["*", "*.example.com", "https://shop.example.com", "shop.example.com", "example.com:8080",
            "http://*.example.com", "https://evil.test", "*.test", "http://127.0.0.1:8000", "127.0.0.1", "localhost",
            "http://localhost:9000", "https://*", ""]
URLS = ["https://shop.example.com/a", "http://shop.example.com:8080/", "https://a.b.example.com/x", "http://example.com/",
        "https://evil.test/p", "http://x.test:81/", "http://127.0.0.1:8000/r", "http://127.0.0.1:9000/",
        "http://localhost:9000/b", "https://localhost/", "https://www.chase.com/", "https://other.org/"]
LOCKS = [None, ["http://127.0.0.1:8000"], ["*.example.com"], ["https://shop.example.com", "localhost"], ["*.test"]]

rules_st = st.lists(st.builds(
    Rule, tool=st.sampled_from(["*", "navigate", "category:navigate", "nav*", "click", "download"]),
    origin=st.sampled_from(PATTERNS), verdict=st.sampled_from(["allow", "ask", "deny"]),
    source=st.sampled_from(["managed", "user_setting", "approval_persist", "plugin_default"]),
    args=st.sampled_from([None, None, None, {"url": "secret"}, {"tabId": "7"}]),
    created_at=st.floats(0, 1e6, allow_nan=False)), max_size=10)
fast = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def matches(pattern, origin) -> bool:
    return OriginSet([pattern]).match(origin) is not None


def reach_denies(reach: Reach, url: str) -> bool:
    """What the browser rules built from `reach` do with a navigation to `url`."""
    origin = normalize_origin(url)
    if any(matches(p, origin) for p in reach.blocked):
        return True
    first = next((denies for pattern, denies in reach.ranked if matches(pattern, origin)), False)
    if first:
        return True
    return reach.lock is not None and not any(matches(p, origin) for p in reach.lock)


def navigation_denied(rules: list[Rule], lock: list[str] | None, url: str, blocked: list[str]) -> bool:
    ctx = Context(origin="https://start.example.org", policy="auto", rules=RuleSet(rules),
                  lists=OriginLists(blocked), scope_lock=OriginSet.parse(lock) if lock else None)
    return check(Call("navigate", {"url": url}), ctx).verdict == "deny"


def reach(rules: list[Rule], lock: list[str] | None, blocked: list[str] = (), tool: str = "navigate") -> Reach:
    return reach_of(tool, OriginLists(blocked), RuleSet(rules), OriginSet.parse(lock) if lock else None)


@fast
@given(rules=rules_st, lock=st.sampled_from(LOCKS), url=st.sampled_from(URLS),
       blocked=st.sampled_from([[], ["localhost"], ["*.example.com"]]))
def test_whatever_the_decision_denies_the_reach_denies(rules, lock, url, blocked):
    if navigation_denied(rules, lock, url, blocked):
        assert reach_denies(reach(rules, lock, blocked), url)


@fast
@given(rules=rules_st, lock=st.sampled_from(LOCKS), url=st.sampled_from(URLS))
def test_without_conditions_or_managed_exceptions_the_reach_is_exact(rules, lock, url):
    plain = [r for r in rules if not r.args and not (r.source == "managed" and r.verdict != "deny")]
    assert reach_denies(reach(plain, lock), url) == navigation_denied(plain, lock, url, [])


def test_the_blocked_list_and_managed_denies_are_never_reachable():
    managed = Rule(tool="navigate", origin="*.evil.test", verdict="deny", source="managed")
    user_allow = Rule(tool="navigate", origin="https://www.evil.test", verdict="allow")
    found = reach([managed, user_allow], None, ["localhost"])
    assert parse_origin_pattern("localhost") in found.blocked and parse_origin_pattern("*.chase.com") in found.blocked
    assert parse_origin_pattern("*.evil.test") in found.blocked
    assert reach_denies(found, "https://www.evil.test/")  # a user's allow never loosens a managed deny


def test_a_more_specific_allow_carves_out_of_a_deny_in_rank_order():
    rules = [Rule(tool="category:navigate", origin="*.example.com", verdict="deny"),
             Rule(tool="navigate", origin="https://shop.example.com", verdict="allow"),
             Rule(tool="click", origin="*", verdict="deny")]  # another tool: not part of the reach
    found = reach(rules, None)
    assert found.ranked == ((parse_origin_pattern("https://shop.example.com"), False),
                            (parse_origin_pattern("*.example.com"), True))
    assert not reach_denies(found, "https://shop.example.com/") and reach_denies(found, "https://a.example.com/")


def test_conditions_block_more_never_less():
    on_url = Rule(tool="navigate", origin="*.example.com", verdict="deny", args={"url": "private"})
    on_tab = Rule(tool="navigate", origin="*.test", verdict="deny", args={"tabId": "7"})
    allow_if = Rule(tool="navigate", origin="https://shop.example.com", verdict="allow", args={"url": "public"})
    found = reach([on_url, on_tab, allow_if], None)
    assert found.ranked == ((parse_origin_pattern("*.example.com"), True),)
    assert reach_denies(found, "https://shop.example.com/public")


def test_allows_that_come_after_every_deny_are_dropped():
    rules = [Rule(tool="navigate", origin="https://shop.example.com", verdict="allow")]
    assert reach(rules, None).ranked == ()


def test_download_has_its_own_rules():
    rule = Rule(tool="download", origin="*.example.com", verdict="deny")
    assert reach([rule], None, tool="download").ranked == ((parse_origin_pattern("*.example.com"), True),)
    assert reach([rule], None, tool="navigate").ranked == ()


def test_covers_is_containment():
    p = parse_origin_pattern
    assert covers(p("*"), p("https://a.com")) and covers(p("*.a.com"), p("https://x.a.com"))
    assert covers(p("*.a.com"), p("a.com:8080")) and covers(p("a.com"), p("a.com:8080"))
    assert covers(p("*.a.com"), p("https://*.b.a.com")) and not covers(p("https://*.a.com"), p("*.b.a.com"))
    assert not covers(p("a.com:8080"), p("a.com")) and not covers(p("*.a.com"), p("*.com"))
    assert not covers(p("https://a.com"), p("a.com")) and covers(p("https://*"), p("https://a.com:444"))
    assert not covers(p("*.0.0.1"), p("127.0.0.1")) and not covers(p("https://a.com"), p(""))


def test_combined_reaches_keep_every_denial_of_both():
    first = reach([Rule(tool="navigate", origin="*.test", verdict="deny"),
                   Rule(tool="navigate", origin="https://ok.test", verdict="allow")], ["*.example.com", "*.test"])
    second = reach([], ["https://shop.example.com", "http://other.org"], ["localhost"])
    both = combine([first, second])
    assert both.lock == (parse_origin_pattern("https://shop.example.com"),)
    for url in URLS + ["https://ok.test/"]:
        if reach_denies(first, url) or reach_denies(second, url):
            assert reach_denies(both, url), url
    assert combine([first]) is first and combine([]) == Reach()


def test_intersecting_locks_keeps_only_what_both_contain():
    p = parse_origin_pattern
    assert intersect((p("*.a.com"),), (p("https://x.a.com"), p("b.com"))) == (p("https://x.a.com"),)
    assert intersect((p("a.com"),), (p("http://*.a.com"),)) == ()  # a partial overlap is left out
