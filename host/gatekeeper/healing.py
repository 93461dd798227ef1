"""Fail closed, then heal: after a storage error the gatekeeper refuses every call, and opens
again by itself once the database answers, without a restart.

    a storage error   ->  closed: every check raises `GatekeeperUnavailable` (the call is denied,
                          nothing runs), the cause is shown to the user
    while closed      ->  an attempt at most every `delay` (0.25 s, doubling to 8 s), made by
                          the next check and by the host's own timer:
                            1 the database takes a small write now (no wait for the busy timeout)
                            2 the audit log's last rows still chain (nothing was half-written)
                            3 every part loads what it holds again (rules, lists, grants, scopes)
                          then it opens; a failing step keeps it closed, with that step's cause
    not healed here   ->  a store that never opened, a policy file that does not load, an audit
                          chain that does not verify: they stay closed until fixed

A backup tool or a sync client that holds the database for a few seconds, a disk that filled up
and was cleared, a folder made read-only and back: each closes the gatekeeper for the fault's
length plus at most one delay.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from host.gatekeeper.errors import GatekeeperUnavailable, is_storage_error

__all__ = ["FIRST_DELAY_S", "MAX_DELAY_S", "Healer", "is_storage_error", "plain_cause"]

FIRST_DELAY_S = 0.25
MAX_DELAY_S = 8.0


_HINTS = (
    ("locked", "another program is using the database"),
    ("full", "the disk is full"),
    ("readonly", "the data folder cannot be written"),
    ("unable to open", "the data folder cannot be written"),
    ("not a database", "the database file is damaged: move it aside or restore a backup, and the host opens it by itself"),
    ("malformed", "the database file is damaged: move it aside or restore a backup, and the host opens it by itself"),
)


def plain_cause(text: str) -> str:
    """A storage failure as a person reads it: SQLite's words without the layers' prefixes and
    the file's path, and what it usually means ("database is locked (another program is using
    the database)")."""
    cause = text.rsplit(": ", 1)[-1].strip() or text
    hint = next((words for needle, words in _HINTS if needle in cause.lower()), None)
    return f"{cause} ({hint})" if hint else cause


class Healer:
    """The attempts to open again, spaced by a growing delay."""

    def __init__(self, steps: Callable[[], None], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._steps = steps  # probe, verify, reload: raises with the cause when one fails
        self._clock = clock
        self._delay = FIRST_DELAY_S
        self._next_at = 0.0
        self.attempts = 0
        self.last_cause: str | None = None

    def due(self) -> bool:
        """Whether an attempt may be made now."""
        return self._clock() >= self._next_at

    def attempt(self) -> bool:
        """Run the steps once; True when they all passed (the delay starts over), else the next
        attempt waits twice as long as this one did."""
        self.attempts += 1
        try:
            self._steps()
        except (GatekeeperUnavailable, OSError, RuntimeError, ValueError) as exc:
            self.last_cause = str(exc)
            self._next_at = self._clock() + self._delay
            self._delay = min(self._delay * 2, MAX_DELAY_S)
            return False
        self.last_cause = None
        self._delay = FIRST_DELAY_S
        self._next_at = 0.0
        return True
