"""The profile's memory (what the model keeps across threads) as the REPL shows it: a table of
entries and one-line answers to forget/clear. The host's `memory.*` methods hold the limits; a
refused write comes back as their structured error."""

from __future__ import annotations

from typing import Any

from host.repl import render
from host.repl.style import Style

PREVIEW_CHARS = 60


def preview(value: str) -> str:
    """A value on one line, clipped for a table cell."""
    flat = " ".join(value.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[:PREVIEW_CHARS - 3] + "..."


def chars(n: int) -> str:
    """A size in characters: `1 char`, `2,000 chars`."""
    return f"{n:,} char{'' if n == 1 else 's'}"


def table(entries: list[dict[str, Any]], style: Style) -> str:
    """Memory entries by key: a preview of each value, its size, who wrote it last and when."""
    rows = [(e.get("key"), preview(str(e.get("value", ""))), chars(len(str(e.get("value", "")))),
             e.get("source"), render.clock(e.get("updatedAt"))) for e in entries]
    total = sum(len(str(e.get("value", ""))) for e in entries)
    return render.table(rows, ("key", "value", "size", "by", "updated"), style) + \
        f"\n{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}, {chars(total)}"


def entry(e: dict[str, Any], style: Style) -> str:
    """A `memory.set` answer: the entry as stored."""
    value = str(e.get("value", ""))
    return f"remembered {e.get('key')!r} ({chars(len(value))}, by {e.get('source')}): {preview(value)}"


def forgotten(key: str):
    """The renderer of a `memory.delete` answer for `key`."""
    def show(answer: dict[str, Any], style: Style) -> str:
        return f"forgot {key!r}" if answer.get("deleted") else style(f"there was no memory {key!r}", "dim")
    return show


def cleared(answer: dict[str, Any], style: Style) -> str:
    """A `memory.clear` answer."""
    n = answer.get("cleared", 0)
    return f"forgot {n} memor{'y' if n == 1 else 'ies'}"
