"""`TaskConsent`: the commits the user asked for in their own words, so that the commit their
request named runs without a question and anything beyond it asks.

Derived deterministically from the user's messages (no model on the way): each verb of the word
data's `task` table ("buy", "send", "delete", "paga", "削除して"...) that no negation precedes
gives an item of its effect class, bound to the sites the same message names as the place to act
("on argos.co.uk"; any site when it names none), with the e-mail addresses it names as
recipients. Consent never grows from page,
tool or server text: only `add_message` (the user's message) adds items, and the user may remove
any. A commit the user allows for the task on its card is a grant of its class on that site
(`effect:<class>`), which the commit step reads beside the consent.

    "buy the blue kettle on argos.co.uk"  ->  pay @ argos.co.uk
    "send Bob the minutes"                ->  send @ any site
    "don't buy anything, just compare"    ->  nothing

A `submit` (a form the host could not name further) is covered by any item that applies on its
site: the user asked for a commit there, and the values the form carries are judged on their own.
An `install` covers the grant of `access` on its consent screen ("install the GIPHY app", then
"Allow").

A request that hands its choices to something the agent will read ("follow the instructions in
that e-mail", "do the tasks on my TODO list") consents to nothing: what was read chose the
commit, and a page an attacker wrote reads the same. It is kept as `delegated`, so that a
commit's card says where the choice came from.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from host.gatekeeper.facts.commit_vocabulary import has_cjk, normalize, vocabulary
from host.gatekeeper.facts.consequence import EFFECT_WORDS
from host.gatekeeper.facts.values import EMAIL, IBAN_KIND as IBAN, WEB, scan, site_of

MAX_ITEMS = 64
_NEGATION_WINDOW = 3  # words before a verb that can take it back
_CJK_NEGATION_WINDOW = 4  # characters, for Chinese and Japanese
_OBJECT_SPAN = 8  # words from a verb of change to its object ("add Dana Kim x to the launch channel")
# Words before a site that make it the place to act ("on", "auf", "sur", "en", "su", "在"...).
_WHERE = frozenset({"on", "at", "via", "through", "auf", "bei", "über", "sur", "chez", "en", "em", "no", "na", "su",
                    "sul", "presso", "在"})
_CJK_OBJECT_SPAN = 12
# The verbs that give access when their object is a channel, team or repository ("write to the
# channel" sends, "add Alice to the channel" gives access).
_ACCESS_VERBS = frozenset({"add", "make", "give", "grant", "set up", "añade", "agrega", "ajoute", "füge", "adicione",
                           "aggiungi", "添加", "追加"})


class ConsentItem(msgspec.Struct, frozen=True, omit_defaults=True):
    """One commit the user asked for: its effect, where (a registrable domain, "" for any site),
    who to (e-mail addresses), the words that asked, and where the item came from."""

    id: str
    effect: str
    site: str = ""
    recipients: tuple[str, ...] = ()
    words: str = ""

    def describe(self) -> str:
        """In plain words, as the side panel lists it."""
        where = f" on {self.site}" if self.site else ""
        to = f" to {', '.join(self.recipients)}" if self.recipients and self.effect == "send" else ""
        return f"{EFFECT_WORDS.get(self.effect, self.effect)}{to}{where}"


class TaskConsent:
    """The consent of one thread (or one what-if case)."""

    __slots__ = ("_items", "_removed", "delegated")

    def __init__(self) -> None:
        self._items: dict[str, ConsentItem] = {}
        self._removed: set[str] = set()
        self.delegated = ""  # the words with which the task handed its choices to what is read

    def add_message(self, text: str) -> list[ConsentItem]:
        """Add what the user's message asks for; returns the items it added."""
        added = []
        self.delegated = self.delegated or delegation_in(text)
        for item in derive(text):
            if item.id not in self._items and len(self._items) < MAX_ITEMS:
                self._items[item.id] = item
                added.append(item)
        return added

    def remove(self, item_id: str) -> bool:
        """Take an item back (the user removed it); True when there was one."""
        if item_id in self._items and item_id not in self._removed:
            self._removed.add(item_id)
            return True
        return False

    def items(self) -> list[ConsentItem]:
        """The items in force, oldest first."""
        return [item for key, item in self._items.items() if key not in self._removed]

    def covers(self, effect: str, host: str) -> ConsentItem | None:
        """The item that covers a commit of `effect` on `host` (None when none does)."""
        if not self._items:
            return None
        site = site_of(host) if host else ""
        fallback = None
        for key, item in self._items.items():
            if key in self._removed or (item.site and item.site != site):
                continue
            # Installing or connecting an app is granting it access: its consent screen is part
            # of the install the user asked for.
            if item.effect == effect or (effect == "access" and item.effect == "install"):
                return item
            if effect == "submit" and fallback is None:
                fallback = item
        return fallback

    def __len__(self) -> int:
        return len(self.items())


def derive(text: str) -> list[ConsentItem]:
    """The items a user's message asks for (see the module docstring)."""
    if not text:
        return []
    values = scan(text[:20_000])
    norm = normalize(_masked(text[:20_000], values), 20_000)
    vocab = vocabulary()
    words = norm.split(" ")
    languages = _languages(words)
    asked: list[tuple[str, str]] = []  # (effect, the words that asked)
    # "Sigue las instrucciones" hands the choice away; its "sigue" follows no one.
    handed = {(at, phrase.split(" ")[0]) for at, phrase, _ in vocab.delegation.all_found(norm)}
    for lang in languages:
        for at, phrase, effect in vocab.task_by_language[lang].all_found(norm):
            if (at, phrase.split(" ")[0]) in handed:
                continue
            if lang == "en" and phrase in vocab.nouny and any(w in vocab.determiners for w in words[max(0, at - 2):at]):
                continue  # "the latest email" or "my Amazon order" names a thing, "email Bob" asks
            if effect == "send" and _to_user(norm, words, at, phrase):
                continue  # "tell me what needs my attention" answers the user
            if not _negated(norm, words, at, phrase):
                asked.append((effect, phrase))
        changes = [f for f in vocab.change_verbs[lang].all_found(norm) if not _negated(norm, words, f[0], f[1])]
        nouns = vocab.objects[lang].all_found(norm) if changes else []
        for at, noun, effects in nouns:
            # The object follows its verb closely: "update my rent payment", not "the order they
            # are given ... create a file".
            verb = next((c for c in changes if 0 < at - c[0] <= (_CJK_OBJECT_SPAN if has_cjk(noun) else _OBJECT_SPAN)),
                        None)
            if verb is None:
                continue
            for effect in effects.split(","):
                if effect != "access" or verb[1] in _ACCESS_VERBS:
                    asked.append((effect, f"{verb[1]} … {noun}"))
    if not asked:
        return []
    if any(e == "send" for e, _ in asked) and _about_money(words, values):
        asked.append(("pay", next(p for e, p in asked if e == "send")))  # "send them the difference"
    sites = sorted({v.site for v in values if v.kind == WEB and v.site and _acted_on(text, v.shown)})
    recipients = tuple(sorted({v.shown.lower() for v in values if v.kind == EMAIL}))[:10]
    out: dict[str, ConsentItem] = {}
    for effect, phrase in asked:
        for site in sites or [""]:
            key = f"{effect}@{site or '*'}"
            if key not in out:
                out[key] = ConsentItem(id=key, effect=effect, site=site, words=phrase,
                                       recipients=recipients if effect == "send" else ())
    return list(out.values())


def delegation_in(text: str) -> str:
    """The words with which a message hands its choices to something the agent will read ("" when
    it does not)."""
    if not text:
        return ""
    norm = normalize(_masked(text[:20_000], scan(text[:20_000])), 20_000)
    found = vocabulary().delegation.all_found(norm)
    return found[0][1] if found else ""


def _masked(text: str, values: list) -> str:
    """`text` with each value it names (an address, a URL, an account) as one word, so that words
    are counted around it and words inside it ("company-todo-list.com") are not read."""
    for value in values:
        if value.shown and len(value.shown) > 1:
            text = text.replace(value.shown, " x ")
    return text


def _languages(words: list[str]) -> list[str]:
    """The languages a message is written in, by their commonest words (every language when it
    has none of them: "buy kettle"); Chinese and Japanese always, as their script tells them."""
    stopwords = vocabulary().stopwords
    counts = {lang: sum(1 for w in words if w in common) for lang, common in stopwords.items()}
    top = max(counts.values(), default=0)
    if top == 0:
        return list(vocabulary().task_by_language)
    chosen = [lang for lang, n in counts.items() if n >= max(2, top // 2) or n == top]
    return [*chosen, *(lang for lang in ("zh", "ja") if lang in vocabulary().task_by_language)]


def _negated(norm: str, words: list[str], at: int, phrase: str) -> bool:
    negations = vocabulary().negations
    if has_cjk(phrase):
        before = norm[max(0, at - _CJK_NEGATION_WINDOW):at]
        after = norm[at + len(phrase):at + len(phrase) + 4]
        return negations.longest(before) is not None or negations.longest(after) is not None
    window = " ".join(words[max(0, at - _NEGATION_WINDOW):at])
    return bool(window) and negations.longest(window) is not None


def _to_user(norm: str, words: list[str], at: int, phrase: str) -> bool:
    """Whether a verb of telling addresses the user ("tell me", "dime" is its own verb, "告诉我")."""
    to_user = vocabulary().to_user
    if has_cjk(phrase):
        after = norm[at + len(phrase):at + len(phrase) + 2]
        return any(after.startswith(w) for w in to_user if has_cjk(w))
    end = at + len(phrase.split(" "))
    return end < len(words) and (words[end] in to_user or " ".join(words[end:end + 2]) in to_user)


def _acted_on(text: str, shown: str) -> bool:
    """Whether a site the message names is where to act ("buy it on argos.co.uk") rather than
    where to read ("her e-mail is on her website: dora.example" names a source)."""
    at = text.find(shown)
    before = text[max(0, at - 32):at].lower().replace(":", " : ").split() if at > 0 else []
    if not before or before[-1] not in _WHERE:
        return False
    # "the article at informations.com" names what to read, "post it at informations.com" where.
    return len(before) < 2 or normalize(before[-2]) not in vocabulary().sources


def _about_money(words: list[str], values: list) -> bool:
    money = vocabulary().money
    return any(v.kind == IBAN for v in values) or any(w in money for w in words) or any(
        c in "€$£¥" for w in words for c in w)


def items_from(texts: Iterable[str]) -> TaskConsent:
    """A consent built from several messages (a what-if case's user words)."""
    consent = TaskConsent()
    for text in texts:
        consent.add_message(text)
    return consent
