"""The host-side ref map: for every tab, the refs of its latest snapshot with their hints, plus
a bounded memory of older refs. The gatekeeper and the approval card learn from it what an
action targets (a password field, a button named "Delete") without asking the page again.

It mirrors the page executor's own map: every snapshot the executor takes travels to the host
and replaces the tab's entry here, and the older refs become prior hints, as in the page.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any, Iterable

import msgspec

from host.browser.wire import SnapshotRef

MAX_PRIOR = 500
MAX_REFS_PER_SNAPSHOT = 50_000
MAX_VALUES = 2000
# The snapshots before the latest whose texts are kept as baselines a diff may compare with.
EARLIER_BASELINES = 2
_REF = re.compile(r"^s([0-9a-z]+)_(\d+)_(\d+)$")

class RefHint(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """What a ref points at, as the page described it when the snapshot was taken."""

    ref: str
    role: str
    name: str = ""
    tag: str = ""
    input_type: str | None = None
    label: str | None = None
    placeholder: str | None = None
    # Where acting on it can take the page ({"url", "method", "newTab"}), when it can.
    destination: dict[str, Any] | None = None
    # The snapshot the ref belongs to ("s<doc>_<n>"): its generation.
    snapshot: str = ""
    # Form fields: the element across snapshots, its autocomplete and name attributes, and
    # whether the page marks it as a credential (whose value the host is never sent).
    element_key: str | None = None
    autocomplete: str | None = None
    field_name: str | None = None
    credential: bool = False
    # What tells a commit from a step (`host.gatekeeper.facts.consequence`): the element submits
    # its form, the kinds of field that form carries, the nearest heading above it.
    submits: bool = False
    form_fields: list[str] | None = None
    heading: str | None = None


class TabRefs:
    """The refs of one tab."""

    __slots__ = ("doc_token", "snapshot_id", "snapshot", "text", "hidden", "earlier", "current", "prior", "values")

    def __init__(self) -> None:
        self.doc_token = ""
        self.snapshot_id = 0
        self.snapshot = ""
        self.text = ""  # the latest snapshot text: the baseline of the next diff
        self.hidden: tuple[str, ...] = ()  # the hashes of the lines its budget left out
        # (snapshot, text, hidden) of the snapshots before the latest one, latest first.
        self.earlier: list[tuple[str, str, tuple[str, ...]]] = []
        self.current: dict[str, RefHint] = {}
        self.prior: OrderedDict[str, RefHint] = OrderedDict()
        # element key -> the field's latest known value: kept apart from the hints, which are
        # shown and passed around, and looked up by element so that an older ref finds it too.
        self.values: OrderedDict[str, str] = OrderedDict()


def snapshot_of(ref: str) -> tuple[str, int] | None:
    """(document token, snapshot id) of a well-formed ref, else None."""
    match = _REF.match(ref)
    return (match.group(1), int(match.group(2))) if match else None


class RefMap:
    """Ref hints per tab."""

    def __init__(self) -> None:
        self._tabs: dict[int, TabRefs] = {}

    def record(self, tab_id: int, doc_token: str, snapshot_id: int, hints: Iterable[SnapshotRef], text: str = "",
               hidden: Iterable[str] = ()) -> None:
        """Make the snapshot (`doc_token`, `snapshot_id`) with `hints` (the executor's ref
        list), `text` and `hidden` (the hashes of the lines its budget left out) the tab's current
        one. A new document forgets everything of the old one."""
        entry = self._tabs.get(tab_id)
        if entry is None or entry.doc_token != doc_token:
            entry = self._tabs[tab_id] = TabRefs()
        elif snapshot_id < entry.snapshot_id:
            return  # an older snapshot arriving late changes nothing
        for ref, hint in entry.current.items():
            entry.prior.pop(ref, None)
            entry.prior[ref] = hint
        while len(entry.prior) > MAX_PRIOR:
            entry.prior.popitem(last=False)
        label = f"s{doc_token}_{snapshot_id}"
        current: dict[str, RefHint] = {}
        for wire in hints:
            if len(current) >= MAX_REFS_PER_SNAPSHOT:
                break
            # A ref of this document given by this snapshot or kept from an earlier one (a
            # snapshot keeps the refs of the elements whose role and name did not change; a host
            # started since may never have seen the one that gave it).
            made = snapshot_of(wire.ref)
            if made is None or made[0] != doc_token or made[1] > snapshot_id:
                continue
            current[wire.ref] = RefHint(
                ref=wire.ref, role=wire.role[:64], name=wire.name[:200], tag=wire.tag[:64],
                input_type=(wire.input_type or None) and wire.input_type[:64],
                label=(wire.label or None) and wire.label[:200],
                placeholder=(wire.placeholder or None) and wire.placeholder[:200],
                destination=msgspec.to_builtins(wire.destination) if wire.destination is not None else None,
                snapshot=label, element_key=wire.element_key,
                autocomplete=(wire.autocomplete or None) and wire.autocomplete[:200],
                field_name=(wire.field_name or None) and wire.field_name[:200], credential=wire.credential,
                submits=wire.submits, form_fields=list(wire.form_fields) or None,
                heading=(wire.heading or None) and wire.heading[:200],
            )
            if wire.element_key is not None:
                entry.values.pop(wire.element_key, None)
                if wire.value is not None and not wire.credential:
                    entry.values[wire.element_key] = wire.value
        while len(entry.values) > MAX_VALUES:
            entry.values.popitem(last=False)
        if entry.text:
            entry.earlier = [(entry.snapshot, entry.text, entry.hidden), *entry.earlier][:EARLIER_BASELINES]
        entry.doc_token = doc_token
        entry.snapshot_id = snapshot_id
        entry.snapshot = label
        entry.text = text
        entry.hidden = tuple(hidden)
        entry.current = current

    def last_text(self, tab_id: int) -> tuple[str, str]:
        """(document token, text) of the tab's latest snapshot; ("", "") when none."""
        entry = self._tabs.get(tab_id)
        return (entry.doc_token, entry.text) if entry else ("", "")

    def last_hidden(self, tab_id: int) -> tuple[str, ...]:
        """The hashes of the lines the tab's latest snapshot left out for its budget."""
        entry = self._tabs.get(tab_id)
        return entry.hidden if entry else ()

    def earlier_texts(self, tab_id: int) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        """(snapshot, text, hidden line hashes) of the document's snapshots before the latest,
        latest first (a few)."""
        entry = self._tabs.get(tab_id)
        return tuple(entry.earlier) if entry else ()

    def lookup(self, tab_id: int, ref: str) -> RefHint | None:
        """The hint of `ref` in the tab's current snapshot or its recent past, else None."""
        entry = self._tabs.get(tab_id)
        if entry is None:
            return None
        return entry.current.get(ref) or entry.prior.get(ref)

    def value_of(self, tab_id: int, hint: RefHint) -> str | None:
        """The latest value the page reported for the field `hint` names (None: not a field, a
        credential, or unknown)."""
        entry = self._tabs.get(tab_id)
        if entry is None or hint.element_key is None:
            return None
        return entry.values.get(hint.element_key)

    def neighbour_values(self, tab_id: int, hint: RefHint, span: int = 3) -> tuple[list[str], list[str]]:
        """The values of up to `span` form fields before and after the field `hint` names, in
        document order, from the latest snapshot (a credential or unknown value reads "")."""
        entry = self._tabs.get(tab_id)
        if entry is None or hint.element_key is None:
            return [], []
        fields = [h.element_key for h in entry.current.values() if h.element_key is not None]
        if hint.element_key not in fields:
            return [], []
        at = fields.index(hint.element_key)
        values = entry.values
        return ([values.get(k, "") for k in fields[max(0, at - span):at]],
                [values.get(k, "") for k in fields[at + 1:at + 1 + span]])

    def is_current(self, tab_id: int, ref: str) -> bool:
        """True when `ref` belongs to the tab's latest snapshot."""
        entry = self._tabs.get(tab_id)
        return entry is not None and ref in entry.current

    def current_snapshot(self, tab_id: int) -> str:
        """The id of the tab's latest snapshot ("" when none)."""
        entry = self._tabs.get(tab_id)
        return entry.snapshot if entry else ""

    def hints(self, tab_id: int) -> list[RefHint]:
        """The current refs of a tab, in document order."""
        entry = self._tabs.get(tab_id)
        return list(entry.current.values()) if entry else []

    def forget(self, tab_id: int) -> None:
        """Drop a tab (closed, or navigated to another document)."""
        self._tabs.pop(tab_id, None)

    def move(self, old_tab_id: int, new_tab_id: int) -> None:
        """Follow a tab replaced by another id (prerendering, discarding)."""
        entry = self._tabs.pop(old_tab_id, None)
        if entry is not None:
            self._tabs[new_tab_id] = entry

    def describe(self, tab_id: int) -> dict[str, Any]:
        """A JSON-ready view for debugging (`browser.refs`)."""
        entry = self._tabs.get(tab_id)
        if entry is None:
            return {"tabId": tab_id, "snapshot": "", "refs": [], "prior": 0}
        return {
            "tabId": tab_id,
            "snapshot": entry.snapshot,
            "docToken": entry.doc_token,
            "refs": [msgspec.to_builtins(h) for h in entry.current.values()],
            "prior": len(entry.prior),
        }


def target_facts(hints: Iterable[RefHint | None], values: dict[str, str] | None = None) -> dict[str, Any]:
    """Element facts for the gatekeeper: the input types and hints of the refs an action uses,
    and `values` (ref -> the field's current value) for the fields whose value is known."""
    known = [h for h in hints if h is not None]
    types = [h.input_type for h in known if h.input_type]
    facts: dict[str, Any] = {"hints": [msgspec.to_builtins(h) for h in known]}
    if values:
        facts["values"] = dict(values)
    leads = [h.destination for h in known if h.destination]
    if leads:
        facts["destinations"] = leads
    if types:
        facts["input_types"] = types
        if len(types) == 1:
            facts["input_type"] = types[0]
    return facts
