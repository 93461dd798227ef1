"""Sensitive-payload detection: does a call carry secrets or personal data?

Findings (stable strings):
  card_number       a 13-19 digit card number passing Luhn (grouped with spaces or hyphens or not)
  credential_field  a parameter key such as `password`, `token`, `api_key` (at any depth)
  email_address     an e-mail address (forces an ask only towards origins outside the thread's scope)
  iban              an IBAN passing the ISO 13616 mod-97 check
  private_key       a PEM/OpenSSH/PGP private key block
  jwt               a JSON Web Token
  api_token         a well-known API token shape (AWS, GitHub, GitLab, Slack, Stripe, OpenAI-style,
                    Google, npm, Hugging Face) or a Bearer credential
Detection is strict on purpose: asking once too often beats a silent leak.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

CARD_NUMBER = "card_number"
CREDENTIAL_FIELD = "credential_field"
EMAIL_ADDRESS = "email_address"
IBAN = "iban"
PRIVATE_KEY = "private_key"
JWT = "jwt"
API_TOKEN = "api_token"
CREDENTIAL_TARGET = "credential_target"

FINDINGS: tuple[str, ...] = (CARD_NUMBER, CREDENTIAL_FIELD, EMAIL_ADDRESS, IBAN, PRIVATE_KEY, JWT, API_TOKEN,
                             CREDENTIAL_TARGET)

# Keys compared after lowercasing and dropping `_`, `-` and spaces.
CREDENTIAL_KEYS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "clientsecret", "secretkey", "token",
    "accesstoken", "refreshtoken", "idtoken", "authtoken", "sessiontoken", "bearertoken", "apikey",
    "apitoken", "privatekey", "otp", "pin", "cvv", "cvc", "ssn",
})

# A run of digits, each optionally followed by one space or hyphen. The left boundary is checked
# after the first digit (not before it) so the regex engine can skip ahead to digits quickly, and
# it is a digit boundary rather than \b so that a number glued to letters ("cc4111...") is seen.
_DIGIT_RUN = re.compile(r"[0-9](?<![0-9][0-9])(?:[ \-]?[0-9]){12,}(?![0-9])")
_GROUPS = re.compile(r"[0-9]+")
_ANY_DIGIT = re.compile(r"[0-9]")
_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}")
_IBAN = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z][0-9]{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")
_BEARER = re.compile(r"\b[Bb]earer [A-Za-z0-9._~+/\-]{20,}=*")
# Token shapes, tried only inside runs of token characters long enough to hold one: cheaper than
# scanning all text with a many-branched regex.
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-]{16,}")
_API_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"  # Slack
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}"  # OpenAI / Anthropic style
    r"|AIza[0-9A-Za-z_\-]{35}"  # Google API key
    r"|npm_[A-Za-z0-9]{36}"  # npm
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face
    r")"
)
MIN_INTERESTING_LENGTH = 13  # nothing but an e-mail address fits in fewer characters


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum used by card numbers."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1."""
    compact = text.replace(" ", "").upper()
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(number) % 97 == 1


def _has_card(text: str) -> bool:
    if _DIGIT_RUN.search(text) is None:
        return False
    for match in _DIGIT_RUN.finditer(text):
        groups = _GROUPS.findall(match.group())
        # Try every run of whole groups holding 13-19 digits, so trailing digits written as a
        # separate group ("4111 1111 1111 1111 1") cannot hide a valid number in front of them.
        for start in range(len(groups)):
            digits = ""
            for group in groups[start:]:
                digits += group
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and luhn_valid(digits):
                    return True
    return False


def _walk(value: Any, keys: list[str], texts: list[str], depth: int = 0) -> None:
    if depth > 64:  # params come from a model: bound the recursion rather than trust the shape
        texts.append(repr(value)[:10000])
        return
    if isinstance(value, str):
        texts.append(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            key = str(key)
            keys.append(key)
            if len(key) >= MIN_INTERESTING_LENGTH or "@" in key:
                texts.append(key)
            _walk(item, keys, texts, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, keys, texts, depth + 1)
    elif isinstance(value, bool) or value is None:
        return
    else:
        texts.append(str(value))


_KEY_CACHE: dict[str, bool] = {}


def normalize_key(key: str) -> str:
    """`API-Key` → `apikey`: the form compared with `CREDENTIAL_KEYS`."""
    return key.lower().replace("_", "").replace("-", "").replace(" ", "")


def is_credential_key(key: str) -> bool:
    """True for a parameter name that holds a secret (`password`, `api_key`, `Token`...)."""
    known = _KEY_CACHE.get(key)
    if known is None:
        known = normalize_key(key) in CREDENTIAL_KEYS
        if len(_KEY_CACHE) < 4096:
            _KEY_CACHE[key] = known
    return known


def _has_token(text: str) -> bool:
    for run in _TOKEN_RUN.findall(text):
        if _API_TOKEN.search(run):
            return True
    return ("earer " in text) and _BEARER.search(text) is not None


def scan_text(text: str) -> set[str]:
    """The findings in one string (keys aside)."""
    found: set[str] = set()
    if "@" in text and _EMAIL.search(text):
        found.add(EMAIL_ADDRESS)
    if len(text) < MIN_INTERESTING_LENGTH:
        return found
    if _ANY_DIGIT.search(text):
        if _has_card(text):
            found.add(CARD_NUMBER)
        if _IBAN.search(text) is not None and any(iban_valid(m.group()) for m in _IBAN.finditer(text)):
            found.add(IBAN)
    if "-----BEGIN" in text and _PRIVATE_KEY.search(text):
        found.add(PRIVATE_KEY)
    if "eyJ" in text and _JWT.search(text):
        found.add(JWT)
    if _has_token(text):
        found.add(API_TOKEN)
    return found


def scan_params(params: Mapping[str, Any] | Any) -> frozenset[str]:
    """Every finding in a call's parameters, keys and values at any depth."""
    keys: list[str] = []
    texts: list[str] = []
    _walk(params, keys, texts)
    found: set[str] = set()
    for key in keys:
        if is_credential_key(key):
            found.add(CREDENTIAL_FIELD)
            break
    for text in texts:
        found |= scan_text(text)
    return frozenset(found)


def targets_password(target: Mapping[str, Any] | None) -> bool:
    """True when the element facts say the call types into a password input."""
    if not target:
        return False
    kinds = target.get("input_types")
    single = target.get("input_type")
    values = list(kinds) if isinstance(kinds, (list, tuple)) else []
    if single is not None:
        values.append(single)
    return any(isinstance(v, str) and v.strip().lower() == "password" for v in values)


# Findings that force an ask wherever they go; an e-mail address alone only towards a third party.
ALWAYS_FORCING = frozenset(FINDINGS) - {EMAIL_ADDRESS}
