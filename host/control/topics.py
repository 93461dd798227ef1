"""Event topics a control client subscribes to: exact names (`alert`), a family (`browser.*`
matches `browser.paused` and `browser.tab.updated`) or everything (`*`)."""

from __future__ import annotations

import re

MAX_TOPICS = 64
# The same shape as method names, plus the two wildcard forms.
_PATTERN = re.compile(r"^(\*|[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?)$")


def valid_pattern(pattern: str) -> bool:
    """True for `name`, `family.*` or `*` (at most 128 characters)."""
    return len(pattern) <= 128 and bool(_PATTERN.match(pattern))


def matches(pattern: str, topic: str) -> bool:
    """Whether a subscription `pattern` covers `topic`."""
    if pattern == "*" or pattern == topic:
        return True
    if pattern.endswith(".*"):
        return topic.startswith(pattern[:-1])
    return False


def any_matches(patterns: set[str], topic: str) -> bool:
    """Whether any of a client's subscriptions covers `topic`."""
    return topic in patterns or any(matches(p, topic) for p in patterns)
