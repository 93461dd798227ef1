"""Sensitive-payload detection: does a call carry secrets or personal data?

Findings (stable strings):
  card_number       a 13-19 digit card number passing Luhn, however grouped or written
  credential_field  a parameter key such as `password`, `token`, `api_key` (at any depth), a URL
                    query or fragment key of that kind, or a password in a URL's userinfo
  email_address     an e-mail address (forces an ask only towards origins outside the thread's scope)
  iban              an IBAN of a known country passing the ISO 13616 mod-97 check
  private_key       a PEM/OpenSSH/PGP/PuTTY private key, or a private key's encoded body
  jwt               a JSON Web Token
  api_token         a well-known API token shape (AWS, GitHub, GitLab, Slack, Stripe, OpenAI-style,
                    Google, npm, Hugging Face), or a Bearer or Basic credential
  secret_value      a random-looking value beside a secret's label, or an AWS secret access key
  credential_target the call types into a credential field (added by the decision, from facts)

Every text is looked at as written and in its folded form (`normalize.fold`: fullwidth and
other scripts' digits, NBSP and other separators, case, zero-width characters and
percent-encoding undone); base64 and hex tokens are decoded and looked at again; URLs are
looked at part by part. Detection is strict on purpose: asking once too often beats a silent leak.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from host.gatekeeper.facts.account_numbers import has_card, has_iban, iban_valid, luhn_valid
from host.gatekeeper.facts.encoded import decoded_private_key, decoded_texts, from_base64
from host.gatekeeper.facts.labelled_secrets import has_labelled_secret
from host.gatekeeper.facts.normalize import fold, plain, skeleton
from host.gatekeeper.facts.url_parts import url_parts

__all__ = ["scan_text", "scan_params", "scan_texts", "is_credential_key", "normalize_key", "luhn_valid",
           "iban_valid", "FINDINGS", "ALWAYS_FORCING"]

CARD_NUMBER = "card_number"
CREDENTIAL_FIELD = "credential_field"
EMAIL_ADDRESS = "email_address"
IBAN = "iban"
PRIVATE_KEY = "private_key"
JWT = "jwt"
API_TOKEN = "api_token"
SECRET_VALUE = "secret_value"
CREDENTIAL_TARGET = "credential_target"

FINDINGS: tuple[str, ...] = (CARD_NUMBER, CREDENTIAL_FIELD, EMAIL_ADDRESS, IBAN, PRIVATE_KEY, JWT, API_TOKEN,
                             SECRET_VALUE, CREDENTIAL_TARGET)

# Keys compared in their compact form (`normalize.compact`: case, separators, encodings dropped).
CREDENTIAL_KEYS = frozenset({
    "password", "passwd", "pwd", "passphrase", "secret", "clientsecret", "secretkey", "token",
    "accesstoken", "refreshtoken", "idtoken", "authtoken", "sessiontoken", "bearertoken", "apikey",
    "apitoken", "privatekey", "otp", "pin", "cvv", "cvc", "ssn",
})
# A key ending in one of these holds a secret too (`user_password`, `aws_secret_access_key`).
CREDENTIAL_KEY_ENDINGS = ("password", "passwd", "passphrase", "secret", "secretkey", "secretaccesskey", "apikey",
                          "privatekey", "accesstoken", "refreshtoken", "authtoken", "sessiontoken", "apitoken")

# `bob [at] example (dot) com`: brackets make the words unambiguous, bare " at " would not be.
_AT_WORD = re.compile(r"\s*[\[({<]\s*at\s*[\])}>]\s*")
_DOT_WORD = re.compile(r"\s*[\[({<]\s*dot\s*[\])}>]\s*")
_EMAIL = re.compile(r"[a-z0-9._%+\-]+@[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9\-]+)*\.[a-z]{2,}")
_PRIVATE_KEY = re.compile(r"-----begin (?:[a-z0-9]+ )*private key(?: block)?-----|putty-user-key-file-[0-9]")
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")
_BEARER = re.compile(r"\b[Bb]earer [A-Za-z0-9._~+/\-]{20,}=*")
_BASIC = re.compile(r"\b[Bb]asic ([A-Za-z0-9+/]{8,}={0,2})")
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
MAX_DECODE_DEPTH = 2  # base64 inside hex inside base64 is as deep as anyone goes
MAX_SCANNED = 200_000  # characters of one text; a longer one is looked at in its first part


def normalize_key(key: str) -> str:
    """`API-Key` → `apikey`: the form compared with `CREDENTIAL_KEYS` (lookalike letters of other
    scripts read as Latin)."""
    return skeleton(key)


_KEY_CACHE: dict[str, bool] = {}


def is_credential_key(key: str) -> bool:
    """True for a parameter or query key that holds a secret (`password`, `api_key`, `Token`,
    `user_password`, `pass%77ord`...)."""
    known = _KEY_CACHE.get(key)
    if known is None:
        form = normalize_key(key)
        known = form in CREDENTIAL_KEYS or form.endswith(CREDENTIAL_KEY_ENDINGS)
        if len(_KEY_CACHE) < 4096:
            _KEY_CACHE[key] = known
    return known


def _has_token(text: str) -> bool:
    for run in _TOKEN_RUN.findall(text):
        if _API_TOKEN.search(run):
            return True
    if "earer " in text and _BEARER.search(text) is not None:
        return True
    return "asic " in text and any(_is_basic_credential(m.group(1)) for m in _BASIC.finditer(text))


def _is_basic_credential(token: str) -> bool:
    # `Basic <base64 of user:password>`, as an Authorization header carries it.
    data = from_base64(token)
    return data is not None and b":" in data and data.isascii() and data.decode("ascii").isprintable()


def scan_text(text: str) -> set[str]:
    """The findings in one string (its own keys aside): as written, folded, decoded and, for
    URLs, part by part."""
    if len(text) <= MAX_CACHED:
        return set(_scan_short(text))
    return _scan(text[:MAX_SCANNED], 0)


MAX_CACHED = 512  # element descriptions, refs and short texts recur from call to call


@lru_cache(maxsize=4096)
def _scan_short(text: str) -> frozenset[str]:
    return frozenset(_scan(text, 0))


def _scan(text: str, depth: int) -> set[str]:
    found: set[str] = set()
    cased = plain(text)
    folded = fold(text)
    if "at" in folded and _AT_WORD.search(folded):
        folded = _DOT_WORD.sub(".", _AT_WORD.sub("@", folded))
    if "@" in folded and _EMAIL.search(folded):
        found.add(EMAIL_ADDRESS)
    if len(folded) < MIN_INTERESTING_LENGTH and len(text) < MIN_INTERESTING_LENGTH:
        return found
    if any("0" <= ch <= "9" for ch in folded):
        if has_card(folded):
            found.add(CARD_NUMBER)
        if has_iban(folded):
            found.add(IBAN)
    if ("-----begin" in folded or "putty-user-key-file" in folded) and _PRIVATE_KEY.search(folded):
        found.add(PRIVATE_KEY)
    elif decoded_private_key(cased):
        found.add(PRIVATE_KEY)
    if "eyJ" in cased and _JWT.search(cased):
        found.add(JWT)
    if _has_token(cased) or (cased != text and _has_token(text)):
        found.add(API_TOKEN)
    if has_labelled_secret(cased):
        found.add(SECRET_VALUE)
    parts = url_parts(text)
    if parts is not None:
        if parts.userinfo_password or any(is_credential_key(key) for key in parts.keys):
            found.add(CREDENTIAL_FIELD)
        for part in parts.texts:
            if part != text:
                found |= _scan(part, MAX_DECODE_DEPTH)  # parts are decoded already; no deeper
    if depth < MAX_DECODE_DEPTH:
        for decoded in decoded_texts(cased):
            found |= _scan(decoded, depth + 1)
    return found


def scan_texts(texts: Iterable[str]) -> frozenset[str]:
    """Every finding in some texts (the values fields will hold, for instance)."""
    found: set[str] = set()
    for text in texts:
        found |= scan_text(text)
    return frozenset(found)


def _walk(value: Any, keys: list[str], texts: list[str], depth: int = 0) -> None:
    if depth > 64:  # params come from a model: bound the recursion rather than trust the shape
        texts.append(repr(value)[:10000])
        return
    if isinstance(value, str):
        texts.append(value)
    elif type(value) is dict or isinstance(value, Mapping):  # the exact type first: abc checks cost
        for key, item in value.items():
            key = str(key)
            keys.append(key)
            if len(key) >= MIN_INTERESTING_LENGTH or "@" in key or "%" in key or not key.isascii():
                texts.append(key)
            _walk(item, keys, texts, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _walk(item, keys, texts, depth + 1)
    elif value is None or isinstance(value, bool):
        return
    else:
        texts.append(str(value))


def scan_params(params: Mapping[str, Any] | Any) -> frozenset[str]:
    """Every finding in a call's parameters, keys and values at any depth."""
    keys: list[str] = []
    texts: list[str] = []
    _walk(params, keys, texts)
    found: set[str] = set()
    if any(is_credential_key(key) for key in keys):
        found.add(CREDENTIAL_FIELD)
    return frozenset(found | scan_texts(texts))


# Findings that force an ask wherever they go; an e-mail address alone only towards a third party.
ALWAYS_FORCING = frozenset(FINDINGS) - {EMAIL_ADDRESS}
