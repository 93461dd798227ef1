"""`Provenance`: what a thread's model has been shown, and where each decisive value came from.

The user's own words (their messages, their answers to questions, notes they typed on an
approval card, values they accepted on a card) are *trusted*; everything a tool returned is
*untrusted*, labelled with its origin. Values and names are extracted once, when a text is
added, so a decision only looks keys up.

Bounded: at most `max_untrusted` untrusted values and `max_text_chars` of untrusted text (where
typed names are looked for) are kept, the oldest going first, and a text longer than that is
read from its end. Dropping can only make the gatekeeper
stricter: trust comes from the user's words alone, and once untrusted content was dropped a
name the user never wrote asks even when it is no longer known where it was seen (`dropped`).
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from typing import NamedTuple

from host.gatekeeper.consent import TaskConsent
from host.gatekeeper.facts.values import (EMAIL, NUMBER, WEB, Value, compact_digits, is_card, name_pattern, names_in,
                                          number_forms, scan, scannable, site_of, web_value, word_key, words_form)

MAX_UNTRUSTED = 20_000
MAX_TEXT_CHARS = 2_000_000
MAX_TRUSTED_CHARS = 2_000_000
# A number with a country code (up to three digits) or a trunk `0` is the same number without it.
_MAX_PREFIX_DIGITS = 3
# The user's own values kept per kind for a card to show (the newest).
MAX_USERS_SHOWN = 3
# An amount as people write one: a number with a currency sign or code before or after it.
_FIGURE = r"\d+(?:[.,' ]\d{3}(?!\d))*(?:[.,]\d{1,2}(?!\d))?"
_CURRENCY = r"(?:[€$£¥]|\b(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|euros?|dollars?|pounds?)\b)"
_AMOUNT = re.compile(rf"[€$£¥] ?{_FIGURE}|(?<![\w.,]){_FIGURE} ?{_CURRENCY}", re.IGNORECASE)
# An untrusted value's kind (a field's by the field's kind) -> the kind of the user's values
# shown beside it; a kind missing here has nothing of the user's to compare with.
_FIELD_SORTS = {"amount": "amount", "IBAN": "iban", "account number": "number", "wallet address": "wallet",
                "payee": "name"}


class Seen(NamedTuple):
    """Where an untrusted value was last seen (an origin, an MCP server, a URL)."""

    origin: str


class Provenance:
    """The provenance index of one thread (or of one what-if case)."""

    __slots__ = ("_trusted", "_sites", "_paths", "_trusted_words", "_trusted_chars", "_places", "_untrusted", "_untrusted_sites", "_numbers", "_texts", "_text_chars", "_in_fields",
                 "_said", "max_untrusted", "max_text_chars", "dropped", "texts", "consent")

    def __init__(self, *, max_untrusted: int = MAX_UNTRUSTED, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self._trusted: set[str] = set()
        self._sites: set[str] = set()  # registrable domains the user named without a path
        self._paths: dict[str, set[str]] = {}  # site -> paths the user named under it
        self._trusted_words: list[str] = []
        self._places: set[str] = set()  # sites the user asked from, or whose e-mail addresses they gave
        self._trusted_chars = 0
        self._untrusted: OrderedDict[str, Seen] = OrderedDict()
        self._untrusted_sites: OrderedDict[str, Seen] = OrderedDict()  # sites content named
        self._numbers: set[str] = set()  # digit forms of the numbers the user wrote (amounts, codes)
        # Values accepted on a card for one kind of payment field (an amount, a payee): theirs there only.
        self._in_fields: dict[str, set[str]] = {}
        # The values the user wrote, per kind: comparison key -> as last written (newest last).
        self._said: dict[str, OrderedDict[str, str]] = {}
        # Untrusted texts as names are searched in (lowered), newest last, with their origin.
        self._texts: deque[tuple[str, Seen]] = deque()
        self._text_chars = 0
        self.max_untrusted = max_untrusted
        self.max_text_chars = max_text_chars
        self.dropped = False  # some untrusted content is no longer indexed
        self.texts = 0
        # The commits the user's own messages asked for (filled by whoever reads the messages).
        self.consent = TaskConsent()

    # -- adding ---------------------------------------------------------------------------------

    def add_user(self, text: str) -> None:
        """The user's own words: every value in them is trusted, and names in them are theirs."""
        if not text:
            return
        self.texts += 1
        for value in scan(text):
            self.trust(value)
            self._say("card" if is_card(value) else value.kind, value.key, value.shown)
        for amount in _AMOUNT.finditer(scannable(text)[:20_000]):
            shown = amount.group(0).strip()
            self._say("amount", word_key(shown), shown)
        for name in names_in(text):
            if not any(c.isdigit() for c in name):  # "IBAN DE89" is no one's name
                self._say("name", name, name.title())
        self._numbers.update(number_forms(text))
        form = words_form(text)
        self._trusted_words.append(form)
        self._trusted_chars += len(form)
        while self._trusted_chars > MAX_TRUSTED_CHARS and len(self._trusted_words) > 1:
            # Forgetting the user's oldest words can only make the gatekeeper ask more.
            self._trusted_chars -= len(self._trusted_words.pop(0))

    def _say(self, kind: str, key: str, shown: str) -> None:
        said = self._said.setdefault(kind, OrderedDict())
        said.pop(key, None)
        said[key] = shown
        while len(said) > MAX_USERS_SHOWN:
            said.popitem(last=False)

    def add_own(self, text: str) -> None:
        """One of the user's own details from settings (their name, addresses, phone, accounts):
        the user's words in every task. An account's site (their bank, their mail) is a place they
        work on; the domain of an e-mail address is not."""
        if not text:
            return
        for value in scan(text):
            self._trusted.add(value.key)
            if value.kind == WEB and value.site:
                self._places.add(value.site)
        self._numbers.update(number_forms(text))
        form = words_form(text)
        self._trusted_words.append(form)
        self._trusted_chars += len(form)

    def trust(self, value: Value) -> None:
        """Make one value the user's (they wrote it, or accepted it on a card)."""
        self._trusted.add(value.key)
        if value.kind == EMAIL:
            self._places.add(site_of(value.key.rsplit("@", 1)[1]))
        if value.kind == WEB:
            if value.path:
                self._paths.setdefault(value.site, set()).add(value.path)
            else:
                self._sites.add(value.site)

    def add_place(self, url: str) -> None:
        """The tab the user asked from: its site is one they chose to work on."""
        value = web_value(url)
        if value is not None:
            self._places.add(value.site)

    def trust_name(self, text: str) -> None:
        """Make a name (or any typed text) the user's (accepted on a card)."""
        self._numbers.update(number_forms(text))
        form = words_form(text)
        self._trusted_words.append(form)
        self._trusted_chars += len(form)

    def add_untrusted(self, text: str, origin: str) -> None:
        """Content a tool returned, seen at `origin`. A text over the bound is read from its end
        (the newest part of a long page is what the model read last)."""
        if not text:
            return
        self.texts += 1
        if len(text) > self.max_text_chars:
            text = text[-self.max_text_chars:]
            self.dropped = True
        seen = Seen(origin or "an unnamed source")
        text = scannable(text)
        for value in scan(text, prepared=True):
            self._remember(self._untrusted, value.key, seen)
            if value.kind == WEB:
                self._remember(self._untrusted_sites, value.site, seen)
        low = text.lower()
        self._texts.append((low, seen))
        self._text_chars += len(low)
        while self._text_chars > self.max_text_chars and len(self._texts) > 1:
            self._text_chars -= len(self._texts.popleft()[0])
            self.dropped = True

    def _remember(self, table: OrderedDict[str, Seen], key: str, seen: Seen) -> None:
        if key in table:
            table.move_to_end(key)
        table[key] = seen
        if len(table) > self.max_untrusted:
            table.popitem(last=False)
            self.dropped = True

    # -- asking ---------------------------------------------------------------------------------

    def is_trusted(self, value: Value) -> bool:
        """Whether the user gave this value (see the README for how each kind compares)."""
        if value.key in self._trusted:
            return True
        if value.kind == WEB:
            if value.site in self._sites:
                return True
            for prefix in self._paths.get(value.site, ()):
                if value.path == prefix or value.path.startswith(prefix.rstrip("/") + "/"):
                    return True
            return False
        if value.kind == NUMBER:
            return self._same_number(value.key.split(":", 1)[1])
        return False

    def _same_number(self, digits: str) -> bool:
        bare = digits.lstrip("0")
        for key in self._trusted:
            if not key.startswith("number:"):
                continue
            known = key[7:].lstrip("0")
            for mine, theirs in ((bare, known), (digits, key[7:])):  # "0" of a trunk prefix kept or not
                longer, shorter = (mine, theirs) if len(mine) >= len(theirs) else (theirs, mine)
                if len(shorter) >= 9 and longer.endswith(shorter) and len(longer) - len(shorter) <= _MAX_PREFIX_DIGITS:
                    return True
        return False

    def site_is_users(self, site: str) -> bool:
        """Whether the user named this registrable domain (alone, in a URL or an e-mail address)
        or asked from a tab on it."""
        return site in self._sites or site in self._paths or site in self._places

    def seen_at(self, value: Value) -> str | None:
        """The origin the value was last seen at in untrusted content (None when not seen)."""
        seen = self._untrusted.get(value.key)
        return seen.origin if seen is not None else None

    def starts_users_value(self, text: str) -> bool:
        """Whether `text` is the beginning of an account number or IBAN the user gave (keys
        pressed one by one spell the user's own IBAN before they spell all of it)."""
        compact = "".join(c for c in scannable(text).upper() if c.isalnum())
        if not compact:
            return False
        digits = "".join(c for c in compact if c.isdigit())
        if digits == compact and any(form.startswith(digits) for form in self._numbers):
            return True  # the first digits of an amount the user wrote
        for key in self._trusted:
            kind, _, form = key.partition(":")
            if kind == "iban" and form.upper().startswith(compact):
                return True
            if kind == "number" and digits == compact and form.startswith(digits):
                return True
        return False

    def content_value_begun(self, text: str) -> str | None:
        """The account number or IBAN from content whose beginning `text` spells (the newest),
        in its own form, or None: keys pressed one by one are asked about once, as the whole
        value the page showed, and accepting that covers the keys still to come."""
        compact = "".join(c for c in scannable(text).upper() if c.isalnum())
        if not compact:
            return None
        for key in reversed(self._untrusted):
            kind, _, form = key.partition(":")
            if kind in ("iban", "number") and len(form) > len(compact) and form.upper().startswith(compact):
                return form
        return None

    def wrote(self, text: str, field: str | None = None) -> bool:
        """Whether the user wrote `text` (or accepted it; for a payment field of kind `field`,
        accepted for that kind of field): its numbers compared by their digits ("9,500.00" is
        "9500"), anything else as whole words."""
        numbers = number_forms(text)
        accepted = self._in_fields.get(field, set()) if field else set()
        if numbers and compact_digits(text):
            return bool(numbers & self._numbers) or bool(numbers & accepted)
        key = word_key(scannable(text))
        return bool(key) and (self.name_is_users(key) or key in accepted)

    def accept_in_field(self, text: str, field: str) -> None:
        """The user accepted `text` on a card for a payment field of kind `field` (an amount, a
        payee's account): it is theirs in that kind of field for the rest of the task, and only
        there (an amount accepted is not an account number to send money to)."""
        forms = self._in_fields.setdefault(field, set())
        forms.update(number_forms(text) if compact_digits(text) else ())
        key = word_key(scannable(text))
        if key:
            forms.add(key)

    def text_seen_at(self, text: str) -> str | None:
        """Where untrusted content last showed `text` (its digits, for a number), or None."""
        if compact_digits(text):
            wanted = number_forms(text)
            for low, seen in reversed(self._texts):
                if wanted & number_forms(low):
                    return seen.origin
            return None
        key = word_key(scannable(text))
        return self.name_seen_at(key) if key else None

    def users_values(self, kind: str, what: str) -> list[str]:
        """The values of the kind of an untrusted value (`kind` and `what` as its fact names them)
        that the user wrote in their own words, as written, newest last ("DE89 3704 …" beside a
        page's IBAN, "800 EUR" beside a bill's amount); empty when they wrote none."""
        if kind == "field":
            sort = _FIELD_SORTS.get(what)
        elif kind == NUMBER:
            sort = "card" if what == "card number" else NUMBER
        elif kind == "name":
            sort = "name" if what == "name" else None  # an account handle is no name a person writes
        else:
            sort = kind
        return list(self._said[sort].values()) if sort in self._said else []

    def site_seen_at(self, site: str) -> str | None:
        """The origin where untrusted content last named this registrable domain in a web address
        (None when none did)."""
        seen = self._untrusted_sites.get(site)
        return seen.origin if seen is not None else None

    def name_is_users(self, key: str) -> bool:
        """Whether the user wrote this name (as whole words, in any case)."""
        needle = f" {key} "
        return any(needle in words for words in self._trusted_words)

    def name_seen_at(self, key: str) -> str | None:
        """The origin a name was last seen at in untrusted content (None when not seen). Names are
        looked for only when a typed value is one, so texts are searched then, newest first."""
        first = key.split(" ", 1)[0]
        pattern = None
        for text, seen in reversed(self._texts):
            at = text.find(first)
            while at != -1:
                pattern = pattern or name_pattern(key)
                if (at == 0 or not text[at - 1].isalnum()) and pattern.match(text, at) is not None:
                    return seen.origin
                at = text.find(first, at + 1)
        return None

    def __len__(self) -> int:
        return len(self._untrusted)
