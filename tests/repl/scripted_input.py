"""Console input from a script: each call returns the next line, then EOF (Ctrl-D)."""

from __future__ import annotations

from typing import Callable


def scripted(lines: tuple[str, ...] | list[str]) -> Callable[[str], str]:
    """A `read_line(prompt)` that answers `lines` in order and then raises EOFError."""
    feed = iter(lines)

    def read_line(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return read_line
