"""The authorisation revision: a short string that changes when anything an approval relied on
changes (the policy, the rules, the user's blocked and guarded lists).

At dispatch the engine re-checks the call; an ASK there passes only if the revision still equals
the one the user approved. An approval's own `acceptForSite` rule must not break that: the
comparison also accepts the revision computed without the rules that approval created.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import msgspec

from host.gatekeeper.rules import Rule

_encoder = msgspec.json.Encoder(order="sorted")


def rules_digest(rules: Iterable[Rule], *, exclude_approval: str | None = None) -> str:
    """A digest of a rule list (order-independent), optionally without one approval's rules."""
    bodies = sorted(_encoder.encode(r) for r in rules
                    if exclude_approval is None or r.source_approval_id != exclude_approval)
    digest = hashlib.sha256()
    for body in bodies:
        digest.update(body)
        digest.update(b"\n")
    return digest.hexdigest()[:16]


def authorization_revision(policy: str, rules_digest: str, lists_digest: str) -> str:
    """`<policy>:<hash>`: readable enough to tell which policy an approval was given under."""
    digest = hashlib.sha256(f"{policy}|{rules_digest}|{lists_digest}".encode()).hexdigest()[:20]
    return f"{policy}:{digest}"
