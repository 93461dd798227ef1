"""`ThreadProvenance`: each thread's provenance index (`host.gatekeeper.provenance`), kept up to
date from the thread's stored nodes, so the gatekeeper knows where every value the model was
shown came from.

    user message             its text: the user's words, and the commits it asks for (the task's
                             consent, `host.gatekeeper.consent`); attached page or selection blocks and
                             the submission tab's title: untrusted (their origin); the tab's site:
                             a place the user chose
    tool result              untrusted, labelled with its origin (page, MCP server, fetched URL);
                             an answer the user gave to ask_user: the user's words
    approval decision        a note the user typed: their words; an accept: the accepted call's
                             values (and a typed name) become the user's for the thread
    memory_write / _read     see below
    model text, notices      nothing (the model's words are not the user's)

Nodes are read once each, in append order (`seq`), when a result is written and before a call
is judged; a restart rebuilds an index from the stored nodes on first use. Every branch of the
thread counts: what the user wrote on an abandoned branch is still theirs, and what a tool
showed there is still untrusted.

Memory the model wrote carries the provenance of what it was derived from: when a memory_write
succeeds, the values of the memory that were the user's in that thread are recorded with its key
(`eng_memory_trust`); a memory_read result is untrusted content, except those recorded values of
the memories it lists, which are the user's in the reading thread too.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from host.engine.records import DecisionBody, NodeRow, ToolCallBody, ToolResultBody, UserBody
from host.engine.store import EngineStore
from host.gatekeeper.provenance import Provenance
from host.gatekeeper.provenance_check import trust_accepted, trust_shown
from host.gatekeeper.facts.values import scan

MAX_THREADS = 16
log = logging.getLogger("tabwarden.engine")
_USER_ANSWERS = frozenset({"ask_user"})
_ENV_URL = re.compile(r'url="((?:[^"\\]|\\.)*)"')


class _Entry:
    __slots__ = ("index", "seq", "calls", "by_call", "removed", "own")

    def __init__(self) -> None:
        self.removed: set[str] = set()  # consent items the user took back
        self.own: tuple[str, ...] = ()  # the user's details the index holds
        self.index = Provenance()
        self.seq = 0
        self.calls: OrderedDict[str, ToolCallBody] = OrderedDict()  # recent call nodes, for accepts
        self.by_call: OrderedDict[str, ToolCallBody] = OrderedDict()  # the same by call id, for results


class ThreadProvenance:
    """The provenance index of every busy thread (bounded; an evicted one is rebuilt on use)."""

    def __init__(self, store: EngineStore, details: Callable[[], tuple[str, ...]] | None = None) -> None:
        self._store = store
        self._details = details  # the user's own details from settings
        self._threads: OrderedDict[str, _Entry] = OrderedDict()

    def of(self, thread_id: str) -> Provenance:
        """The thread's index, with every node stored so far read. Raises the store's error when
        the nodes cannot be read (the caller fails closed)."""
        own = self._own()
        entry = self._threads.pop(thread_id, None)
        if entry is None or entry.own != own:  # new, or the user changed their details: rebuild
            entry = _Entry()
            entry.removed = self._store.removed_consent(thread_id)
            entry.own = own
            for detail in own:
                entry.index.add_own(detail)
        self._threads[thread_id] = entry
        while len(self._threads) > MAX_THREADS:
            self._threads.popitem(last=False)
        for node in self._store.nodes(thread_id):
            if node.seq > entry.seq:
                _read(entry, node, self._store)
                entry.seq = node.seq
        for item_id in entry.removed:
            entry.index.consent.remove(item_id)
        return entry.index

    def _own(self) -> tuple[str, ...]:
        if self._details is None:
            return ()
        try:
            return self._details()
        except Exception:  # settings that cannot be read give no details: values then ask more
            log.warning("the user's details cannot be read", exc_info=True)
            return ()

    def remove_consent(self, thread_id: str, item_id: str) -> bool:
        """Take one commit of the thread's consent back, durably; False when it holds no such
        item. Raises the store's error (nothing is taken back then)."""
        consent = self.of(thread_id).consent
        if item_id not in {item.id for item in consent.items()}:
            return False
        self._store.remove_consent(thread_id, item_id)
        self._threads[thread_id].removed.add(item_id)
        consent.remove(item_id)
        return True


def _read(entry: _Entry, node: NodeRow, store: EngineStore) -> None:
    index, body = entry.index, node.body
    if isinstance(body, UserBody):
        index.add_user(body.text)
        # Only the user's own message asks for commits: never an answer, a note or a page.
        index.consent.add_message(body.text)
        for block in body.context:
            _read_block(index, block)
        if body.environment:
            found = _ENV_URL.search(body.environment)
            if found is not None:
                index.add_place(found.group(1).replace('\\"', '"'))
            index.add_untrusted(body.environment, "the tab you asked from")
    elif isinstance(body, ToolCallBody):
        for table, key in ((entry.calls, node.id), (entry.by_call, body.call_id)):
            table[key] = body
            while len(table) > 64:
                table.popitem(last=False)
    elif isinstance(body, ToolResultBody):
        if body.tool in _USER_ANSWERS and body.provenance == "user" and body.ok:
            index.add_user(body.text)
        else:
            index.add_untrusted(body.text, body.origin or body.tool)
        if body.tool == "memory_write" and body.ok:
            _wrote_memory(entry, entry.by_call.get(body.call_id), node.created_at, store)
        elif body.tool == "memory_read" and body.ok:
            _read_memory(index, body.text, store)
    elif isinstance(body, DecisionBody):
        _read_decision(entry, body)


def _wrote_memory(entry: _Entry, call: ToolCallBody | None, at: float, store: EngineStore) -> None:
    """A memory the model wrote keeps which of its values were the user's in this thread."""
    if call is None or not isinstance(call.params.get("key"), str):
        return
    value = call.params.get("value")
    users = [v.key for v in scan(value) if entry.index.is_trusted(v)] if isinstance(value, str) else []
    store.put_memory_trust(call.params["key"].strip(), users, at)


def _read_memory(index: Provenance, text: str, store: EngineStore) -> None:
    """Values of memories that were the user's when the model wrote them are the user's again."""
    recorded = store.memory_trust()
    users = {k for memory, keys in recorded.items() if f"- {memory}:" in text for k in keys}
    for value in scan(text):
        if value.key in users:
            index.trust(value)


def _read_block(index: Provenance, block: dict[str, Any]) -> None:
    kind = str(block.get("kind", "page"))
    texts = [str(p.get("text", "")) for p in block.get("content") or () if isinstance(p, dict) and p.get("type") != "image"]
    for text in texts:
        # Only a block the user wrote is theirs; pages, selections, files and resources are not.
        if block.get("provenance") == "user" and block.get("trust") == "trusted":
            index.add_user(text)
        else:
            index.add_untrusted(text, str(block.get("origin") or block.get("label") or kind))


def _read_decision(entry: _Entry, body: DecisionBody) -> None:
    decision = body.decision if isinstance(body.decision, dict) else {}
    note = decision.get("note")
    if isinstance(note, str) and body.by == "user":
        entry.index.add_user(note)
    kind = str(decision.get("kind", ""))
    if not kind.startswith("accept") or body.by != "user":
        return
    for shown in body.shown_values:
        if shown in body.field_values:  # a payment field's value: theirs in that kind of field only
            entry.index.accept_in_field(shown, body.field_values[shown])
        else:
            trust_shown(entry.index, shown)  # where a link led, the account a page gave: as the card said
    call = entry.calls.get(body.item_id)
    if call is None:
        return
    trust_accepted(entry.index, call.tool, call.params, body.field_values)
