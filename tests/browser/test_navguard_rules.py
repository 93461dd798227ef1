"""The navigation guard's browser rules, checked by matching URLs the way declarativeNetRequest
does (the highest priority among the matching rules decides; at equal priority an allow wins):
whatever a thread's reach denies, the rules block, spelled any way the browser keeps a URL
(userinfo, a trailing dot, an explicit port), for documents and for a page's own requests alike;
scopes never leak into each other; and the rules stay within the browser's limits."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.guard import GuardRule

from host.browser.navguard.dnr import GuardTooLarge, Scope, compile_rules, lock_domains
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.patterns import OriginSet, parse_origin_pattern
from host.gatekeeper.reach import Reach, reach_of
from host.gatekeeper.rules import Rule, RuleSet
from host.gatekeeper.sensitive import OriginLists

TAB = 7
OTHER_TAB = 8
PATTERNS = ["*", "*.example.com", "https://shop.example.com", "shop.example.com", "example.com:8080",
            "http://*.example.com", "https://evil.test", "*.test", "http://127.0.0.1:8000", "127.0.0.1", "localhost",
            "http://localhost:9000", "https://*", "http://[::1]:8000"]
# URLs as the browser matches them (canonical: lowercase host, no default port), in their odd spellings.
URLS = ["https://shop.example.com/a", "https://user:pw@shop.example.com/a", "https://shop.example.com./a",
        "http://shop.example.com:8080/", "https://a.b.example.com/x?q=1", "http://example.com/", "http://example.com.:8080/",
        "https://evil.test/p#f", "http://x.test:81/", "http://127.0.0.1:8000/r", "http://127.0.0.1:9000/",
        "http://localhost:9000/b", "http://localhost.:9000/", "https://localhost/", "https://www.chase.com/",
        "https://www.chase.com./", "https://other.org/", "http://[::1]:8000/", "http://[::1]:9000/",
        "http://evil.test@shop.example.com/", "https://shop.example.com.evil.test/"]
LOCKS = [None, ["http://127.0.0.1:8000"], ["*.example.com"], ["https://shop.example.com", "localhost"], ["*.test"],
         ["https://*"]]

rules_st = st.lists(st.builds(
    Rule, tool=st.sampled_from(["*", "navigate", "category:navigate"]), origin=st.sampled_from(PATTERNS),
    verdict=st.sampled_from(["allow", "ask", "deny"]),
    source=st.sampled_from(["managed", "user_setting", "approval_persist"]),
    args=st.sampled_from([None, None, {"url": "x"}]), created_at=st.floats(0, 1e6, allow_nan=False)), max_size=8)


def _host(url: str) -> str:
    netloc = urlsplit(url).netloc.rsplit("@", 1)[-1]
    if netloc.startswith("["):
        return netloc[: netloc.index("]") + 1]
    return netloc.split(":")[0]


KINDS = ["main_frame", "sub_frame", "image", "xmlhttprequest", "ping", "websocket", "stylesheet", "other"]


def matches(rule: GuardRule, url: str, tab: int, kind: str = "main_frame", initiator: str | None = None) -> bool:
    """Does `rule` match a request of `kind` for `url` in `tab` (as the browser decides)?"""
    if kind not in rule.resource_types:
        return False
    if rule.initiator_domains is not None:
        if initiator is None or not any(initiator == d or initiator.endswith("." + d) for d in rule.initiator_domains):
            return False
    if rule.tab_ids is not None and tab not in rule.tab_ids:
        return False
    if rule.excluded_tab_ids is not None and tab in rule.excluded_tab_ids:
        return False
    if rule.request_domains is not None:
        host = _host(url).rstrip(".")
        if not any(host == d or host.endswith("." + d) for d in rule.request_domains):
            return False
    if rule.regex_filter is not None and re.search(rule.regex_filter, url, re.IGNORECASE) is None:
        return False
    if rule.url_filter is not None:
        assert rule.url_filter.startswith("|"), rule.url_filter  # the only form the guard writes
        if not url.lower().startswith(rule.url_filter[1:]):
            return False
    return True


def blocks(rules: list[GuardRule], url: str, tab: int = TAB, kind: str = "main_frame",
           initiator: str | None = None) -> bool:
    found = [r for r in rules if matches(r, url, tab, kind, initiator)]
    if not found:
        return False
    top = max(r.priority for r in found)
    return not any(r.action == "allow" for r in found if r.priority == top)


def reach_denies(reach: Reach, url: str) -> bool:
    origin = normalize_origin(url)

    def hit(pattern) -> bool:
        return OriginSet([pattern]).match(origin) is not None

    if any(hit(p) for p in reach.blocked):
        return True
    if next((denies for pattern, denies in reach.ranked if hit(pattern)), False):
        return True
    return reach.lock is not None and not any(hit(p) for p in reach.lock)


def a_reach(rules, lock, blocked=()) -> Reach:
    return reach_of("navigate", OriginLists(blocked), RuleSet(rules), OriginSet.parse(lock) if lock else None)


fast = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@fast
@given(rules=rules_st, lock=st.sampled_from(LOCKS), url=st.sampled_from(URLS), kind=st.sampled_from(KINDS),
       blocked=st.sampled_from([[], ["localhost"], ["http://127.0.0.1:8000"], ["*.example.com", "http://[::1]:8000"]]))
def test_what_the_reach_denies_the_rules_block(rules, lock, url, kind, blocked):
    reach = a_reach(rules, lock, blocked)
    compiled = compile_rules([(Scope(tab_ids=(TAB,)), reach)])
    if reach_denies(reach, url):
        assert blocks(compiled, url, kind=kind), (url, kind, reach, compiled)
    # A page's own request is held exactly as a document going to the same place.
    assert blocks(compiled, url, kind=kind) == blocks(compiled, url), (url, kind, reach, compiled)
    assert not blocks(compiled, url, OTHER_TAB, kind), "a tab the guard does not hold is never touched"


@fast
@given(lock=st.sampled_from([lock for lock in LOCKS if lock]), url=st.sampled_from(URLS))
def test_a_scope_lock_allows_exactly_its_own_origins(lock, url):
    reach = a_reach([], lock)
    compiled = compile_rules([(Scope(tab_ids=(TAB,)), reach)])
    inside = OriginSet.parse(lock).match(normalize_origin(url)) is not None
    blocked = OriginLists().blocked(normalize_origin(url)) is not None
    assert blocks(compiled, url) == (not inside or blocked), url


def test_an_allow_that_carves_out_of_a_deny_is_kept_only_inside_the_lock():
    rules = [Rule(tool="navigate", origin="*.example.com", verdict="deny"),
             Rule(tool="navigate", origin="https://shop.example.com", verdict="allow")]
    free = compile_rules([(Scope(tab_ids=(TAB,)), a_reach(rules, None))])
    assert not blocks(free, "https://shop.example.com/") and blocks(free, "https://a.example.com/")
    locked = compile_rules([(Scope(tab_ids=(TAB,)), a_reach(rules, ["https://*.example.com"]))])
    assert not blocks(locked, "https://shop.example.com/") and blocks(locked, "https://other.org/")
    narrow = compile_rules([(Scope(tab_ids=(TAB,)), a_reach(rules, ["https://a.example.com"]))])
    assert blocks(narrow, "https://shop.example.com/"), "outside the lock, an allow rule opens nothing"


def test_scopes_do_not_leak_into_each_other():
    locked = a_reach([], ["http://127.0.0.1:8000"])
    blocked_only = a_reach([], None, ["http://127.0.0.1:9000"])
    rules = compile_rules([(Scope(tab_ids=(TAB,)), locked), (Scope(tab_ids=(OTHER_TAB,)), blocked_only),
                           (Scope(excluded=(TAB, OTHER_TAB)), locked)])
    assert blocks(rules, "https://other.org/", TAB) and not blocks(rules, "https://other.org/", OTHER_TAB)
    assert blocks(rules, "http://127.0.0.1:9000/", OTHER_TAB) and not blocks(rules, "http://127.0.0.1:8000/", OTHER_TAB)
    assert blocks(rules, "https://other.org/", 99), "a tab the host has not seen gets the new-tab rules"
    assert [r.id for r in rules] == list(range(1, len(rules) + 1))


def test_the_blocked_list_needs_few_rules_and_patterns_the_network_never_sees_need_none():
    rules = compile_rules([(Scope(tab_ids=(TAB,)), a_reach([], None))])
    assert len(rules) == 1 and rules[0].request_domains and "paypal.com" in rules[0].request_domains
    assert blocks(rules, "https://www.paypal.com./checkout") and blocks(rules, "https://x:y@paypal.com/")


def test_a_lock_kept_to_navigations_holds_documents_only_and_the_blocked_list_everything():
    reach = reach_of("navigate", OriginLists(["http://127.0.0.1:9000"]), RuleSet([]),
                     OriginSet.parse(["http://127.0.0.1:8000"]), confine_page=False)
    rules = compile_rules([(Scope(tab_ids=(TAB,)), reach)])
    assert blocks(rules, "https://cdn.other.org/app.js", kind="main_frame")
    assert blocks(rules, "https://cdn.other.org/app.js", kind="sub_frame")
    assert not blocks(rules, "https://cdn.other.org/app.js", kind="script")
    assert blocks(rules, "http://127.0.0.1:9000/collect", kind="ping"), "the blocked list holds every kind"


def test_requests_of_no_tab_are_held_as_documents_or_where_a_locked_site_started_them():
    locked = a_reach([], ["http://127.0.0.1:8000"], ["http://127.0.0.1:9000"])
    worker = Reach(locked.blocked, (), locked.lock)
    rules = compile_rules([(Scope(tab_ids=(TAB,)), locked), (Scope(excluded=(TAB,)), locked),
                           (Scope(tab_ids=(-1,), initiators=("127.0.0.1",)), worker)])
    # A pop-up's first request (a document of no tab) is held; so is a new tab's image.
    assert blocks(rules, "https://other.org/", -1, "main_frame")
    assert blocks(rules, "https://other.org/x.png", 99, "image")
    # A service worker of the locked site is held to the lock; other sites' workers are not held.
    assert blocks(rules, "https://other.org/collect", -1, "xmlhttprequest", initiator="127.0.0.1")
    assert not blocks(rules, "http://127.0.0.1:8000/api", -1, "xmlhttprequest", initiator="127.0.0.1")
    assert not blocks(rules, "https://other.org/collect", -1, "xmlhttprequest", initiator="mail.example")
    assert not blocks(rules, "http://127.0.0.1:9000/", -1, "xmlhttprequest", initiator="bank.example"), (
        "a blocked site's own worker (the user's, in another tab) is not held")


def test_a_lock_names_its_sites_as_initiators_only_when_every_pattern_has_a_host():
    assert lock_domains(tuple(OriginSet.parse(["https://shop.example.com", "*.mail.example"]).patterns)) == (
        "shop.example.com", "mail.example")
    assert lock_domains(tuple(OriginSet.parse(["https://*"]).patterns)) == ()


def test_too_many_rules_is_refused_not_cut():
    many = [parse_origin_pattern(f"http://h{i}.test:81") for i in range(1200)]  # each needs an expression
    with pytest.raises(GuardTooLarge):
        compile_rules([(Scope(tab_ids=(TAB,)), Reach(blocked=tuple(many)))])
