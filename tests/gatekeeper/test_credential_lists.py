"""The page executor hides the value of the same credential fields the gatekeeper judges as
credential targets: its word lists are the host's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from host.gatekeeper.facts import credential_target as host

SCRIPT = Path(__file__).resolve().parents[2] / "extension" / "content" / "field-facts.js"


def js_list(name: str) -> set[str]:
    match = re.search(rf"const {name} = (?:new Set\()?\[(.*?)\]", SCRIPT.read_text(encoding="utf-8"), re.DOTALL)
    assert match, f"{name} not found in {SCRIPT.name}"
    return set(re.findall(r'"([^"]*)"', match.group(1)))


@pytest.mark.parametrize("name", ["CREDENTIAL_AUTOCOMPLETE", "CREDENTIAL_WORDS", "CREDENTIAL_PHRASES",
                                  "CREDENTIAL_STEMS"])
def test_the_page_and_the_host_use_the_same_lists(name):
    assert js_list(name) == set(getattr(host, name))


def test_the_card_hides_a_typed_value_only_on_the_elements_own_facts():
    from host.gatekeeper.facts.credential_target import hides_typed_value, targets_credential

    named = {"role": "textbox", "name": "Comment type=password", "label": "Comment type=password"}
    assert targets_credential(named), "judged as a credential field (stricter)..."
    assert not hides_typed_value(named), "...but its text is shown on the card: the name is the page's words"
    assert hides_typed_value({"role": "textbox", "name": "Comment", "input_type": "password"})
    assert hides_typed_value({"role": "textbox", "autocomplete": "section-a current-password"})
    assert hides_typed_value({"hints": [{"inputType": "password"}]})
    assert hides_typed_value({"input_types": ["text", "password"]})
    assert not hides_typed_value({"name": "PIN", "placeholder": "password"}) and not hides_typed_value(None)
