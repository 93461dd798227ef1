"""The audit trail the demo must leave, checked row by row: the proof that every step met the
gatekeeper and ended as the script expects."""

from __future__ import annotations

from typing import Any

# (kind, tool, what must match) in order; other rows may come between them.
Step = tuple[str, str, dict[str, Any]]


def expected_steps(approved: bool) -> list[Step]:
    """The rows a demo run must contain, in this order."""
    steps: list[Step] = [
        ("decision", "read_page", {"verdict": "allow"}),
        ("outcome", "read_page", {"tool_outcome": "ok"}),
        ("decision", "batch_actions", {"verdict": "ask"}),
        ("approval", "batch_actions", {"approval_decision": "accept" if approved else "decline"}),
    ]
    if approved:
        steps += [("decision", "batch_actions", {"verdict": "allow"}),
                  ("outcome", "batch_actions", {"tool_outcome": "ok"})]
    steps.append(("decision", "navigate", {"verdict": "deny", "code": "sensitive_origin"}))
    return steps


def missing_steps(rows: list[dict[str, Any]], approved: bool) -> list[str]:
    """The expected steps not found in order in `rows` (empty when the trail is complete)."""
    missing = []
    position = 0
    for kind, tool, fields in expected_steps(approved):
        for index in range(position, len(rows)):
            row = rows[index]
            if row.get("kind") == kind and row.get("tool") == tool and all(row.get(k) == v for k, v in fields.items()):
                position = index + 1
                break
        else:
            wanted = ", ".join(f"{k}={v}" for k, v in fields.items())
            missing.append(f"{kind} {tool} ({wanted})")
    return missing
