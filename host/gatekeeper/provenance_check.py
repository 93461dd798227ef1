"""Which values of a write did not come from the user: the facts of step `untrusted_value`.

What is read from a call (see the README for the matching):
  * URL-bearing tools (`navigate`, `tab_open`, `fetch_url`, `download`): the destination, where
    untrusted content named its site and the user did not, unless a navigation stays on the
    registrable domain of the tab it leaves; and every decisive value the URL carries;
  * fills (`type`, `select_option`, `batch_actions`, ...) and script: every decisive value in
    the text, and a typed value that is wholly a name seen only in untrusted content;
  * MCP and other outside tools: every decisive value in every string argument.
Clicks, hovers and drags send no values of their own: where their element leads is judged as a
navigation there (`decision.check`'s destinations).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from host.gatekeeper.provenance import Provenance
from host.gatekeeper.facts.normalize import percent_decode
from host.gatekeeper.facts.values import (NUMBER, WEB, Value, handle_key, kind_words, name_key, names_in, scan, scannable,
                                          site_of, web_value)
from host.tools.catalog import MCP_PREFIX, lookup
from host.tools.quoting import quoted
from host.tools.spec import ToolSpec

# Keys that never carry a value sent anywhere: the model's description and handle of an element.
_NOT_SENT = frozenset({"ref", "element", "tabId", "frameId", "mode", "submit", "slowly", "button",
                       "doubleClick", "direction", "amount", "target", "format", "annotate"})
_FILL_KEYS = frozenset({"text", "values", "actions"})
_MAX_STRINGS = 256
_MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class UntrustedValue:
    """A decisive value (or name) of a write that the user did not give."""

    kind: str  # email | web | iban | number | name
    what: str  # the kind in words: "IBAN", "card number", "name"...
    shown: str  # as the call carries it
    seen_at: str | None  # where it was seen in untrusted content (None: nowhere still indexed)

    def describe(self) -> str:
        """`the IBAN "US13 3000 …" appears only in content from "www.bank.example", not in your request`."""
        value = quoted(self.shown, 80)
        if self.seen_at is not None:
            return f"the {self.what} {value} appears only in content from {quoted(self.seen_at, 200)}, not in your request"
        return f"the {self.what} {value} does not appear in your request"

    def fact(self) -> dict[str, Any]:
        """As the approval request carries it, for the card."""
        return {"kind": self.kind, "what": self.what, "value": self.shown, "seenAt": self.seen_at}


def users_values(prov: Provenance, facts: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """For each kind of value from content that a card shows (a fact's `what`), the values of that
    kind the user wrote themselves (`Provenance.users_values`), for the card to set the user's
    IBAN beside the page's. Apart from the facts, which say only what the call would send (the
    audit, `policy check` and an accepted card read them as that)."""
    out: dict[str, list[str]] = {}
    for fact in facts:
        what = str(fact.get("what") or "")
        if what and what not in out:
            mine = prov.users_values(str(fact.get("kind") or ""), what)
            if mine:
                out[what] = mine
    return out


def untrusted_values(spec: ToolSpec | None, tool: str, params: Mapping[str, Any], prov: Provenance,
                     tab_origin: str, held: Iterable[str] = (), *, names: bool = True,
                     page_chosen: bool = False, field: str | None = None,
                     reference: bool = False) -> list[UntrustedValue]:
    """The values of a write to `tab_origin` (the tab's or server's origin) that the user did not
    give, in the order the call carries them (each once); `held` are what fields will hold after
    it (a value typed in pieces is judged whole); `names`: whether typed names are judged too;
    `page_chosen`: the URL is where a page's link or form leads (chosen by the page at
    `tab_origin`), not one the model wrote; `field`: the kind of payment field the call types
    into (`decisive_fields`), where the whole text must be the user's whatever its shape;
    `reference`: it types a payment's reference, where a long number is an invoice's."""
    if spec is not None and spec.url_param is not None:
        return _url_values(spec, params.get(spec.url_param), prov, tab_origin, page_chosen)
    found: dict[str, UntrustedValue] = {}
    fill = spec is not None and spec.category == "fill"
    accepted: set[str] = set()  # what was accepted on a card for this kind of field: nothing more to judge
    if fill and field is not None:
        for text in _typed_texts(params, held):
            if not text.strip():
                continue
            whole = text
            if tool == "press_key":  # keys one by one: the field holds the start of a value yet
                if prov.starts_users_value(text):
                    continue
                whole = prov.content_value_begun(text) or text
            if prov.wrote(whole, field) and not prov.wrote(whole):
                accepted.add(text)
            elif not prov.wrote(whole):
                found.setdefault(f"field:{whole.strip()}", UntrustedValue(
                    "field", field, whole.strip()[:200], prov.text_seen_at(whole)))
    # A piece of a value the user gave, typed into a field that then holds it whole, is theirs.
    users_whole: list[str] = []
    for text in held if fill else ():
        if text in accepted:
            continue
        if prov.starts_users_value(text):
            users_whole.append(_digits(text))
            continue  # the user's own account, not all typed yet
        values = scan(text)
        if values and all(prov.is_trusted(v) for v in values):
            users_whole.append(_digits(text))
        begun = prov.content_value_begun(text) if tool == "press_key" else None
        for value in values:
            if value.key not in found and not prov.is_trusted(value) and not (reference and value.kind == NUMBER):
                whole = scan(begun) if begun else []
                value = whole[0] if whole else value  # the account the keys are spelling, as the page showed it
                found[value.key] = _untrusted(value, prov)
    for key, text in sent_strings(params, tool, spec):
        if text in accepted:
            continue
        values = scan(text)
        for value in values:
            if value.key in found or prov.is_trusted(value) or (reference and value.kind == NUMBER):
                continue
            if value.kind == NUMBER and any(value.key.split(":", 1)[1] in whole for whole in users_whole):
                continue
            found[value.key] = _untrusted(value, prov)
        if fill and names and key == "text":
            name = name_key(text)
            if name is not None and name not in found and not prov.name_is_users(name):
                seen = prov.name_seen_at(name)
                if seen is not None or prov.dropped:
                    found[name] = UntrustedValue("name", "name", text.strip(), seen)
            # An account handle from a page ("contractor-joe" from an issue, typed into an invite
            # field) decides who gets in as a name does.
            handle = handle_key(text) if name is None and not values else None
            if handle is not None and handle not in found and not prov.name_is_users(handle):
                seen = prov.name_seen_at(handle)
                if seen is not None:
                    found[handle] = UntrustedValue("name", "user name", text.strip(), seen)
            # A name inside a longer text ("a room at the Riverside View Hotel"), only where a
            # page showed it: a name the user never wrote and no page showed is the model's own.
            for carried in names_in(text) if name is None else ():
                if carried not in found and not prov.name_is_users(carried):
                    seen = prov.name_seen_at(carried)
                    if seen is not None:
                        found[carried] = UntrustedValue("name", "name", carried.title(), seen)
    return list(found.values())


def _url_values(spec: ToolSpec, raw: Any, prov: Provenance, tab_origin: str, page_chosen: bool) -> list[UntrustedValue]:
    """`untrusted_values` of a URL-bearing call: its destination and what the URL carries."""
    found: dict[str, UntrustedValue] = {}
    value = web_value(str(raw)) if isinstance(raw, str) and raw else None
    # A host-side fetch or download has no tab: its resolved origin is where it goes.
    here = _site(tab_origin) if spec.target != "destination" else ""
    # A site no content named is the model's own choice (the user's mail, their bank's
    # known address): opening it sends nothing of content's. A site content named may be
    # where an injection sends the agent, and asks once (an approval trusts it).
    if value is not None and value.site != here and not prov.is_trusted(value) and not prov.site_is_users(value.site):
        seen = prov.seen_at(value) or prov.site_seen_at(value.site) or (tab_origin if page_chosen else None)
        if seen is not None or prov.dropped:
            found[value.key] = UntrustedValue(value.kind, kind_words(value), value.shown, seen)
    # What the URL carries is sent too, to whatever site it goes to: an IBAN in a transfer
    # URL, a recipient in a prefilled compose URL, a page's address in a redirect's query.
    # A site's own link back to itself carries that site's own business (an item's number).
    if page_chosen and value is not None and value.site == here:
        return list(found.values())
    own_sites = {here, value.site if value is not None else ""}
    for carried in scan(url_tail(raw)) if isinstance(raw, str) else ():
        if carried.key in found or prov.is_trusted(carried) or (carried.kind == WEB and carried.site in own_sites):
            continue
        found[carried.key] = _untrusted(carried, prov)
    return list(found.values())


def _typed_texts(params: Mapping[str, Any], held: Iterable[str]) -> list[str]:
    """What a one-field fill leaves in its field: the whole it will hold, else its text."""
    whole = [text for text in held if isinstance(text, str)]
    if whole:
        return whole[-1:]
    text = params.get("text")
    values = params.get("values")
    if isinstance(text, str):
        return [text]
    if isinstance(values, list):
        return [v for v in values if isinstance(v, str)][:8]
    return []


def trust_accepted(prov: Provenance, tool: str, params: Mapping[str, Any],
                   fields: Mapping[str, str] | None = None) -> None:
    """What the user's approval of a call leaves behind: every value it sends, the URL it opens
    and the names its text carries are the user's for the rest of the task, so that the same
    value in the next field does not ask again. A value the card showed as typed into a payment
    field (`fields`: text -> the field's kind) is the user's in that kind of field only."""
    fields = fields or {}
    for key, text in sent_strings(params, tool):
        kind = fields.get(text.strip())
        if kind is not None:
            prov.accept_in_field(text, kind)
            continue
        for value in scan(text):
            prov.trust(value)
        url = web_value(text) if key == "url" else None
        if url is not None:
            prov.trust(url)
        if key == "text" or name_key(text) is not None or names_in(text):
            prov.trust_name(text)  # an amount or a payee typed and approved is the user's now


def trust_shown(prov: Provenance, text: str) -> None:
    """What the user's approval of a card that showed `text` (a value from content) leaves
    behind: the value, or the site it names, or the name, is the user's from then on."""
    values = scan(text)
    url = web_value(text) if not values and "." in text and " " not in text.strip() else None
    for value in [*values, *([url] if url is not None else [])]:
        prov.trust(value)
        site = web_value(value.site) if value.kind == WEB else None
        if site is not None:
            prov.trust(site)  # the site the card named, whatever page of it comes next
    if not values and (name_key(text) is not None or handle_key(text) is not None or names_in(text)):
        prov.trust_name(text)


def url_tail(url: str) -> str:
    """The path, query and fragment of a URL as the text they carry: percent-escapes decoded
    (repeatedly: `%2540`), `+` and the query's separators read as spaces."""
    rest = url[:8192].split("://", 1)[-1]
    cut = min((i for i in (rest.find(c) for c in "/?#") if i != -1), default=len(rest))
    tail = rest[cut:]
    return percent_decode(tail.replace("+", " ")).replace("&", " ").replace("=", " ")


def sent_strings(params: Mapping[str, Any], tool: str, spec: ToolSpec | None = None) -> Iterator[tuple[str, str]]:
    """(key, text) of what a call of `tool` sends: a URL-bearing tool's URL, what a fill types or
    chooses, a script, every string argument of an MCP or unknown tool; nothing for the rest."""
    if spec is None:
        spec = lookup(tool)
    if spec is not None and spec.url_param is not None:
        raw = params.get(spec.url_param)
        if isinstance(raw, str):
            yield spec.url_param, raw
        return
    if spec is not None and not tool.startswith(MCP_PREFIX) and spec.category not in ("fill", "eval"):
        return
    yield from _strings(params, spec is not None and spec.category == "fill")


def _untrusted(value: Value, prov: Provenance) -> UntrustedValue:
    return UntrustedValue(value.kind, kind_words(value), value.shown, prov.seen_at(value))


def _digits(text: str) -> str:
    return "".join(c for c in scannable(text) if c.isdigit())


def _site(origin: str) -> str:
    if not origin or "://" not in origin:
        return ""
    host = origin.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[0]
    return site_of(host) if "." in host else host


def _strings(params: Any, fill: bool, key: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """(key, text) of the string values a call sends (fills: only what is typed or chosen)."""
    count = 0
    stack: list[tuple[str, Any, int]] = [(key, params, depth)]
    while stack and count < _MAX_STRINGS:
        name, value, level = stack.pop()
        if isinstance(value, str):
            count += 1
            yield name, value
        elif level >= _MAX_DEPTH:
            continue
        elif isinstance(value, Mapping):
            for k, v in value.items():
                k = str(k)
                if k in _NOT_SENT or (fill and level == 0 and k not in _FILL_KEYS):
                    continue
                stack.append((k, v, level + 1))
        elif isinstance(value, (list, tuple)):
            stack.extend((name, v, level + 1) for v in reversed(value))
