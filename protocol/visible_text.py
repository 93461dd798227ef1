"""Text a person must read exactly (an approval's parameters and element line, in the side panel
and at the REPL): characters that draw nothing or reorder the text around them are shown as
markers such as `⟨U+202E⟩`, so a right-to-left override, a zero-width space or a tag character
in a page's label or the model's parameters cannot hide or rearrange what is shown. Everything
else is kept as typed.

The ranges are declared once here; the pages get them through `UI.invisibleRanges` in the
generated protocol.js, so both views mark the same characters.
"""

from __future__ import annotations

import re

# Inclusive code point ranges: the controls but tab and newline, every format character
# (Unicode category Cf, the bidi controls among them), the line and paragraph separators, and
# the other default-ignorable code points (fillers, variation selectors, tags).
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x0008), (0x000B, 0x001F), (0x007F, 0x009F),  # C0 and C1 controls (tab and newline kept)
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    (0x2028, 0x202E),  # line and paragraph separators; bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidi isolates, deprecated format controls
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFFB),  # interlinear annotation controls
    (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement
)

_INVISIBLE = re.compile("[" + "".join(
    re.escape(chr(start)) if start == end else f"{re.escape(chr(start))}-{re.escape(chr(end))}"
    for start, end in INVISIBLE_RANGES) + "]")


def marker(char: str) -> str:
    """The visible stand-in for one invisible character: `⟨U+202E⟩`."""
    return f"⟨U+{ord(char):04X}⟩"


def visible(text: str) -> str:
    """`text` with every invisible or reordering character replaced by its marker."""
    return _INVISIBLE.sub(lambda match: marker(match.group()), text)
