"""Secrets that have no shape of their own (an AWS secret access key, a client secret, a
generated password) but sit beside a label that names them: `aws_secret_access_key = ...`,
`"client_secret": "..."`, `API key: ...`. The value must look random (mixed character classes,
high entropy) so that `password: see below` stays ordinary prose."""

from __future__ import annotations

import math
import re
from collections import Counter

_LABEL = re.compile(
    r"(?i)(?:secret|token|password|passwd|pwd|passphrase|credentials?|api[_\- ]?key|access[_\- ]?key"
    r"|private[_\- ]?key|auth(?:orization)?)[\"']?\s{0,3}(?:[:=]|=>|\bis\b)\s{0,3}[\"'`]?"
    r"(?P<value>[A-Za-z0-9+/=_\-.~!@#$%^&*]{16,512})")
# An AWS secret access key: 40 characters of base64 alphabet, standing alone.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])")
MIN_ENTROPY = 3.5  # bits per character; English words sit near 2.5-3, random base64 near 5
MIN_AWS_ENTROPY = 4.0


def entropy(text: str) -> float:
    """Shannon entropy of `text` in bits per character."""
    if not text:
        return 0.0
    total = len(text)
    return -sum(n / total * math.log2(n / total) for n in Counter(text).values())


def looks_random(value: str, minimum: float = MIN_ENTROPY) -> bool:
    """True for a value of 16+ characters mixing character classes with high entropy (long hex
    counts too: 32+ characters)."""
    if len(value) < 16:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                   any(c.isdigit() for c in value), any(not c.isalnum() for c in value)))
    if classes < 2:
        return False
    if all(c in "0123456789abcdefABCDEF" for c in value):
        return len(value) >= 32
    return entropy(value) >= minimum


def has_labelled_secret(text: str) -> bool:
    """True when `text` holds a random-looking value beside a secret's label, or an AWS secret
    access key."""
    for match in _LABEL.finditer(text):
        if looks_random(match.group("value").rstrip(".,;")):
            return True
    for match in _AWS_SECRET.finditer(text):
        value = match.group()
        if (any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
                and entropy(value) >= MIN_AWS_ENTROPY):
            return True
    return False
