"""Whether the gatekeeper may judge calls, and who to tell when what it judges by changes.

Fail closed: once any part of the permission state could not be loaded or saved, the recorded
error makes every later check raise `GatekeeperUnavailable` (the engine then treats the call as
denied). The parts that keep their own error (session grants, thread scopes) are read through
`sources`, so a failure there counts as well. A storage error is not for life: the `healer` (see
`healing`) is given a chance before each refusal, and clears the errors once the database answers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from host.gatekeeper.errors import GatekeeperUnavailable

log = logging.getLogger("tabwarden.gatekeeper")


class Availability:
    """The gatekeeper's own error, the errors of the parts it reads, and the change listeners."""

    def __init__(self) -> None:
        self._error: Exception | None = None
        self._sources: list[Callable[[], Exception | None]] = []
        # Told when where a thread may go changes (the navigation guard keeps the browser in step).
        self._listeners: list[Callable[[], None]] = []
        self._changes = 0
        self.healer: Callable[[], bool] | None = None  # tries to open again; True when open

    def add_source(self, source: Callable[[], Exception | None]) -> None:
        """Count `source()` (a part's own storage error, read at each use) as unavailability."""
        self._sources.append(source)

    @property
    def error(self) -> Exception | None:
        """Why the gatekeeper is unavailable (None when it works)."""
        if self._error is not None:
            return self._error
        for source in self._sources:
            error = source()
            if error is not None:
                return error
        return None

    def fail(self, exc: Exception) -> GatekeeperUnavailable:
        """Record `exc` so that every later use fails closed; return the error to raise now."""
        self._error = exc
        return GatekeeperUnavailable(f"permission state is unavailable: {exc}")

    def mark_unavailable(self, reason: Exception) -> None:
        """Fail closed from now on, and tell the listeners (where a thread may go changed)."""
        self._error = reason
        self.changed()

    def raise_if_unavailable(self) -> None:
        """Raise `GatekeeperUnavailable` when any error is recorded (after the healer, if one is
        set, had its chance to clear it)."""
        error = self.error
        if error is not None and self.healer is not None and self.healer():
            error = self.error
        if error is not None:
            raise GatekeeperUnavailable(f"permission state is unavailable: {error}") from error

    def errors(self) -> list[Exception]:
        """Every recorded error: the gatekeeper's own and its parts'."""
        found = [self._error] if self._error is not None else []
        return found + [e for e in (source() for source in self._sources) if e is not None]

    def clear(self) -> None:
        """Forget the gatekeeper's own error (the healer does, once the parts reloaded), and
        tell the listeners that where threads may go is known again."""
        self._error = None
        self.changed()

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call `listener` after every `changed()`."""
        self._listeners.append(listener)

    @property
    def changes(self) -> int:
        """How many changes happened (a cheap way to tell that a computed reach is stale)."""
        return self._changes

    def changed(self) -> None:
        """Count a change and tell every listener; a failing listener is logged, never raised,
        because the change itself has already happened."""
        self._changes += 1
        for listener in list(self._listeners):
            try:
                listener()
            except Exception:
                log.exception("a gatekeeper change listener failed")
