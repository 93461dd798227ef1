"""Where an element leads is judged too: a write on a link or a form field whose destination is
another origin is also judged as a navigation there and as the same call at that origin; the
strictest answer wins and names the destination's origin."""

from __future__ import annotations

import pytest

from host.gatekeeper.patterns import OriginSet, parse_origin_pattern
from host.gatekeeper.sensitive import OriginLists

from .conftest import decide

A = "https://shop.example"
B = "https://pay.attacker.example"


def lock(*patterns: str) -> OriginSet:
    return OriginSet(tuple(parse_origin_pattern(p) for p in patterns))


def leads_to(url: str, **more) -> dict:
    return {"destinations": [{"url": url, **more}]}


def test_a_link_to_a_blocked_origin_is_denied_and_names_it():
    decision = decide("click", {"element": "Pay", "ref": "s1_1_1"}, origin=A, policy="auto",
                      lists=OriginLists(blocked=[B]), target=leads_to(f"{B}/checkout"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("deny", "sensitive_origin", B)
    assert any(step.step == "destinations" for step in decision.trace)


def test_a_link_out_of_the_scope_lock_is_denied():
    decision = decide("click", origin=A, policy="auto", scope_lock=lock(A), target=leads_to(f"{B}/x"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("deny", "scope_lock", B)


def test_the_same_origin_changes_nothing():
    plain = decide("click", origin=A, policy="auto", scope_lock=lock(A))
    same = decide("click", origin=A, policy="auto", scope_lock=lock(A), target=leads_to(f"{A}/next"))
    assert (same.verdict, same.code, same.target_origin) == (plain.verdict, plain.code, plain.target_origin) == \
        ("allow", "policy_default", A)


def test_a_card_number_typed_into_a_form_posting_elsewhere_asks_there():
    text = "4111 1111 1111 1111"
    here = decide("type", {"element": "Card", "ref": "s1_1_1", "text": text}, origin=A, policy="auto",
                  rules=[{"tool": "type", "origin": A, "verdict": "allow"}])
    assert here.verdict == "ask" and here.code == "sensitive_payload"
    there = decide("type", {"element": "Name", "ref": "s1_1_1", "text": "Grace Hopper"}, origin=A, policy="auto",
                   rules=[{"tool": "type", "origin": A, "verdict": "allow"}],
                   target=leads_to(f"{B}/collect", method="POST"))
    assert there.verdict == "allow"  # nothing sensitive, auto policy: it may go
    sent = decide("type", {"element": "Card", "ref": "s1_1_1", "text": text}, origin=A, policy="auto",
                  target=leads_to(f"{B}/collect", method="POST"))
    assert (sent.verdict, sent.code, sent.target_origin) == ("ask", "sensitive_payload", B)


def test_an_email_bound_for_a_third_party_asks_even_when_the_tab_is_trusted():
    params = {"element": "Email", "ref": "s1_1_1", "text": "grace@example.org"}
    assert decide("type", params, origin=A, policy="auto", scope_origins={A}).verdict == "allow"
    decision = decide("type", params, origin=A, policy="auto", scope_origins={A}, target=leads_to(f"{B}/sub"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("ask", "sensitive_payload", B)


def test_navigate_rules_apply_to_where_a_click_leads():
    rules = [{"tool": "navigate", "origin": B, "verdict": "deny"}]
    decision = decide("click", origin=A, policy="auto", rules=rules, target=leads_to(f"{B}/"))
    assert (decision.verdict, decision.code, decision.tool) == ("deny", "rule_deny", "click")


@pytest.mark.parametrize("url,code", [("javascript:steal()", "script_scheme"), ("http://[bad", "invalid_destination")])
def test_script_and_invalid_destinations_are_denied_like_navigations(url, code):
    decision = decide("click", origin=A, policy="auto", target=leads_to(url))
    assert (decision.verdict, decision.code) == ("deny", code)


def test_an_unresolved_destination_asks_never_allows():
    decision = decide("click", origin=A, policy="auto", target={"destinations": [{"unresolved": True}]})
    assert (decision.verdict, decision.code) == ("ask", "unknown_destination")


def test_a_guarded_destination_asks_with_its_flag():
    decision = decide("click", origin=A, policy="auto", lists=OriginLists(guarded=[B]), target=leads_to(f"{B}/"))
    assert decision.verdict == "ask" and "guarded_origin" in decision.flags and decision.target_origin == B


def test_reads_and_already_denied_calls_are_not_judged_again():
    read = decide("read_page", origin=A, policy="auto", lists=OriginLists(blocked=[B]), target=leads_to(f"{B}/"))
    assert read.code == "read_allowed"
    own = decide("click", origin=B, policy="auto", lists=OriginLists(blocked=[B]), target=leads_to(f"{A}/"))
    assert (own.code, own.target_origin) == ("sensitive_origin", B)


def test_a_single_destination_and_method_are_accepted_as_in_what_if_cases():
    decision = decide("click", origin=A, policy="auto", scope_lock=lock(A),
                      target={"destination": f"{B}/pay", "method": "POST"})
    assert (decision.code, decision.target_origin) == ("scope_lock", B)
