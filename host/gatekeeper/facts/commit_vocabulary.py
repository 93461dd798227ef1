"""The words of `commit_words.json`, normalised once and indexed for the consequence model and
the task consent: phrase lookups by n-gram for scripts that separate words, substring scans for
Chinese and Japanese. Loaded on first use, so the host starts without reading it.

Normalisation (`normalize`) is the same for the data and for the names it is matched against:
NFKC, case folding, zero-width and format characters dropped, Cyrillic and Greek letters that
look Latin mapped to Latin (a page writing `Dеlete` with a Cyrillic `е` still says delete), and
every run of punctuation or space made one space.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).with_name("commit_words.json")
# Phrases are at most this many words long; a name is read to this many words.
MAX_PHRASE_WORDS = 6
MAX_NAME_WORDS = 40
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_SEPARATORS = re.compile(r"[\W_]+")
_FORMAT_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cn"})
# Letters of other scripts that render like Latin ones (the common homoglyphs).
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d", "ӏ": "l", "α": "a", "ο": "o", "ρ": "p", "ν": "v",
    "τ": "t", "ι": "i", "κ": "k", "ε": "e", "υ": "u",
})


def normalize(text: str, limit: int = 2000) -> str:
    """`text` as phrases are matched against it (at most `limit` characters of it are read)."""
    if len(text) <= 120:
        return _normalize_short(text[:limit])
    return _normalize(text, limit)


@functools.lru_cache(maxsize=8192)
def _normalize_short(text: str) -> str:
    return _normalize(text, len(text))


def _normalize(text: str, limit: int) -> str:
    text = unicodedata.normalize("NFKC", text[:limit]).casefold()
    if not text.isascii():
        text = "".join(c for c in text if unicodedata.category(c) not in _FORMAT_CATEGORIES)
        text = text.translate(_LOOKALIKES)
    return _SEPARATORS.sub(" ", text).strip()


def has_cjk(text: str) -> bool:
    """True when `text` holds Chinese or Japanese characters (matched by substring)."""
    return _CJK.search(text) is not None


@dataclass(slots=True)
class Table:
    """Normalised phrases with a value each: by phrase for spaced scripts, as a list for CJK."""

    spaced: dict[str, str] = field(default_factory=dict)
    cjk: list[tuple[str, str]] = field(default_factory=list)

    def add(self, phrase: str, value: str) -> None:
        norm = normalize(phrase)
        if not norm:
            return
        if has_cjk(norm):
            self.cjk.append((norm, value))
        else:
            self.spaced.setdefault(norm, value)

    def longest(self, text: str, *, edges: bool = False) -> tuple[str, str] | None:
        """The longest phrase found in normalised `text`, with its value (None when none is).
        With `edges`, a one-word phrase counts only where a name says what it does: first, or
        last of at most three words ("Delete draft", "Entwürfe löschen"), not "Pick a plan star"."""
        best: tuple[str, str] | None = None
        if self.spaced:
            words = text.split(" ", MAX_NAME_WORDS)[:MAX_NAME_WORDS]
            count = len(words)
            for start in range(count):
                for end in range(min(count, start + MAX_PHRASE_WORDS), start, -1):
                    phrase = " ".join(words[start:end]) if end - start > 1 else words[start]
                    value = self.spaced.get(phrase)
                    if value is not None and edges and end - start == 1 and start != 0 and not (
                            end == count and count <= 3):
                        continue
                    if value is not None:
                        if best is None or len(phrase) > len(best[0]):
                            best = (phrase, value)
                        break
        if self.cjk and has_cjk(text):
            squeezed = text.replace(" ", "")  # "2 段階認証" is "2段階認証"
            for phrase, value in self.cjk:
                if phrase in squeezed and (best is None or len(phrase) > len(best[0])):
                    best = (phrase, value)
        return best

    def all_found(self, text: str) -> list[tuple[int, str, str]]:
        """Every phrase found in normalised `text`: (word position, phrase, value), in order;
        a CJK phrase's position is its character offset."""
        found: list[tuple[int, str, str]] = []
        words = text.split(" ")
        for start in range(len(words)):
            for end in range(min(len(words), start + MAX_PHRASE_WORDS), start, -1):
                phrase = " ".join(words[start:end])
                value = self.spaced.get(phrase)
                if value is not None:
                    found.append((start, phrase, value))
                    break
        if self.cjk and has_cjk(text):
            for phrase, value in self.cjk:
                at = text.find(phrase)
                while at >= 0:
                    found.append((at, phrase, value))
                    at = text.find(phrase, at + len(phrase))
        return found


@dataclass(slots=True)
class Vocabulary:
    """Every table of the word data."""

    commits: Table
    steps: Table
    confirm: Table
    forward: Table
    context: Table
    send_fields: Table
    search_fields: Table
    task: Table
    task_by_language: dict[str, Table]
    change_verbs: dict[str, Table]
    objects: dict[str, Table]
    stopwords: dict[str, frozenset[str]]
    nouny: frozenset[str]
    determiners: frozenset[str]
    money: frozenset[str]
    negations: Table
    final_review: Table
    cart: Table
    agreement: Table
    url: dict[str, tuple[str, ...]]
    url_nonce: frozenset[str]
    languages: tuple[str, ...]
    delegation: Table
    sources: frozenset[str]
    to_user: frozenset[str]


def _table(per_language: dict[str, list[str]], value: str, into: Table | None = None) -> Table:
    table = into if into is not None else Table()
    for phrases in per_language.values():
        for phrase in phrases:
            table.add(phrase, value)
    return table


@functools.cache
def vocabulary() -> Vocabulary:
    """The word data, loaded and indexed on first use."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    commits, context, task = Table(), Table(), Table()
    for effect, per_language in data["commits"].items():
        _table(per_language, effect, commits)
    for effect, per_language in data["context"].items():
        _table(per_language, effect, context)
    for effect, per_language in data["task"].items():
        _table(per_language, effect, task)
    by_language: dict[str, Table] = {}
    for effect, per_language in data["task"].items():
        for lang, phrases in per_language.items():
            _table({lang: phrases}, effect, by_language.setdefault(lang, Table()))
    objects_data = data["task_objects"]
    change_verbs = {lang: _table({lang: verbs}, "change") for lang, verbs in objects_data["verbs"].items()}
    # One noun may ask for several classes ("event": send and submit): its value joins them.
    classes: dict[str, dict[str, list[str]]] = {}
    for effect, per_language in objects_data["nouns"].items():
        for lang, nouns in per_language.items():
            for noun in nouns:
                classes.setdefault(lang, {}).setdefault(noun, []).append(effect)
    objects = {lang: Table() for lang in classes}
    for lang, nouns in classes.items():
        for noun, effects in nouns.items():
            objects[lang].add(noun, ",".join(dict.fromkeys(effects)))
    url = {effect: tuple(" ".join(re.split(r"[^a-z0-9]+", w.lower())).strip() for w in words)
           for effect, words in data["url"].items()}
    languages = tuple(sorted({lang for per in data["commits"].values() for lang in per}))
    return Vocabulary(commits, _table(data["steps"], "step"), _table(data["confirm"], "confirm"),
                      _table(data["forward"], "forward"), context, _table(data["send_fields"], "send"),
                      _table(data["search_fields"], "search"), task, by_language, change_verbs, objects,
                      {lang: frozenset(normalize(w) for w in words) for lang, words in data["stopwords"].items()},
                      frozenset(normalize(w) for w in data["task_nouny"]),
                      frozenset(normalize(w) for w in data["determiners"]),
                      frozenset(normalize(w) or w for w in data["money"]), _table(data["negations"], "not"),
                      _table(data["final_review"], "pay"), _table(data["cart"], "cart"),
                      _table(data["agreement"], "agree"), url,
                      frozenset(data["url_nonce"]), languages, _table(data["delegation"], "delegated"),
                      frozenset(normalize(w) for words in data["sources"].values() for w in words),
                      frozenset(normalize(w) for words in data["to_user"].values() for w in words))
