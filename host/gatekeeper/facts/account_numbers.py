"""Card numbers and IBANs however they are written, found in *folded* text (see `normalize.fold`:
ASCII digits, plain spaces and hyphens, lower case). Checksums keep false positives low: a card
number must pass Luhn, start like a payment card and be grouped like one; an IBAN must have its
country's length and pass mod-97.
"""

from __future__ import annotations

import re

# Digit groups joined by up to three separator characters of the kinds people (and evaders)
# put between groups.
_NUMBER_RUN = re.compile(r"[0-9]+(?:[ .\-/_\\]{1,3}[0-9]+)*")
_SPLIT = re.compile(r"([ .\-/_\\]{1,3})")
# Major industry identifiers of payment cards (ISO/IEC 7812): 2-6.
_CARD_FIRST_DIGITS = frozenset("23456")
_IBAN_START = re.compile(r"(?<![a-z0-9])[a-z]{2}[0-9]{2}")
_IBAN_SEPARATORS = frozenset(" .-/_")

# The length of an IBAN per country (ISO 13616 registry).
IBAN_LENGTHS: dict[str, int] = {
    "ad": 24, "ae": 23, "al": 28, "at": 20, "az": 28, "ba": 20, "be": 16, "bg": 22, "bh": 22, "br": 29,
    "by": 28, "ch": 21, "cr": 22, "cy": 28, "cz": 24, "de": 22, "dk": 18, "do": 28, "ee": 20, "eg": 29,
    "es": 24, "fi": 18, "fo": 18, "fr": 27, "gb": 22, "ge": 22, "gi": 23, "gl": 18, "gr": 27, "gt": 28,
    "hr": 21, "hu": 28, "ie": 22, "il": 23, "iq": 23, "is": 26, "it": 27, "jo": 30, "kw": 30, "kz": 20,
    "lb": 28, "lc": 32, "li": 21, "lt": 20, "lu": 20, "lv": 21, "ly": 25, "mc": 27, "md": 24, "me": 22,
    "mk": 19, "mr": 27, "mt": 31, "mu": 30, "nl": 18, "no": 15, "pk": 24, "pl": 28, "ps": 29, "pt": 25,
    "qa": 29, "ro": 24, "rs": 22, "sa": 24, "sc": 31, "sd": 18, "se": 24, "si": 19, "sk": 24, "sm": 27,
    "st": 25, "sv": 28, "tl": 23, "tn": 24, "tr": 26, "ua": 29, "va": 22, "vg": 24, "xk": 20,
}


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum used by card numbers (`digits`: ASCII digits only)."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """ISO 13616: move the first four characters to the end, letters to numbers, mod 97 == 1
    (`text` in any case, separators allowed)."""
    compact = "".join(ch for ch in text if ch.isalnum()).upper()
    if not 15 <= len(compact) <= 34 or not compact.isascii():
        return False
    rearranged = compact[4:] + compact[:4]
    try:
        number = "".join(str(int(ch, 36)) for ch in rearranged)
    except ValueError:
        return False
    return int(number) % 97 == 1


def has_card(folded: str) -> bool:
    """True when `folded` text holds a card number."""
    return any(len(m.group()) >= 13 and _run_has_card(m.group()) for m in _NUMBER_RUN.finditer(folded))


def _run_has_card(run: str) -> bool:
    for groups in _segments(run):
        # Every run of whole groups holding 13-19 digits, so that a group written before or
        # after ("4111 1111 1111 1111 1") cannot hide the number.
        for start in range(len(groups)):
            if groups[start][0] not in _CARD_FIRST_DIGITS:
                continue
            digits = ""
            for end in range(start, len(groups)):
                digits += groups[end]
                if len(digits) > 19:
                    break
                window = groups[start:end + 1]
                if len(digits) >= 13 and _card_layout(window, whole=len(window) == len(groups)) and _issued(digits) \
                        and luhn_valid(digits):
                    return True
    return False


def _issued(digits: str) -> bool:
    # The only cards that start with 2 are Mastercard's 2221-2720 range, sixteen digits long: a
    # run of years and days ("2024 2024 2024 12") is not one, even when it passes Luhn.
    return digits[0] != "2" or (len(digits) == 16 and 2221 <= int(digits[:4]) <= 2720)


def _card_layout(groups: list[str], whole: bool) -> bool:
    # How card numbers are written: in one piece, from a group of four or more (4-4-4-4, 4-6-5,
    # 12-4), digit by digit, or, standing alone, in pairs or threes. Order numbers such as
    # 112-4430921-5567312 are not, nor a window of a longer list of small numbers (sizes, scores).
    first = len(groups[0])
    if len(groups) == 1 or first >= 4:
        return True
    if not all(len(g) == first for g in groups[:-1]) or len(groups[-1]) > first:
        return False
    return first == 1 or (whole and first <= 3)


def _segments(run: str) -> list[list[str]]:
    """The run's groups, cut where the separator changes next to a short group: `2024-06-01 -
    2024-06-30` is two dates, while `4111.1111-1111 1111` (groups of four) stays one number."""
    parts = _SPLIT.split(run)
    groups, seps = parts[0::2], parts[1::2]
    segments = [[groups[0]]]
    previous = None
    for sep, group in zip(seps, groups[1:]):
        if previous is not None and sep != previous and min(len(segments[-1][-1]), len(group)) < 3:
            segments.append([group])
            previous = None
            continue
        segments[-1].append(group)
        previous = sep
    return segments


def has_iban(folded: str) -> bool:
    """True when `folded` text holds an IBAN of a known country with a valid checksum, spaced,
    dashed or dotted in any way."""
    for match in _IBAN_START.finditer(folded):
        length = IBAN_LENGTHS.get(folded[match.start():match.start() + 2])
        if length is None:
            continue
        collected = _collect(folded, match.start(), length)
        if collected is not None and sum(ch.isdigit() for ch in collected) >= 8 and iban_valid(collected):
            return True
    return False


def _collect(text: str, start: int, length: int) -> str | None:
    # `length` letters and digits from `start`, skipping up to two separators at a time; None
    # when the text ends, another character interrupts, or letters and digits go on after.
    out = []
    gap = 0
    index = start
    while index < len(text) and len(out) < length:
        ch = text[index]
        if ch.isascii() and ch.isalnum():
            out.append(ch)
            gap = 0
        elif ch in _IBAN_SEPARATORS and gap < 2:
            gap += 1
        else:
            return None
        index += 1
    if len(out) < length:
        return None
    if index < len(text) and text[index].isascii() and text[index].isalnum():
        return None
    return "".join(out)
