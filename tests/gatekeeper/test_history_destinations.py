"""History moves and restores are judged where they lead: `go_back`/`go_forward` at the tab's
origin with the entry they reach as a destination, `session_restore` at the origin of the tab it
shows with every URL it reopens as a destination (the facts `host/browser/history.py` resolves)."""

from __future__ import annotations

import pytest

from host.gatekeeper.patterns import OriginSet
from host.gatekeeper.sensitive import OriginLists

from .conftest import decide

A = "https://shop.example"
B = "https://elsewhere.example"


def leads_to(*urls: str) -> dict:
    return {"destinations": [{"url": url} for url in urls]}


@pytest.mark.parametrize("tool", ["go_back", "go_forward"])
def test_a_move_into_another_origin_is_denied_by_the_lock_and_names_it(tool):
    decision = decide(tool, origin=A, policy="auto", scope_lock=OriginSet.parse([A]), target=leads_to(f"{B}/x"))
    assert (decision.verdict, decision.code, decision.target_origin, decision.tool) == ("deny", "scope_lock", B, tool)


@pytest.mark.parametrize("tool", ["go_back", "go_forward"])
def test_a_move_into_a_blocked_origin_is_denied(tool):
    decision = decide(tool, origin=A, policy="auto", lists=OriginLists(blocked=[B]), target=leads_to(f"{B}/x"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("deny", "sensitive_origin", B)


def test_a_move_is_denied_by_a_navigate_rule_for_where_it_leads():
    rules = [{"tool": "navigate", "origin": B, "verdict": "deny"}]
    decision = decide("go_back", origin=A, policy="auto", rules=rules, target=leads_to(f"{B}/x"))
    assert (decision.code, decision.target_origin) == ("rule_deny", B)


def test_a_move_within_the_origin_is_the_calls_own_decision():
    decision = decide("go_back", origin=A, policy="auto", scope_lock=OriginSet.parse([A]), target=leads_to(f"{A}/x"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("allow", "policy_default", A)


def test_a_restored_tab_is_judged_at_its_own_origin():
    decision = decide("session_restore", {"sessionId": "7"}, origin=B, policy="auto",
                      scope_lock=OriginSet.parse([A]), target=leads_to(f"{B}/closed"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("deny", "scope_lock", B)
    blocked = decide("session_restore", {"sessionId": "7"}, origin=B, policy="auto", lists=OriginLists(blocked=[B]),
                     target=leads_to(f"{B}/closed"))
    assert (blocked.code, blocked.target_origin) == ("sensitive_origin", B)


def test_a_restored_window_is_judged_at_every_tab_it_reopens():
    decision = decide("session_restore", {"sessionId": "9"}, origin=A, policy="auto",
                      scope_lock=OriginSet.parse([A]), target=leads_to(f"{A}/one", f"{B}/two"))
    assert (decision.verdict, decision.code, decision.target_origin) == ("deny", "scope_lock", B)


def test_a_restore_the_browser_could_not_name_asks():
    decision = decide("session_restore", {"sessionId": "7"}, origin="", policy="auto",
                      target={"destinations": [{"unresolved": True}]})
    assert (decision.verdict, decision.code) == ("ask", "unknown_destination")
