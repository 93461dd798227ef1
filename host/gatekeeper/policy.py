"""Permission policies: `always`, `untrusted` (the default) and `auto` (declared in
`protocol.permissions`), and how stored or legacy names map onto them."""

from __future__ import annotations

from protocol.permissions import DEFAULT_POLICY, PERMISSION_POLICIES as POLICIES

__all__ = ["DEFAULT_POLICY", "POLICIES", "normalize_policy", "resolve_policy"]


def normalize_policy(value: str | None, legacy_scope: str | None = None) -> str | None:
    """Map stored or legacy policy names onto the three policies.

    A legacy capability scope (or policy name) of `read-only` means `always`; the three names pass through; any
    other string (`on-request`, `never`...) becomes `untrusted`; None stays None (not set).
    """
    if legacy_scope == "read-only" or value == "read-only":
        return "always"
    if value is None:
        return None
    if value in POLICIES:
        return value
    return DEFAULT_POLICY


def resolve_policy(*candidates: str | None) -> str:
    """The first policy set among `candidates` (most specific first: turn, thread, global),
    normalised; `untrusted` when none is set."""
    for candidate in candidates:
        normalized = normalize_policy(candidate)
        if normalized is not None:
            return normalized
    return DEFAULT_POLICY
