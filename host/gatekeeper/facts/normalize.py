"""One text normaliser for detection and value matching, so that a secret cannot hide behind its
spelling: fullwidth or Arabic-Indic digits, NBSP or dots between groups, mixed case, zero-width
characters or percent-encoding (repeated) all reduce to the same compact form.

    fold("4111%C2%A01111")        -> "4111 1111"         NFKC, ASCII digits, casefold, decoded
    compact("DE89-3704.0044 0532") -> "de89370400440532"  fold, then every separator dropped
    digits("٤١١١.١١١١/١١١١")       -> "411111111111"      only the decimal digits, as ASCII
    skeleton("раss_word")          -> "password"          compact, Cyrillic/Greek lookalikes as Latin

The forms are for *comparison and detection* only; never show or store them instead of the text.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

__all__ = ["fold", "plain", "compact", "skeleton", "digits", "ascii_digits", "percent_decode", "strip_invisible",
           "SEPARATORS", "LOOKALIKES"]

# Percent-decoding repeats until stable; a bound keeps hostile input (%2525...) cheap.
_MAX_DECODE_ROUNDS = 4
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
# Format characters (zero-width space/joiners, soft hyphen, BOM, bidi marks) render as nothing,
# so they must not split what the reader sees as one token.
_INVISIBLE_CATEGORIES = frozenset({"Cf"})
# Characters that separate groups of a number or code as written by people: any whitespace,
# punctuation dashes, dots, slashes, underscores, and the middle dot used in some locales.
SEPARATORS = frozenset(" \t\r\n\v\f.-_/\\·•‧'‘’,:;|+~")
_DASHES = frozenset("\u2212\u2043\ufe63\uff0d")  # minus signs and hyphen bullets that are not Pd


def percent_decode(text: str) -> str:
    """`text` with percent-escapes decoded (UTF-8, invalid bytes replaced), repeatedly, so that
    `%2540` reads `@`; stops when nothing changes or after a few rounds."""
    for _ in range(_MAX_DECODE_ROUNDS):
        if "%" not in text or _PERCENT.search(text) is None:
            break
        decoded = unquote(text, errors="replace")
        if decoded == text:
            break
        text = decoded
    return text


def strip_invisible(text: str) -> str:
    """`text` without zero-width and other format characters (Unicode category Cf)."""
    if text.isascii():
        return text
    return "".join(ch for ch in text if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)


def ascii_digits(text: str) -> str:
    """`text` with every script's decimal digits (Arabic-Indic, Devanagari, fullwidth...)
    replaced by the ASCII digit of the same value."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ch.isdecimal() and not ("0" <= ch <= "9"):
            out.append(chr(48 + unicodedata.decimal(ch)))
        else:
            out.append(ch)
    return "".join(out)


def _plain_separators(text: str) -> str:
    # NBSP, thin and ideographic spaces become a plain space, and every dash (en, em, minus...) a
    # hyphen, so that later checks need to know only the ASCII separators.
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ch.isspace():
            out.append(" ")
        elif ch in _DASHES or unicodedata.category(ch) == "Pd":
            out.append("-")
        else:
            out.append(ch)
    return "".join(out)


def plain(text: str) -> str:
    """`fold(text)` without the casefolding, for shapes whose case matters (tokens, base64):
    percent-decoded, NFKC, no format characters, ASCII digits, plain spaces and hyphens."""
    text = percent_decode(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        text = strip_invisible(text)
        text = ascii_digits(text)
        text = _plain_separators(text)
    return text


def fold(text: str) -> str:
    """The comparison form of `text`: percent-decoded, NFKC-normalised (fullwidth `＠` is `@`),
    format characters removed, all decimal digits ASCII, all whitespace a plain space and all
    dashes a hyphen, casefolded. Separators are kept, so word and group boundaries still show."""
    text = plain(text)
    if not text.isascii():
        # Casefolding can undo NFKC (a combining accent split off again): normalise once more.
        return unicodedata.normalize("NFKC", text.casefold())
    return text.casefold()


def compact(text: str) -> str:
    """`fold(text)` with every separator (whitespace, dots, dashes, slashes, underscores and the
    like) removed: `DE89 3704-0044` and `de8937040044` compare equal."""
    joined = "".join(ch for ch in fold(text) if ch not in SEPARATORS and not ch.isspace())
    # Dropping a separator can bring a letter and a combining mark together: compose them.
    return joined if joined.isascii() else unicodedata.normalize("NFKC", joined)


# Cyrillic and Greek letters drawn like Latin ones (NFKC keeps them apart): `раssword` with a
# Cyrillic р and а must still read `password` where a key or label is compared with a list.
LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c",
    "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w",
    "һ": "h", "ӏ": "l", "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w",
})


def skeleton(text: str) -> str:
    """`compact(text)` with Cyrillic and Greek lookalikes read as the Latin letters they mimic:
    for comparing keys and labels with word lists, never for showing."""
    form = compact(text)
    return form if form.isascii() else form.translate(LOOKALIKES)


def digits(text: str) -> str:
    """Only the decimal digits of `fold(text)`, in order, as ASCII."""
    return "".join(ch for ch in fold(text) if "0" <= ch <= "9")
