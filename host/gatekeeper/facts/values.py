"""Decisive values in text: the things a write may send somewhere that decide *where* or *to
whom* (an e-mail address, a web address or domain, an IBAN, a long number such as an account,
phone or card number, an SSH public key: whoever holds its private half gets in), and names of
people and places.

Every value has a *key*, its comparison form, so that spellings meant to slip past a match
compare equal: case, fullwidth letters and `＠`, every script's digits, NBSP, dots or dashes
between groups, zero-width characters and percent-encoding. See the gatekeeper's README for the
rules (what counts, how addresses, domains and numbers compare).

    scan("Pay DE89 3704-0044 0532 0130 00")  -> [Value("iban", "iban:DE89370400440532013000", ...)]
    name_key("Riverside View Hotel")          -> "riverside view hotel"
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from functools import lru_cache
from typing import Any, NamedTuple

from host.gatekeeper.facts.normalize import fold, percent_decode

EMAIL, WEB, IBAN_KIND, NUMBER, KEY, WALLET = "email", "web", "iban", "number", "key", "wallet"
KIND_WORDS = {EMAIL: "e-mail address", WEB: "web address", IBAN_KIND: "IBAN", NUMBER: "account, phone or card number",
              KEY: "public key", WALLET: "wallet address"}

# Fewer digits are dates, amounts, times and counts far more often than accounts or phones.
MIN_NUMBER_DIGITS = 9

# Generic and country top-level domains a bare `name.tld` is taken for a domain with; file names
# (`setup.py`, `notes.md`) would otherwise be domains too. With a scheme or `www.` any TLD counts.
_BARE_TLDS = frozenset("""
com net org io co app dev ai me info biz edu gov mil int xyz online site shop store tech blog news cloud page
travel bank money finance email link live world today us uk de fr es it nl be ch at se no dk fi pl pt ie cn jp kr
in ru br au ca mx nz za eu tv gg ly fm ws cz gr hu ro sk si hr bg lt lv ee is lu li mc tr il ae sa sg hk tw my th
vn id ph ar cl pe ve uy ec example test localhost internal local""".split())
# Second-level labels under a country code that are public suffixes themselves (co.uk, com.au):
# a registrable domain is one label more there. A small list instead of the public suffix list.

_SHORT_TEXT = 4096
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_SPACE_LIKE = "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\ufeff\u180e"
_DASH_LIKE = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"

_EMAIL_LOCAL_END = re.compile(r"(?<![a-z0-9._+\-])[a-z0-9._+\-]{1,64}$", re.I)
_EMAIL_DOMAIN = re.compile(r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?(?:\.[a-z0-9\-]+)*\.[a-z]{2,24}(?![a-z0-9\-])", re.I)
# A dot before a top-level domain: with `://` and `www.` (found by plain search) the anchors of
# web addresses. It starts with a literal, so the regex engine skips ahead to dots quickly.
_TLD_ANCHOR = re.compile(r"\.([A-Za-z]{2,24})(?![A-Za-z0-9\-])")
_SCHEME_END = re.compile(r"(?<![a-z])https?$", re.I)
# Browsers take underscores in sub-domain labels (`dl_files.cdn.example`), so a host name does too.
_HOST_END = re.compile(r"(?<![a-z0-9_\-.])(?:[a-z0-9_](?:[a-z0-9_\-]{0,61}[a-z0-9_])?\.)*"
                       r"[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?$", re.I)
_HOST_CHARS = re.compile(r"[a-z0-9._\-]+")
_URL_REST = re.compile(r"[^\s<>\"'`()\[\]{}|\\^]*")
# Runs too short to hold a long number (or an IBAN's check digits and account) are never read.
_DIGIT_RUN = re.compile(r"[0-9][0-9 ().\-/+]{%d,}" % (MIN_NUMBER_DIGITS - 1))
_NUMBER_PART = re.compile(r"\+?(?:\(?[0-9]+\)?[ \-./]?)*[0-9]+")
# Country code, check digits, then groups (a separator between groups of four; a last shorter group).
_IBAN_RE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{2}[0-9]{2}(?:[ \-.]?[A-Za-z0-9]){11,30})(?![A-Za-z0-9])")
_DATE_TIME_RE = re.compile(r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b|\b\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\b|"
                           r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_IBAN_BANK_HEAD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}[0-9]{2}[ \-.]?[A-Za-z]{4}[ \-.]?$")
_GROUP_SPLIT = re.compile(r"[ \-.]")
# An SSH public key as `authorized_keys` and the sites' "add key" forms take it: its type, then
# its base64 body (which starts `AAAA`, the length of the type name).
_SSH_KEY = re.compile(r"(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)"
                      r"@openssh\.com)[ \t]+(AAAA[0-9A-Za-z+/]{16,}={0,3})")
_SSH_ANCHORS = ("ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-")
# Where coins go: a Bitcoin bech32 address or an Ethereum address, found from their prefixes (a
# legacy base58 address has none, and reading every long token for one costs too much per page).
_BECH32 = re.compile(r"(?<![A-Za-z0-9])(?:bc1|tb1)[ac-hj-np-z02-9]{25,87}(?![A-Za-z0-9])", re.I)
_ETH = re.compile(r"(?<![A-Za-z0-9])0x[0-9a-fA-F]{40}(?![A-Za-z0-9])")

# A name: one to four capitalised words (letters, apostrophes, hyphens, a dot after an initial).
_NAME_WORD = r"[^\W\d_][^\W\d_'’\-]*(?:['’\-][^\W\d_]+)*\.?"
_NON_WORD = re.compile(r"[\W_]+")
_NAME_RE = re.compile(rf"^{_NAME_WORD}(?: {_NAME_WORD}){{0,3}}$")
# Capitalised words that are no one's name: greetings, answers, days, months, UI words.
_NOT_NAMES = frozenset("""
hello hi hey dear thanks thank yes no ok okay sure please done search send submit cancel save next back continue
today tomorrow yesterday monday tuesday wednesday thursday friday saturday sunday january february march april may
june july august september october november december the a an i we you he she they it this that
""".split())


class Value(NamedTuple):
    """One decisive value: `kind` (email, web, iban, number), `key` (its comparison form) and
    `shown` (as written, for the reason). For web values `site` is the registrable domain and
    `path` the normalised path."""

    kind: str
    key: str
    shown: str
    site: str = ""
    path: str = ""


@lru_cache(maxsize=1)
def _table() -> dict[int, str | None]:
    """A translation that makes text scannable without full normalisation: fullwidth ASCII to
    ASCII, every script's decimal digits to ASCII, odd spaces to a space, dashes to `-`, and
    invisible characters removed (built once, on the first text that needs it)."""
    table: dict[int, str | None] = {cp: chr(cp - 0xFEE0) for cp in range(0xFF01, 0xFF5F)}
    for cp in range(0x80, 0x20000):
        ch = chr(cp)
        if ch.isdecimal() and cp not in table:
            table[cp] = str(unicodedata.decimal(ch))
    table.update({ord(c): " " for c in _SPACE_LIKE})
    table.update({ord(c): None for c in _INVISIBLE})
    table.update({ord(c): "-" for c in _DASH_LIKE})
    table[0xFE6B] = "@"  # small commercial at
    return table


def scannable(text: str) -> str:
    """`text` in the form the scanners read: percent-decoded (a long text only where an `@` is
    escaped), and its non-ASCII runs translated as `_table` says (no full Unicode normalisation
    of long texts)."""
    if "%" in text:
        if len(text) <= _SHORT_TEXT:
            text = percent_decode(text)
        elif "%40" in text or "%2540" in text:
            text = text.replace("%2540", "@").replace("%40", "@")
    if text.isascii():
        return text
    table = _table()
    return _NON_ASCII.sub(lambda m: m.group(0).translate(table), text)


@functools.lru_cache(maxsize=1)
def _suffixes() -> Any:
    # The public suffix list packaged with `publicsuffixlist` (private section included, so
    # that `victim.github.io` and `attacker.github.io` are two sites); read on first use.
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@functools.lru_cache(maxsize=65536)
def site_of(host: str) -> str:
    """The registrable domain of `host` by the public suffix list (`mail.google.com` ->
    `google.com`, `a.b.co.uk` -> `b.co.uk`, `victim.github.io` stays itself); an IP address,
    a single label or a bare public suffix is its own site."""
    host = host.strip(".").lower()
    if host.replace(".", "").isdigit() or host.startswith("[") or "." not in host:
        return host
    return _suffixes().privatesuffix(host) or host


def _path(raw: str) -> str:
    path = raw.split("?", 1)[0].split("#", 1)[0]
    path = _fold(path).rstrip("/.,;:!")
    return path if path.startswith("/") or not path else "/" + path


def _fold(text: str) -> str:
    # Most values are plain ASCII without escapes: lowercasing is their whole fold.
    return text.lower() if text.isascii() and "%" not in text else fold(text)


def web_value(text: str) -> Value | None:
    """A URL or `host/path` as a web value (None when it has no usable host)."""
    raw = text.strip()
    rest = raw.split("://", 1)[1] if "://" in raw[:12] else raw
    # The host ends at the first `/`, `?` or `#` (`weather.com?` at the end of a question).
    cut = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    host, path = rest[:cut], rest[cut + 1:] if cut < len(rest) and rest[cut] == "/" else ""
    host = host.rsplit("@", 1)[-1].split(":", 1)[0]
    host = _fold(host).rstrip(".,;:!")
    if "." not in host or not _HOST_CHARS.fullmatch(host):
        return None
    site = site_of(host)
    normal = _path("/" + path) if path else ""
    return Value(WEB, f"web:{site}{normal}", raw.rstrip(".,;:!?"), site, normal)


def _iban_groups(raw: str) -> str:
    """The IBAN at the start of `raw` when it is written in groups: a group of letters only is
    part of it only as the bank code right after the country group (`GB82 WEST ...`), so the
    words after an IBAN (`... 0130 00 and more`) are not."""
    groups = _GROUP_SPLIT.split(raw)
    if len(groups) == 1:
        return raw
    kept = [groups[0]]
    for index, group in enumerate(groups[1:], start=1):
        if group.isalpha() and (index > 1 or len(groups[0]) != 4):
            break
        kept.append(group)
    end = sum(len(g) for g in kept) + len(kept) - 1
    return raw[:end]


def _iban_key(raw: str) -> str | None:
    compact = _GROUP_SPLIT.sub("", raw).upper()
    if not 15 <= len(compact) <= 34 or not any(c.isdigit() for c in compact[4:]):
        return None
    return f"iban:{compact}"


class _Spans:
    """Spans of the text already taken by a value, so no later scanner reads a value inside one."""

    __slots__ = ("starts", "ends")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, start: int, end: int) -> None:
        index = bisect.bisect(self.starts, start)
        self.starts.insert(index, start)
        self.ends.insert(index, end)

    def covers(self, start: int, end: int) -> bool:
        index = bisect.bisect(self.starts, end) - 1
        return index >= 0 and self.ends[index] > start and self.starts[index] < end


def scan(text: str, *, prepared: bool = False) -> list[Value]:
    """Every decisive value in `text` (each once), read from its scannable form. Each kind is
    found from a rare anchor (`@`, `://`, `www.`, a known TLD, a run of digits) and read around
    it, so long page text costs a few fast passes. `prepared`: `text` is scannable already."""
    if not prepared:
        text = scannable(text)
    found: dict[str, Value] = {}
    taken = _Spans()
    if any(anchor in text for anchor in _SSH_ANCHORS):
        for match in _SSH_KEY.finditer(text):
            key = f"key:{match.group(1)}"
            found.setdefault(key, Value(KEY, key, match.group(0)))
            taken.add(match.start(), match.end())
    _wallets(text, found, taken)
    at = text.find("@")
    while at != -1:
        left = _EMAIL_LOCAL_END.search(text, max(0, at - 64), at)
        right = _EMAIL_DOMAIN.match(text, at + 1)
        if left is not None and right is not None and not taken.covers(left.start(), right.end()):
            start, end = left.start(), right.end()
            shown = text[start:end]
            key = f"email:{_fold(shown)}"
            found.setdefault(key, Value(EMAIL, key, shown))
            taken.add(start, end)
        at = text.find("@", at + 1)
    for start, anchor_end, kind in _web_anchors(text):
        if taken.covers(start, start + 1):
            continue
        if kind == "scheme":  # read back to the scheme's start
            scheme = _SCHEME_END.search(text, max(0, start - 5), start)
            if scheme is None:
                continue
            start = scheme.start()
        elif kind == "www":
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in ".-"):
                continue
        else:  # `.tld`: read back over the host's labels
            back = _HOST_END.search(text, max(0, start - 253), start)
            if back is None or (back.start() > 0 and text[back.start() - 1] in "@/.:"):
                continue
            start = back.start()
        rest = _URL_REST.match(text, anchor_end)
        end = rest.end() if rest is not None else anchor_end
        if taken.covers(start, end):
            continue
        value = web_value(text[start:end])
        if value is not None:
            found.setdefault(value.key, value)
            taken.add(start, end)
    for match in _DIGIT_RUN.finditer(text):
        start, end = match.span()
        if taken.covers(start, end):
            continue
        head = None
        if start >= 2 and text[start - 2:start].isalpha() and (start == 2 or not text[start - 3].isalnum()):
            head = start - 2
        elif start >= 8 and (text[start - 1] in " -." or text[start - 1].isalpha()):
            bank = _IBAN_BANK_HEAD.search(text, start - 11, start)  # `GB82 WEST ` before the digits
            head = bank.start() if bank is not None else None
        if head is not None:
            iban = _IBAN_RE.match(text, head)
            if iban is not None:
                raw = _iban_groups(iban.group(1))
                key = _iban_key(raw)
                if key is not None:
                    found.setdefault(key, Value(IBAN_KIND, key, raw))
                    taken.add(head, head + len(raw))
                    continue
        run = match.group(0)
        if start > 0 and text[start - 1] in "+(":
            run = text[start - 1] + run
        _numbers(run, found)
    return list(found.values())


def _wallets(text: str, found: dict[str, Value], taken: "_Spans") -> None:
    """Crypto addresses, found from their rare prefixes."""
    for pattern, anchors in ((_BECH32, ("bc1", "BC1", "tb1", "TB1")), (_ETH, ("0x",))):
        if not any(anchor in text for anchor in anchors):
            continue
        for match in pattern.finditer(text):
            shown = match.group(0)
            key = f"wallet:{shown.lower()}"
            found.setdefault(key, Value(WALLET, key, shown))
            taken.add(match.start(), match.end())


def _web_anchors(text: str) -> list[tuple[int, int, str]]:
    """(position, end, kind) of every `://`, `www.` and `.tld` with a known TLD, in text order."""
    out: list[tuple[int, int, str]] = []
    if "." not in text:
        return out
    for needle, kind in (("://", "scheme"), ("www.", "www"), ("WWW.", "www")):
        at = text.find(needle)
        while at != -1:
            out.append((at, at + len(needle), kind))
            at = text.find(needle, at + 1)
    for match in _TLD_ANCHOR.finditer(text):
        if match.group(1).lower() in _BARE_TLDS:
            out.append((match.start(), match.end(), "tld"))
    out.sort()
    return out


def _numbers(run: str, found: dict[str, Value]) -> None:
    """The long numbers of one run of digits and separators (dates and times left out)."""
    if len(run) < MIN_NUMBER_DIGITS:
        return
    if _DATE_TIME_RE.search(run):
        run = _DATE_TIME_RE.sub("  ", run)
    for part in _NUMBER_PART.finditer(run):
        shown = part.group(0).strip(" -.()/")
        digits = "".join(c for c in shown if c.isdigit())
        if len(digits) >= MIN_NUMBER_DIGITS:
            key = f"number:{digits}"
            found.setdefault(key, Value(NUMBER, key, shown))


def is_card(value: Value) -> bool:
    """True for a number of card length that passes the Luhn check."""
    digits = value.key.split(":", 1)[1]
    if value.kind != NUMBER or not 13 <= len(digits) <= 19:
        return False
    total = 0
    for index, ch in enumerate(reversed(digits)):
        n = int(ch)
        if index % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def kind_words(value: Value) -> str:
    """What the value is, for a reason a person reads."""
    return "card number" if is_card(value) else KIND_WORDS[value.kind]


def name_key(text: str) -> str | None:
    """The comparison form of `text` when its whole value is a name (one to four capitalised
    words, not a greeting, a day or a UI word), else None."""
    stripped = " ".join(scannable(text).split())
    if not stripped or len(stripped) > 80 or not _NAME_RE.match(stripped):
        return None
    words = stripped.split(" ")
    if not all(w[0].isupper() for w in words):
        return None
    key = word_key(stripped)
    if not key or (len(words) == 1 and key in _NOT_NAMES):
        return None
    return key


_NAME_TOKEN = re.compile(r"[^\W\d_][^\W_]*(?:['’\-][^\W\d_]+)*|[^\w\s]")
MAX_NAMES_IN = 5


def names_in(text: str) -> list[str]:
    """The names a longer text carries: runs of two to four capitalised words ("Booking a room at
    the Riverside View Hotel" carries "Riverside View Hotel"), greetings, days and UI words left
    off their ends; at most `MAX_NAMES_IN`, as `name_key`s."""
    found: list[str] = []
    run: list[str] = []
    for token in [*_NAME_TOKEN.findall(scannable(text)[:4000]), "."]:
        if token[0].isupper() and token[0].isalpha():
            run.append(token)
            continue
        while run and run[0].lower() in _NOT_NAMES:
            run.pop(0)
        while run and run[-1].lower() in _NOT_NAMES:
            run.pop()
        if 2 <= len(run) <= 4:
            key = word_key(" ".join(run))
            if key and key not in found:
                found.append(key)
                if len(found) >= MAX_NAMES_IN:
                    break
        run = []
    return found


_HANDLE_RE = re.compile(r"@?[A-Za-z0-9](?:[A-Za-z0-9._\-]{0,38}[A-Za-z0-9])?")


def handle_key(text: str) -> str | None:
    """The comparison form (`word_key`) of `text` when its whole value is an account handle
    ("contractor-joe", "@ops_helper", "dev42"): one token of letters with digits, dots, dashes
    or underscores, or after an `@`; None for plain words, numbers and anything longer."""
    stripped = text.strip()
    if not 3 <= len(stripped) <= 40 or not _HANDLE_RE.fullmatch(stripped):
        return None
    core = stripped.lstrip("@")
    if not any(c.isalpha() for c in core):
        return None
    if stripped[0] != "@" and not any(c.isdigit() or c in "._-" for c in core):
        return None
    return word_key(core) or None


_NUMBER_TOKEN = re.compile(r"\d(?:[\d,.'’ \-]*\d)?")
_DECIMALS = re.compile(r"[.,]\d{1,2}$")


def number_forms(text: str) -> set[str]:
    """The digit forms of the numbers in `text`: each number's digits ("20-00-00" -> "200000"),
    and for an amount with decimals its whole part too ("9,500.00" -> "950000" and "9500")."""
    forms: set[str] = set()
    for match in _NUMBER_TOKEN.finditer(scannable(text)[:20_000]):
        token = match.group(0).strip(" -")
        digits = "".join(c for c in token if c.isdigit())
        if not digits:
            continue
        forms.add(digits.lstrip("0") or "0")
        if " " in token:  # "on 12 March, 9500": the parts may be numbers of their own
            forms.update(part.lstrip("0") or "0" for part in ("".join(c for c in p if c.isdigit())
                                                              for p in token.split(" ")) if part)
        decimals = _DECIMALS.search(token)
        if decimals is not None:
            whole = "".join(c for c in token[:decimals.start()] if c.isdigit())
            if whole:
                forms.add(whole.lstrip("0") or "0")
    return forms


def compact_digits(text: str) -> str:
    """The digits of `text` when it is a number and nothing else (separators aside), else ""."""
    stripped = scannable(text).strip()
    if not stripped or any(c.isalpha() for c in stripped if c not in "€$£¥"):
        return ""
    return "".join(c for c in stripped if c.isdigit())


def name_pattern(key: str) -> re.Pattern[str]:
    """A match for the name `key` (a `name_key`) in lowered text at the start of its first word,
    whatever punctuation or spaces stand between its words."""
    return _name_pattern(key)


@lru_cache(maxsize=256)
def _name_pattern(key: str) -> re.Pattern[str]:
    # Matched where the first word was found (the caller checks the boundary before it).
    return re.compile(r"[\W_]+".join(re.escape(w) for w in key.split(" ")) + r"(?![^\W_])")


def word_key(text: str) -> str:
    """`text` folded, its words joined by one space (punctuation between them dropped)."""
    return " ".join(w for w in _NON_WORD.split(fold(text)) if w)


def words_form(text: str) -> str:
    """`word_key` of `text`, padded: names are looked up in it as ` name ` so only whole words match."""
    return f" {word_key(scannable(text))} "
