"""Masking secrets before parameters are written anywhere (the audit log above all)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from host.gatekeeper.facts import payload as P
from host.gatekeeper.facts.credential_target import targets_credential
from host.gatekeeper.facts.account_numbers import has_card, iban_valid

MASK = "[redacted]"
_PEM_BLOCK = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*-----|$)",
                        re.DOTALL)
_IBAN = re.compile(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b")
_TYPED_KEYS = frozenset({"text", "value", "values", "keys", "key"})


_CARD_RUN = re.compile(r"[0-9](?:[ .\-/_]{0,3}[0-9]){12,}")
# What a masked text may still hold: an e-mail address is kept on purpose (the audit must say
# where a message went), a credential key is masked by key.
_KEPT = frozenset({P.EMAIL_ADDRESS, P.CREDENTIAL_FIELD})


def _mask_cards(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        return f"[redacted:{P.CARD_NUMBER}]" if has_card(match.group()) else match.group()
    return _CARD_RUN.sub(replace, text)


def redact_text(text: str) -> str:
    """`text` with card numbers, IBANs, private keys, JWTs and API tokens masked. A secret that
    is disguised (other scripts' digits, encoded, split by odd separators) masks the whole text."""
    if len(text) < P.MIN_INTERESTING_LENGTH:
        return text
    if "-----BEGIN" in text:
        text = _PEM_BLOCK.sub(f"[redacted:{P.PRIVATE_KEY}]", text)
    if "eyJ" in text:
        text = P._JWT.sub(f"[redacted:{P.JWT}]", text)
    text = P._API_TOKEN.sub(f"[redacted:{P.API_TOKEN}]", text)
    text = P._BEARER.sub(f"Bearer [redacted:{P.API_TOKEN}]", text)
    text = _IBAN.sub(lambda m: f"[redacted:{P.IBAN}]" if iban_valid(m.group()) else m.group(), text)
    text = _mask_cards(text)
    left = P.scan_text(text) - _KEPT
    if left:
        return f"[redacted:{','.join(sorted(left))}]"
    return text


def redact(params: Any, target: Mapping[str, Any] | None = None) -> Any:
    """A JSON-ready copy of `params` with secrets masked: values under credential keys, text
    typed into a password field (per `target`; at any depth, for batches), and secret-shaped
    substrings anywhere."""
    return _redact(params, targets_credential(target), 0)


def _redact(value: Any, password_target: bool, depth: int) -> Any:
    if depth > 64:
        return MASK
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            key = str(key)
            if P.is_credential_key(key) or (password_target and key.lower() in _TYPED_KEYS):
                out[key] = MASK
            else:
                out[key] = _redact(item, password_target, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_redact(item, password_target, depth + 1) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        text = str(value)
        masked = redact_text(text)
        return value if masked == text else masked
    return redact_text(str(value))
