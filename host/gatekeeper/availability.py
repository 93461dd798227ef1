"""Whether the gatekeeper may judge calls, and who to tell when what it judges by changes.

Fail closed: once any part of the permission state could not be loaded or saved, the recorded
error makes every later check raise `GatekeeperUnavailable` (the engine then treats the call as
denied). The parts that keep their own error (session grants, thread scopes) are read through
`sources`, so a failure there counts as well.
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
        """Raise `GatekeeperUnavailable` when any error is recorded."""
        error = self.error
        if error is not None:
            raise GatekeeperUnavailable(f"permission state is unavailable: {error}")

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
