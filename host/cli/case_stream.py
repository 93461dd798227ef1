"""Cases read from a stream: JSON Lines, or one JSON document spread over several lines (a
pretty-printed case), or a mix. Each case is yielded as soon as it is complete, so a caller
that writes one line at a time gets each answer at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple, TextIO

_DECODER = json.JSONDecoder()


class Piece(NamedTuple):
    """One case (`value`) or why it is no case (`error`), with the line it starts on."""

    line: int
    value: Any = None
    error: str | None = None


def read_cases(stream: TextIO) -> Iterator[Piece]:
    """Every JSON value in `stream`, in order; blank lines are skipped.

    A value may span lines. When a line fails to complete the value before it and itself starts
    a new object, the unfinished value is reported as an error and reading goes on from that
    line, so one broken line never swallows the cases after it.
    """
    buffer, start, skipping = "", 0, False
    for number, line in enumerate(stream, start=1):
        if not buffer:
            if not line.strip():
                continue
            if skipping and not line.lstrip().startswith("{"):
                continue  # the rest of a broken multi-line case (a case is an object)
            start, skipping = number, False
        buffer += line
        piece = _decode(buffer, start)
        if piece is None:
            continue  # not complete yet
        if piece.error is not None and number > start and line.lstrip().startswith("{"):
            # The previous case was never closed: report it and start again at this line.
            yield Piece(start, error="not valid JSON: the case ends before it is complete")
            buffer, start = line, number
            piece = _decode(buffer, start)
            if piece is None:
                continue
        skipping = piece.error is not None and number > start
        yield piece
        buffer = ""
    if buffer.strip():
        yield Piece(start, error="not valid JSON: the input ends before the case is complete")


def _decode(buffer: str, start: int) -> Piece | None:
    """The value in `buffer`, an error, or None when more lines could still complete it."""
    text = buffer.strip()
    try:
        value, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text):
            return None
        return Piece(start, error=f"not valid JSON: {exc.msg} at {_where(exc, start)}")
    if text[end:].strip():
        return Piece(start, error=f"not valid JSON: more after the value at column {end + 1}")
    return Piece(start, value=value)


def _where(exc: json.JSONDecodeError, start: int) -> str:
    if exc.lineno == 1:
        return f"column {exc.colno}"
    return f"line {start + exc.lineno - 1} column {exc.colno}"
