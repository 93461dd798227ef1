"""The user's own details from the engine settings (`userDetails` in engine.json), for every
thread's provenance index: a detail is the user's words in every task. The settings file is read
again only when it changes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger("tabwarden.engine")


class UserDetails:
    """The details now in force. `settings()` gives the engine settings; `path()`, when given,
    names the file they come from, so that an unchanged file is not parsed again."""

    def __init__(self, settings: Callable[[], Any], path: Callable[[], Path | None] | None = None) -> None:
        self._settings = settings
        self._path = path
        self._seen: tuple[float, int] | None = None
        self._details: tuple[str, ...] = ()

    def current(self) -> tuple[str, ...]:
        """The user's details; the last good ones while the settings cannot be read."""
        from host.config_files import ConfigFileError

        file = self._path() if self._path is not None else None
        if file is not None:
            try:
                stat = file.stat()
                mark: tuple[float, int] | None = (stat.st_mtime, stat.st_size)
            except OSError:
                mark = None
            if mark is not None and mark == self._seen:
                return self._details
            self._seen = mark
        try:
            self._details = tuple(self._settings().user_details)
        except ConfigFileError:
            log.warning("the engine settings cannot be read: the user's details stay as they were", exc_info=True)
        return self._details
