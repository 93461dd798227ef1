"""Invisible and reordering characters are shown as markers, everything else as typed; the
ranges cover every control, format character and bidi control Unicode declares, and the pages
get the same ranges from protocol.js."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from protocol.generate import ui_export
from protocol.visible_text import INVISIBLE_RANGES, marker, visible

BIDI_CONTROLS = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}


def invisible(code: int) -> bool:
    return any(start <= code <= end for start, end in INVISIBLE_RANGES)


def test_every_control_format_separator_and_bidi_control_is_marked():
    missing = []
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        kind = unicodedata.category(char)
        wanted = (kind in ("Cf", "Zl", "Zp") or (kind == "Cc" and char not in "\t\n")
                  or unicodedata.bidirectional(char) in BIDI_CONTROLS | {"LRM", "RLM", "ALM"})
        if wanted and not invisible(code):
            missing.append(f"U+{code:04X}")
    assert missing == []


@pytest.mark.parametrize("text", ["Pay €12.50 now", "שלום world", "مرحبا", "line one\n\tline two", "👍 done", "a b"])
def test_visible_text_is_kept_as_typed(text):
    assert visible(text) == text


def test_invisible_characters_become_markers_in_place():
    assert visible("Save\u202egnp.exe") == "Save⟨U+202E⟩gnp.exe"
    assert visible("a\u200bb\u200dc\ufeffd") == "a⟨U+200B⟩b⟨U+200D⟩c⟨U+FEFF⟩d"
    assert visible("\x1b[31mred\r") == "⟨U+001B⟩[31mred⟨U+000D⟩"
    assert visible("tag\U000E0041\U000E0042") == "tag⟨U+E0041⟩⟨U+E0042⟩"
    assert visible("\u2066x\u2069\u00ad") == "⟨U+2066⟩x⟨U+2069⟩⟨U+00AD⟩"
    assert marker("\u202e") == "⟨U+202E⟩"


def test_the_pages_get_the_same_ranges():
    assert ui_export()["invisibleRanges"] == [list(pair) for pair in INVISIBLE_RANGES]
    assert all(start <= end for start, end in INVISIBLE_RANGES)
    assert all(a[1] < b[0] for a, b in zip(INVISIBLE_RANGES, INVISIBLE_RANGES[1:]))  # sorted, disjoint
