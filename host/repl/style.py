"""Terminal colours for REPL output: on for a terminal, off for pipes, `NO_COLOR` or `TERM=dumb`."""

from __future__ import annotations

import os
import sys

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35",
          "cyan": "36"}


def colour_enabled(stream=None) -> bool:
    """Whether to colour text written to `stream` (stdout by default)."""
    stream = stream or sys.stdout
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class Style:
    """Wraps text in ANSI colours, or returns it unchanged when colour is off."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = colour_enabled() if enabled is None else enabled

    def __call__(self, text: str, *names: str) -> str:
        if not self.enabled or not names:
            return text
        codes = ";".join(_CODES[n] for n in names)
        return f"\x1b[{codes}m{text}\x1b[0m"


PLAIN = Style(False)
