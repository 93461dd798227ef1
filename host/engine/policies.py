"""Loop policies derived from the persisted turn, so they hold across restarts:

* three consecutive counted failures → a one-time reminder to the model;
* five → the next model call gets no tools and must give its final answer (stop reason `error`);
* a success resets the count; denials and declines are not failures (they are decisions);
* the same successful call (tool + params) three times among the last six calls → a one-time
  "you may be stuck" reminder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from host.engine.records import NodeRow

REMINDER_AFTER = 3
FINAL_AFTER = 5
STUCK_REPEATS = 3
STUCK_WINDOW = 6

REMINDER_TEXT = ("The last {n} tool calls all failed. Stop and reconsider: read the page again, check refs and "
                 "parameters, try a different approach, or explain the problem to the user.")
FINAL_TEXT = ("{n} tool calls in a row failed, so tools are switched off for this turn. Give your final answer "
              "now: say what you tried, what went wrong, and what the user could do.")
STUCK_TEXT = ("You have made the same call ({tool}) with the same parameters {n} times recently. You may be "
              "stuck in a loop: change your approach or tell the user what blocks you.")


def fingerprint(tool: str, params: Any) -> str:
    """A short stable digest of a call (tool + canonical params)."""
    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(f"{tool}\x00{canonical}".encode()).hexdigest()[:24]


@dataclass
class TurnStats:
    consecutive_failures: int = 0
    reminded: bool = False
    finalised: bool = False
    stuck_warned: set[str] = field(default_factory=set)
    recent: list[tuple[str, bool, str]] = field(default_factory=list)  # (fingerprint, ok, tool)

    @property
    def needs_reminder(self) -> bool:
        """Three to four counted failures in a row and no reminder yet."""
        return REMINDER_AFTER <= self.consecutive_failures < FINAL_AFTER and not self.reminded

    @property
    def must_finalise(self) -> bool:
        """Five counted failures in a row: the next answer gets no tools."""
        return self.consecutive_failures >= FINAL_AFTER or self.finalised

    def stuck_on(self) -> tuple[str, str] | None:
        """(fingerprint, tool) of a successful call repeated too often, not yet warned about."""
        window = self.recent[-STUCK_WINDOW:]
        counts: dict[str, int] = {}
        for mark, ok, _ in window:
            if ok:
                counts[mark] = counts.get(mark, 0) + 1
        for mark, ok, tool in reversed(window):
            if ok and counts[mark] >= STUCK_REPEATS and mark not in self.stuck_warned:
                return mark, tool
        return None


def turn_stats(path: list[NodeRow], turn_id: str) -> TurnStats:
    """The policy state of `turn_id` from its nodes on the branch."""
    stats = TurnStats()
    for node in path:
        if node.turn_id != turn_id:
            continue
        if node.kind == "tool_result":
            body = node.body
            if body.ok:
                stats.consecutive_failures = 0
            elif body.counted:
                stats.consecutive_failures += 1
            stats.recent.append((body.fingerprint, body.ok, body.tool))
        elif node.kind == "system_notice":
            kind = node.body.notice_kind
            if kind == "reminder":
                stats.reminded = True
            elif kind == "final":
                stats.finalised = True
            elif kind == "stuck":
                stats.stuck_warned.add(node.body.key or "")
    return stats
