"""Decision reasons are read by people (on cards, in the REPL and the audit): they name a policy
by the name the pages give it and a payload finding in words, while the codes stay as they were."""

from __future__ import annotations

import pytest

from protocol.permissions import POLICY_LABELS

from host.gatekeeper.decision import Call, Context, check


@pytest.mark.parametrize("policy, verdict", [("untrusted", "ask"), ("auto", "allow")])
def test_a_policy_default_names_the_policy_as_the_pages_do(policy, verdict):
    decision = check(Call("click", {"ref": "s1_1_1", "element": "Buy"}), Context(origin="https://shop.example", policy=policy))
    assert (decision.verdict, decision.code) == (verdict, "policy_default")
    assert f"the “{POLICY_LABELS[policy]}” policy" in decision.reason
    assert f"{policy} policy" not in decision.reason
    assert all(f"{policy} policy" not in step.detail for step in decision.trace)


def test_reads_under_ask_always_name_it():
    decision = check(Call("read_page", {}), Context(origin="https://shop.example", policy="always"))
    assert (decision.verdict, decision.code) == ("ask", "read_ask")
    assert decision.reason == 'the “Ask always” policy asks before read_page reads "https://shop.example"'


def test_a_sensitive_payload_says_what_it_carries_in_words():
    decision = check(Call("type", {"ref": "s1_1_1", "element": "Card", "text": "4111 1111 1111 1111"}),
                     Context(origin="https://shop.example"))
    assert (decision.verdict, decision.code) == ("ask", "sensitive_payload")
    assert decision.findings == ("card_number",)
    assert "the parameters carry a card number, bound for" in decision.reason
    assert "card_number" not in decision.reason
