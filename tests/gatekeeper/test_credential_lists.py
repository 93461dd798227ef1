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
