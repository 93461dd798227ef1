"""Cases read from a stream: JSON Lines, or one JSON document spread over several lines (a
pretty-printed case), or a mix. Each case is yielded as soon as it is complete, so a caller
that writes one line at a time gets each answer at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple, TextIO

_DECODER = json.JSONDecoder()
MAX_CASE_CHARS = 256 * 1024  # a case left open does not hold every line after it


class Piece(NamedTuple):
    """One case (`value`) or why it is no case (`error`), with the line it starts on."""

    line: int
    value: Any = None
    error: str | None = None


def read_cases(stream: TextIO) -> Iterator[Piece]:
    """Every JSON value in `stream`, in order; blank lines are skipped.

    A value may span lines: brackets are counted outside strings and the value is decoded once
    they close. A line opening an object at column 0 while one is still open starts a new case
    (a JSON Lines file with one unclosed line, where nested objects of a pretty-printed case are
    indented), so one broken line never swallows the cases after it. After an error inside a
    multi-line case, its remaining lines (up to the next line opening an object) are skipped.
    """
    buffer, start, depth, skipping = "", 0, 0, False
    for number, line in enumerate(stream, start=1):
        if buffer and depth > 0 and line.startswith("{"):
            yield _unclosed(buffer, start)
            buffer = ""
        if not buffer:
            if not line.strip():
                continue
            if skipping and not line.lstrip().startswith("{"):
                continue  # the rest of a broken multi-line case (a case is an object)
            start, depth, skipping = number, 0, False
        buffer += line
        depth, open_string = _scan(line, depth)
        if len(buffer) > MAX_CASE_CHARS:
            yield Piece(start, error=f"not valid JSON: the case is still open after {MAX_CASE_CHARS} characters")
            buffer, skipping = "", True
            continue
        if depth > 0 and not open_string:
            continue  # JSON strings never hold a line break, so an open one is an error now
        piece = _decode(buffer, start) or Piece(start, error="not valid JSON: the case is not complete")
        skipping = piece.error is not None and number > start
        yield piece
        buffer = ""
    if buffer.strip():
        yield _unclosed(buffer, start, at_end=True)


def _scan(line: str, depth: int) -> tuple[int, bool]:
    """The bracket depth after `line`, and whether a string is still open at its end."""
    in_string = escaped = False
    for char in line:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return depth, in_string


def _unclosed(buffer: str, start: int, *, at_end: bool = False) -> Piece:
    piece = _decode(buffer, start)
    if piece is not None and piece.error is not None:
        return piece  # a mistake of its own, more telling than "not closed"
    where = "the input ends" if at_end else "the next case starts"
    return Piece(start, error=f"not valid JSON: {where} before this case is complete")


def _decode(buffer: str, start: int) -> Piece | None:
    """The value in `buffer`, an error, or None when more lines could still complete it."""
    text = buffer.strip()
    try:
        value, end = _DECODER.raw_decode(text)
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text):
            return None
        message = exc.msg.removesuffix(" at")  # "Unterminated string starting at" names a place itself
        return Piece(start, error=f"not valid JSON: {message} at {_where(exc, start)}")
    if text[end:].strip():
        return Piece(start, error=f"not valid JSON: more after the value at column {end + 1}")
    return Piece(start, value=value)


def _where(exc: json.JSONDecodeError, start: int) -> str:
    if exc.lineno == 1:
        return f"column {exc.colno}"
    return f"line {start + exc.lineno - 1} column {exc.colno}"
