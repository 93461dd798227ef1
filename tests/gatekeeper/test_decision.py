"""The decision order, step by step, with an example of each outcome (verdict + code)."""

import pytest

from host.gatekeeper.decision import CODES
from host.gatekeeper.patterns import OriginSet
from host.gatekeeper.sensitive import OriginLists
from host.tools.catalog import CATALOG

from .conftest import decide

SHOP = "https://shop.example.com"


@pytest.mark.parametrize("tool", ["memory_read", "ask_user", "request_user_action", "schedule_resume"])
@pytest.mark.parametrize("policy", ["always", "untrusted", "auto"])
def test_always_allowed_builtins(tool, policy):
    d = decide(tool, policy=policy, origin="")
    assert (d.verdict, d.code) == ("allow", "always_allowed")


@pytest.mark.parametrize("policy", ["untrusted", "auto"])
@pytest.mark.parametrize("origin", [SHOP, "https://mail.google.com", "http://127.0.0.1:8000"])
def test_reads_are_allowed_anywhere_off_the_blocked_list_outside_always(policy, origin):
    for tool in ("read_page", "screenshot", "extract"):
        d = decide(tool, policy=policy, origin=origin, rules=[dict(tool="*", origin="*", verdict="deny")])
        assert (d.verdict, d.code) == ("allow", "read_allowed")


def test_reads_under_always_ask_unless_granted_and_are_denied_only_on_the_blocked_list():
    d = decide("screenshot", policy="always", origin=SHOP)
    assert (d.verdict, d.code, d.flags) == ("ask", "read_ask", ("escalation_l2",))
    bank = "https://www.chase.com"
    d = decide("screenshot", policy="always", origin=bank, grants={("screenshot", bank)})
    assert (d.verdict, d.code) == ("deny", "sensitive_origin")
    d = decide("read_page", policy="always", grants={("read_page", SHOP)})
    assert (d.verdict, d.code) == ("allow", "session_grant")


@pytest.mark.parametrize("url", ["javascript:alert(1)", "JAVASCRIPT:alert(1)", " JavaScript:void(0)",
                                 "data:text/html,<b>x</b>", "DATA:text/html,x", "vbscript:msgbox(1)",
                                 "view-source:javascript:alert(1)", "java\nscript:alert(1)"])
@pytest.mark.parametrize("tool", ["navigate", "tab_open", "download"])
def test_script_destinations_are_denied_whatever_else_says_yes(url, tool):
    d = decide(tool, {"url": url}, policy="auto", rules=[dict(tool="*", origin="*", verdict="allow")],
               grants={(tool, "javascript:")})
    assert (d.verdict, d.code) == ("deny", "script_scheme")


# Spellings of blocked origins that must still be recognised (writes under auto, so only the list
# can deny).
@pytest.mark.parametrize("origin", [
    "https://www.chase.com.", "https://www.chase.com..", "http://www.chase.com:8080", "http://pay.google.com",
    "https://pay.google.com:8443", "https://x.chromewebstore.google.com", "https://gov", "https://bücher.gov",
    "chrome://settings", "edge://settings", "about:blank", "https://www.paypal.com", "https://www.icbc.com.cn",
    # Uppercase schemes and URLs wrapped in another scheme.
    "CHROME://settings", "view-source:https://www.chase.com", "blob:https://www.chase.com/1234",
    "filesystem:https://www.chase.com/temporary/x",
    # Extension pages, ours included, are never written to.
    "chrome-extension://abcdefghijklmnopabcdefghijklmnop/sidepanel.html", "CHROME-EXTENSION://x/y",
    "moz-extension://x/y",
])
def test_sensitive_origins_deny_writes(origin):
    d = decide("click", {"ref": "s1"}, origin=origin, policy="auto",
               rules=[dict(tool="click", origin="*", verdict="allow")], grants={("click", origin)})
    assert (d.verdict, d.code) == ("deny", "sensitive_origin")


@pytest.mark.parametrize("origin", ["https://sub.pay.google.com", "https://evilchase.com",
                                    "https://www.paypal.com.evil.com", "file:///tmp/x.html", "http://127.0.0.1:8000"])
def test_not_sensitive(origin):
    d = decide("click", {"ref": "s1"}, origin=origin, policy="auto")
    assert (d.verdict, d.code) == ("allow", "policy_default")


def test_user_sensitive_pattern_exact_origin_semantics():
    from host.gatekeeper.sensitive import OriginLists

    lists = OriginLists(blocked=["https://bank.example"])
    assert decide("click", origin="https://bank.example:443", lists=lists, policy="auto").code == "sensitive_origin"
    assert decide("click", origin="https://bank.example.evil", lists=lists, policy="auto").code == "policy_default"
    assert decide("click", origin="https://bank.example@evil.test", lists=lists, policy="auto").code == "policy_default"


def test_url_bearing_writes_are_judged_by_destination():
    # Leaving a sensitive site is fine; going to one is not.
    d = decide("navigate", {"url": "https://example.org/a"}, origin="https://www.chase.com", policy="auto")
    assert (d.verdict, d.code, d.target_origin) == ("allow", "policy_default", "https://example.org")
    d = decide("navigate", {"url": "https://www.chase.com/login"}, origin=SHOP, policy="auto")
    assert (d.verdict, d.code, d.target_origin) == ("deny", "sensitive_origin", "https://www.chase.com")
    assert "destination" in d.reason
    d = decide("tab_open", {"url": "chase.com"}, origin=SHOP, policy="auto")  # scheme-less: https
    assert d.code == "sensitive_origin"
    # A grant for the current tab does not cover navigating elsewhere.
    d = decide("navigate", {"url": "https://other.example/"}, grants={("navigate", SHOP)})
    assert (d.verdict, d.code) == ("ask", "policy_default")
    d = decide("navigate", {"url": "https://other.example/"}, grants={("navigate", "https://other.example")})
    assert (d.verdict, d.code) == ("allow", "session_grant")


def test_missing_url_falls_back_to_the_tab_origin():
    assert decide("navigate", {"url": ""}, origin="https://www.chase.com").code == "sensitive_origin"


def test_invalid_destination_is_denied():
    d = decide("navigate", {"url": "http://exa mple.com"}, policy="auto")
    assert (d.verdict, d.code) == ("deny", "invalid_destination")


def test_deny_rule_names_the_rule_and_source():
    d = decide("click", {"ref": "s1"}, rules=[dict(tool="click", origin="*", verdict="deny")], policy="auto",
               grants={("click", SHOP)})
    assert (d.verdict, d.code) == ("deny", "rule_deny")
    assert d.rule.tool == "click" and "click @ * (user_setting)" in d.reason


def test_ask_rule_is_not_silenced_by_a_grant():
    # {tool: 'category:fill', origin: '*', verdict: 'ask'}: every form fill asks, grant or not.
    d = decide("type", {"ref": "s1", "text": "hello"}, policy="auto", grants={("type", SHOP)},
               rules=[dict(tool="category:fill", origin="*", verdict="ask")])
    assert (d.verdict, d.code) == ("ask", "rule_ask")
    assert d.rule.tool == "category:fill"


@pytest.mark.parametrize("params,finding", [
    ({"ref": "s1", "text": "4111 1111 1111 1111"}, "card_number"),
    ({"ref": "s1", "text": "378282246310005"}, "card_number"),
    ({"ref": "s1", "text": "4111 1111 1111 1111 1"}, "card_number"),  # a trailing group must not hide the number
    ({"ref": "s1", "password": "x"}, "credential_field"),
    ({"ref": "s1", "text": "GB82 WEST 1234 5698 7654 32"}, "iban"),
    ({"ref": "s1", "text": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbg=="}, "private_key"),
    ({"ref": "s1", "text": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"}, "jwt"),
    ({"ref": "s1", "text": "ghp_" + "A1b2" * 9}, "api_token"),
])
def test_sensitive_payload_forces_an_ask_over_grants_and_allow_rules(params, finding):
    d = decide("type", params, policy="auto", grants={("type", SHOP)}, scope_origins={SHOP},
               rules=[dict(tool="type", origin=SHOP, verdict="allow")])
    assert (d.verdict, d.code) == ("ask", "sensitive_payload")
    assert finding in d.findings and "sensitive_payload" in d.flags


def test_email_forces_an_ask_only_towards_a_third_party():
    params = {"ref": "s1", "text": "write to bob@example.com"}
    d = decide("type", params, grants={("type", SHOP)}, scope_origins={SHOP})
    assert (d.verdict, d.code, d.findings) == ("allow", "session_grant", ("email_address",))
    d = decide("type", params, grants={("type", SHOP)}, scope_origins=set())
    assert (d.verdict, d.code) == ("ask", "sensitive_payload")


def test_credential_target_when_typing_into_a_password_field():
    d = decide("type", {"ref": "s1", "text": "hunter2"}, policy="auto", target={"input_type": "password"})
    assert (d.verdict, d.code, d.findings) == ("ask", "sensitive_payload", ("credential_target",))
    assert decide("type", {"ref": "s1", "text": "hunter2"}, policy="auto", target={"input_type": "text"}).verdict == "allow"
    assert decide("click", {"ref": "s1"}, policy="auto", target={"input_type": "password"}).verdict == "allow"


def test_payload_is_not_scanned_for_originless_calls():
    d = decide("memory_write", {"text": "card 4111 1111 1111 1111"}, origin="", policy="auto")
    assert (d.verdict, d.code, d.findings) == ("allow", "policy_default", ())


def test_mcp_email_forces_ask_because_the_server_origin_is_new():
    d = decide("mcp__mail__send", {"to": "a@b.example"}, origin="https://mcp.example.net", policy="auto")
    assert (d.verdict, d.code) == ("ask", "sensitive_payload")


def test_mcp_tools_are_writes_whatever_is_claimed():
    d = decide("mcp__github__list_issues", {}, effects="read", origin="https://mcp.example.net")
    assert (d.verdict, d.code) == ("ask", "policy_default")
    d = decide("mcp__github__list_issues", {}, origin="https://mcp.example.net",
               rules=[dict(tool="category:mcp", origin="*", verdict="deny")])
    assert d.code == "rule_deny"


@pytest.mark.parametrize("policy,verdict", [("always", "ask"), ("untrusted", "ask"), ("auto", "allow"),
                                            ("on-request", "ask"), ("read-only", "ask")])
def test_policy_default_for_writes(policy, verdict):
    d = decide("click", {"ref": "s1"}, policy=policy)
    assert (d.verdict, d.code) == (verdict, "policy_default")


def test_grant_and_allow_rule_allow_under_untrusted():
    assert decide("click", {"ref": "s1"}, grants={("click", SHOP)}).code == "session_grant"
    assert decide("click", {"ref": "s1"}, rules=[dict(tool="click", origin="*.example.com", verdict="allow")]).code == "rule_allow"


def test_l2_writes_carry_the_escalation_flag():
    d = decide("click_xy", {"x": 1, "y": 2})
    assert d.flags == ("escalation_l2", "commit") and d.code == "commit"  # nobody knows what is at a point


@pytest.mark.parametrize("origin", ["https://mail.google.com", "https://drive.google.com", "https://acme.slack.com",
                                    "https://console.aws.amazon.com", "https://vault.bitwarden.com",
                                    "https://accounts.google.com", "https://login.microsoftonline.com"])
def test_guarded_origins_always_ask(origin):
    d = decide("click", {"ref": "s1"}, origin=origin, policy="auto", grants={("click", origin)},
               rules=[dict(tool="click", origin=origin, verdict="allow")])
    assert (d.verdict, d.code) == ("ask", "guarded_origin")
    assert "guarded_origin" in d.flags
    # A deny rule is stricter and still wins; reads stay allowed.
    assert decide("click", origin=origin, rules=[dict(tool="*", origin="*", verdict="deny")]).code == "rule_deny"
    assert decide("read_page", origin=origin).code == "read_allowed"


def test_user_guarded_additions():
    from host.gatekeeper.sensitive import OriginLists

    lists = OriginLists(guarded=["crm.example.com"])
    assert decide("click", origin="https://crm.example.com", lists=lists, policy="auto").code == "guarded_origin"


def test_scope_lock():
    lock = OriginSet.parse(["*.example.com", "https://docs.python.org"])
    d = decide("click", {"ref": "s1"}, origin="https://evil.test", scope_lock=lock, policy="auto",
               rules=[dict(tool="*", origin="*", verdict="allow")])
    assert (d.verdict, d.code) == ("deny", "scope_lock")
    d = decide("navigate", {"url": "https://evil.test/"}, scope_lock=lock, policy="auto")
    assert (d.verdict, d.code) == ("deny", "scope_lock")
    assert decide("click", {"ref": "s1"}, scope_lock=lock, policy="auto").code == "policy_default"
    assert decide("navigate", {"url": "https://docs.python.org/3/"}, scope_lock=lock, policy="auto").verdict == "allow"
    # Reads outside the lock are still reads; origin-less writes have no origin to lock.
    assert decide("read_page", origin="https://evil.test", scope_lock=lock).code == "read_allowed"
    assert decide("memory_write", {"text": "x"}, origin="", scope_lock=lock, policy="auto").verdict == "allow"
    # A write outside the lock is denied even when it would otherwise only ask.
    d = decide("type", {"ref": "s1", "text": "4111 1111 1111 1111"}, origin="https://evil.test", scope_lock=lock)
    assert (d.verdict, d.code) == ("deny", "scope_lock")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/", "http://2130706433/", "http://0x7f.1/", "http://[::1]/",
                                 "http://169.254.169.254/latest/meta-data", "http://localhost/", "http://10.1.2.3/",
                                 "http://[::ffff:192.168.0.1]/", "http://user@127.0.0.1/", "file:///etc/passwd"])
def test_fetch_url_ssrf(url):
    d = decide("fetch_url", {"url": url}, policy="auto", rules=[dict(tool="*", origin="*", verdict="allow")])
    assert (d.verdict, d.code) == ("deny", "ssrf_blocked")


def test_fetch_url_public_destination_follows_the_policy():
    d = decide("fetch_url", {"url": "https://docs.python.org/3/"})
    assert (d.verdict, d.code, d.target_origin) == ("ask", "policy_default", "https://docs.python.org")


def test_unknown_tools_are_writes():
    d = decide("frobnicate", {}, policy="untrusted")
    assert (d.verdict, d.code) == ("ask", "policy_default")
    assert d.trace[0].step == "tool"


def test_originless_rule_only_matches_originless_calls():
    rules = [dict(tool="memory_write", origin="", verdict="allow")]
    assert decide("memory_write", {"text": "x"}, origin="", rules=rules).code == "rule_allow"
    assert decide("frobnicate", {}, origin=SHOP, rules=[dict(tool="frobnicate", origin="", verdict="allow")]).code == "policy_default"


def test_trace_explains_every_step_and_ends_with_the_deciding_one():
    d = decide("click", {"ref": "s1"}, rules=[dict(tool="click", origin="*", verdict="allow")])
    steps = [s.step for s in d.trace]
    assert steps == ["always_allowed", "destination", "sensitive_origin", "read", "rule_deny", "scope_lock",
                     "rule_ask", "untrusted_value", "sensitive_payload", "commit", "guarded_origin", "session_grant",
                     "rule_allow"]
    assert d.trace[-1].outcome == "hit" and all(s.outcome != "hit" for s in d.trace[:-1])
    assert all(s.detail for s in d.trace)


def test_every_code_is_reachable_and_listed():
    assert set(CODES) >= {"always_allowed", "read_allowed", "read_ask", "script_scheme", "sensitive_origin",
                          "guarded_origin", "rule_deny", "rule_ask", "sensitive_payload", "scope_lock",
                          "session_grant", "rule_allow", "policy_default", "ssrf_blocked", "untrusted_value"}


# -- the blocked list is no access: reads are refused there as writes are ------------------------------

BANK = "https://www.chase.com"
PAGE_READS = sorted(name for name, spec in CATALOG.items()
                    if spec.effects == "read" and not spec.originless and not spec.always_allowed)
LISTINGS = sorted(name for name, spec in CATALOG.items()
                  if spec.effects == "read" and spec.originless and not spec.always_allowed)


def test_the_catalogs_page_reads_are_the_ones_expected():
    # A new read tool of the catalog joins the tests below by itself; these must be among them.
    assert {"read_page", "read_page_deep", "screenshot", "find_in_page", "extract", "get_selection",
            "watch_page"} <= set(PAGE_READS)
    assert {"tabs_list", "history_search", "bookmarks_search"} <= set(LISTINGS)


@pytest.mark.parametrize("policy", ["always", "untrusted", "auto"])
@pytest.mark.parametrize("tool", PAGE_READS)
def test_a_read_on_a_blocked_origin_is_denied_under_every_policy(tool, policy):
    d = decide(tool, policy=policy, origin=BANK)
    assert (d.verdict, d.code, d.target_origin) == ("deny", "sensitive_origin", BANK)
    # Step 4 decides before the read step is reached.
    assert [(s.step, s.outcome) for s in d.trace] == [("always_allowed", "pass"), ("destination", "skip"),
                                                      ("sensitive_origin", "hit")]


def test_a_read_on_a_blocked_origin_is_denied_like_a_write_whatever_allows_it():
    rules = [dict(tool="*", origin="*.chase.com", verdict="allow", source="user_setting"),
             dict(tool="read_page", origin=BANK, verdict="allow", source="managed")]
    opened = dict(rules=rules, grants={("read_page", BANK), ("click", BANK)}, scope_origins={BANK}, direct=True,
                  scope_lock=OriginSet.parse(["*.chase.com"]))
    for policy in ("always", "untrusted", "auto"):
        read = decide("read_page", origin=BANK, policy=policy, **opened)
        write = decide("click", {"ref": "s1"}, origin=BANK, policy=policy, **opened)
        assert (read.verdict, read.code) == (write.verdict, write.code) == ("deny", "sensitive_origin")
    # A read the what-if marks as one (an unknown tool) is judged the same way.
    assert decide("frobnicate", origin=BANK, effects="read").code == "sensitive_origin"


def test_built_in_banks_payments_and_government_are_no_access_by_default():
    for origin in (BANK, "https://www.bankofamerica.com", "https://www.hsbc.com", "https://www.paypal.com",
                   "https://checkout.stripe.com", "https://pay.google.com", "https://www.fidelity.com",
                   "https://www.irs.gov", "https://www.gov.uk", "https://www.gov.cn",
                   "chrome-extension://abcdefghijklmnopabcdefghijklmnop/sidepanel.html"):
        for tool, params in (("read_page", {}), ("screenshot", {}), ("click", {"ref": "s1"})):
            d = decide(tool, params, origin=origin, policy="auto")
            assert (d.verdict, d.code) == ("deny", "sensitive_origin"), (origin, tool)


def test_the_reason_names_the_list_and_where_it_is_changed():
    d = decide("screenshot", origin=BANK)
    assert "blocked list (*.chase.com): no access, the agent can neither read nor change it" in d.reason, d.reason
    assert "built-in" in d.reason and "cannot be removed" in d.reason
    lists = OriginLists(blocked=["https://bank.example"])
    d = decide("read_page", origin="https://bank.example", lists=lists)
    assert (d.verdict, d.code) == ("deny", "sensitive_origin")
    assert "blocked list (https://bank.example): no access" in d.reason and "Settings → Sites" in d.reason, d.reason
    d = decide("navigate", {"url": "https://bank.example/login"}, origin=SHOP, lists=lists, policy="auto")
    assert d.reason.startswith('the destination "https://bank.example" is on') and "neither read nor change" in d.reason


def test_listings_of_the_browser_show_a_blocked_sites_title_and_url():
    # They act on no page: a tab, a history entry or a bookmark of the bank is listed by its title
    # and URL (what the tab strip shows), never read.
    for tool in LISTINGS:
        d = decide(tool, origin=BANK, policy="auto")
        assert (d.verdict, d.code, d.target_origin) == ("allow", "read_allowed", ""), tool


def test_reads_off_the_blocked_list_are_unchanged():
    deny_all = [dict(tool="*", origin="*", verdict="deny")]
    for origin in (SHOP, "https://mail.google.com", "https://evilchase.com"):
        assert decide("read_page", origin=origin, rules=deny_all,
                      scope_lock=OriginSet.parse(["*.example.org"])).code == "read_allowed"
        assert decide("screenshot", origin=origin, policy="always").code == "read_ask"
    # The guarded list still asks before changes only.
    assert decide("click", {"ref": "s1"}, origin="https://mail.google.com", policy="untrusted").code == \
        "guarded_origin"


def test_the_order_puts_the_blocked_list_before_reads():
    from host.gatekeeper import steps as S
    from host.gatekeeper.decision import STEPS

    assert STEPS.index(S.blocked_origin) < STEPS.index(S.read) < STEPS.index(S.rule_deny)
    assert STEPS.index(S.bad_destination) < STEPS.index(S.blocked_origin)
