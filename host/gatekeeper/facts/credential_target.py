"""Is the element a call types into a credential field? Judged on the facts the host holds about
it, never on the model's description: a password input, an `autocomplete` token for a password,
a one-time code or card data, or a field name, label or placeholder that names one ("Account
password", `name="passwd"`, "PIN", "CVV").

The page executor keeps the same word lists (`extension/content/field-facts.js`) so that such a
field's value is never shown in a snapshot nor sent to the host; a test holds the lists equal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from host.gatekeeper.facts.normalize import LOOKALIKES, fold

# `autocomplete` tokens (HTML autofill detail tokens) whose field holds a secret.
CREDENTIAL_AUTOCOMPLETE = frozenset({
    "current-password", "new-password", "one-time-code", "cc-number", "cc-csc", "cc-exp", "cc-exp-month",
    "cc-exp-year",
})
# Whole words of a name, label or placeholder that name a credential.
CREDENTIAL_WORDS = frozenset({
    "password", "passwort", "passwd", "pwd", "passcode", "passphrase", "pin", "cvv", "cvv2", "cvc", "cvc2",
    "csc", "otp", "totp", "2fa", "mfa", "ssn",
})
# Word pairs that name one ("security code", "card number").
CREDENTIAL_PHRASES = frozenset({
    "security code", "verification code", "one time code", "card number", "credit card", "debit card",
    "card verification", "secret key", "api key", "access token", "recovery code", "backup code",
})
# Inside a longer identifier (`userPassword`, `new_passwd`): only unambiguous stems.
CREDENTIAL_STEMS = ("password", "passwd", "passphrase", "passcode", "cardnumber", "ccnumber", "cvv", "cvc")

_FACT_KEYS = ("name", "label", "placeholder", "field_name", "fieldName", "id")
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def is_credential_autocomplete(value: str) -> bool:
    """True when an `autocomplete` attribute (space-separated tokens) names a credential."""
    return any(token in CREDENTIAL_AUTOCOMPLETE for token in value.lower().split())


def names_credential(text: str) -> bool:
    """True when a field's name, label or placeholder names a credential."""
    if not text:
        return False
    words = _WORD.findall(fold(_CAMEL.sub(" ", text)).translate(LOOKALIKES))
    if any(word in CREDENTIAL_WORDS for word in words):
        return True
    joined = " ".join(words)
    if any(phrase in joined for phrase in CREDENTIAL_PHRASES):
        return True
    squeezed = "".join(words)
    return any(stem in squeezed for stem in CREDENTIAL_STEMS)


def is_credential_element(facts: Mapping[str, Any]) -> bool:
    """True when one element's facts (a ref hint, or the what-if `target`) mark a credential."""
    kind = facts.get("input_type") or facts.get("inputType")
    if isinstance(kind, str) and kind.strip().lower() == "password":
        return True
    if facts.get("credential") is True:
        return True
    auto = facts.get("autocomplete")
    if isinstance(auto, str) and is_credential_autocomplete(auto):
        return True
    return any(isinstance(facts.get(key), str) and names_credential(facts[key]) for key in _FACT_KEYS)


def targets_credential(target: Mapping[str, Any] | None) -> bool:
    """True when the call's target facts say it acts on a credential field (any of its elements,
    for a batch)."""
    if not isinstance(target, Mapping):
        return False
    kinds = target.get("input_types")
    if isinstance(kinds, (list, tuple)) and any(isinstance(k, str) and k.strip().lower() == "password" for k in kinds):
        return True
    if is_credential_element(target):
        return True
    return any(is_credential_element(hint) for hint in _hints(target.get("hints")))


def hides_typed_value(target: Mapping[str, Any] | None) -> bool:
    """True when the approval card may hide what the call types: the element itself is a password
    input or carries a credential `autocomplete` token (any of a batch's elements). Never from a
    name, label or placeholder: those are the page's words, and a page that calls a comment box
    "Comment type=password" must not get the user to approve text they cannot see."""
    if not isinstance(target, Mapping):
        return False
    kinds = target.get("input_types")
    if isinstance(kinds, (list, tuple)) and any(isinstance(k, str) and k.strip().lower() == "password" for k in kinds):
        return True
    return any(_element_hides(facts) for facts in (target, *_hints(target.get("hints"))))


def _element_hides(facts: Mapping[str, Any]) -> bool:
    kind = facts.get("input_type") or facts.get("inputType")
    if isinstance(kind, str) and kind.strip().lower() == "password":
        return True
    auto = facts.get("autocomplete")
    return isinstance(auto, str) and is_credential_autocomplete(auto)


def _hints(value: Any) -> Iterable[Mapping[str, Any]]:
    if isinstance(value, (list, tuple)):
        return [hint for hint in value if isinstance(hint, Mapping)]
    return ()
