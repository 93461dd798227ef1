"""Deep refs: `c{managerEpoch}_{tabEpoch}_{generation}_{n}`, minted by `read_page_deep`.

A deep ref is bound to its tab, the flat session and frame it was read in, that frame's loader
and the backend id of its document. The tab's lifecycle epoch (see host.cdp.manager) is part of
the ref, so any navigation, frame change, child-target change or debugger detach makes every
older ref stale at once; a newer `read_page_deep` replaces the previous generation. Lookups
fail with `stale_ref` and one of the reasons below, before anything is sent to the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import msgspec

from host.tools.browser_params import DEEP_REF_PATTERN
from host.tools.failure import ToolCode, ToolFailure

_DEEP_REF = re.compile(DEEP_REF_PATTERN)


class StaleReason:
    """Why a deep ref no longer points at its element."""

    EPOCH_MISMATCH = "ref_epoch_mismatch"  # minted by another host run, or before the page changed
    NOT_FOUND = "ref_not_found"  # no such ref in the tab's current deep read
    INVALIDATED = "ref_invalidated"  # replaced by a newer read, or its element is gone
    DOCUMENT_CHANGED = "document_identity_changed"  # its frame now holds another document
    LIFECYCLE_CHANGED = "lifecycle_changed_during_preparation"  # the page changed while the action was prepared


def is_deep_ref(ref: str | None) -> bool:
    """True for a well-formed deep ref."""
    return isinstance(ref, str) and _DEEP_REF.match(ref) is not None


def stale(ref: str, reason: str, why: str) -> ToolFailure:
    """The `stale_ref` failure for a deep ref (nothing was sent to the page)."""
    return ToolFailure(ToolCode.STALE_REF, f"ref {ref} is stale ({why}); call read_page_deep again and use a ref from it",
                       phase="resolve", retryable=True, details={"reason": reason, "ref": ref, "dispatched": False})


class DeepNode(msgspec.Struct, frozen=True, kw_only=True):
    """An element a deep ref names, and the identity it was read under."""

    ref: str
    backend_node_id: int
    session_id: str | None  # the flat child session (None: the tab's own)
    frame_id: str
    loader_id: str
    document_backend_id: int
    role: str
    name: str = ""
    input_type: str | None = None
    source: str = "ax"  # "ax" (accessibility tree) or "listener" (event-listener scan)


@dataclass
class DeepGeneration:
    """One `read_page_deep` of a tab."""

    manager_epoch: str
    tab_epoch: int
    generation: int
    nodes: dict[str, DeepNode] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        return f"c{self.manager_epoch}_{self.tab_epoch}_{self.generation}_"


class DeepRefMap:
    """The latest deep read of every tab."""

    def __init__(self, manager_epoch: str):
        self.manager_epoch = manager_epoch
        self._generations: dict[int, DeepGeneration] = {}
        self._counters: dict[int, int] = {}

    def begin(self, tab_id: int, tab_epoch: int) -> DeepGeneration:
        """A new generation for a read under `tab_epoch` (not yet current: see `commit`)."""
        number = self._counters.get(tab_id, 0) + 1
        self._counters[tab_id] = number
        return DeepGeneration(self.manager_epoch, tab_epoch, number)

    def commit(self, tab_id: int, generation: DeepGeneration) -> None:
        """Make `generation` the tab's current deep read (every older ref becomes stale)."""
        self._generations[tab_id] = generation

    def current(self, tab_id: int) -> DeepGeneration | None:
        return self._generations.get(tab_id)

    def resolve(self, tab_id: int, ref: str, tab_epoch: int, epoch_reason: str = "") -> DeepNode:
        """The node of `ref` if the tab is still the page it was read from; else `stale_ref`."""
        parts = ref[1:].split("_") if is_deep_ref(ref) else []
        if len(parts) != 4:
            raise stale(ref, StaleReason.NOT_FOUND, "not a deep ref")
        manager, epoch, generation = parts[0], int(parts[1]), int(parts[2])
        if manager != self.manager_epoch:
            raise stale(ref, StaleReason.EPOCH_MISMATCH, "it comes from an earlier run of the host")
        if epoch != tab_epoch:
            why = f"the page changed since it was read: {epoch_reason}" if epoch_reason else "the page changed since it was read"
            raise stale(ref, StaleReason.EPOCH_MISMATCH, why)
        current = self._generations.get(tab_id)
        if current is None:
            raise stale(ref, StaleReason.NOT_FOUND, "this tab has no deep read")
        if generation != current.generation or epoch != current.tab_epoch:
            raise stale(ref, StaleReason.INVALIDATED, "a newer read_page_deep replaced it")
        node = current.nodes.get(ref)
        if node is None:
            raise stale(ref, StaleReason.NOT_FOUND, "no such ref in the latest deep read")
        return node

    def check_known(self, tab_id: int, ref: str) -> None:
        """Raise stale_ref unless `ref` is in the tab's latest deep read (the epoch is checked
        when the call runs, against the page as it is then)."""
        parts = ref[1:].split("_") if is_deep_ref(ref) else []
        if len(parts) != 4:
            raise stale(ref, StaleReason.NOT_FOUND, "not a deep ref")
        if parts[0] != self.manager_epoch:
            raise stale(ref, StaleReason.EPOCH_MISMATCH, "it comes from an earlier run of the host")
        current = self._generations.get(tab_id)
        if current is None:
            raise stale(ref, StaleReason.NOT_FOUND, "this tab has no deep read")
        if not ref.startswith(current.prefix):
            raise stale(ref, StaleReason.INVALIDATED, "a newer read_page_deep replaced it")
        if ref not in current.nodes:
            raise stale(ref, StaleReason.NOT_FOUND, "no such ref in the latest deep read")

    def peek(self, tab_id: int, ref: str) -> DeepNode | None:
        """The node of `ref` in the tab's latest deep read, without any freshness check (for
        describing a call to the gatekeeper)."""
        current = self._generations.get(tab_id)
        return current.nodes.get(ref) if current is not None else None

    def forget(self, tab_id: int) -> None:
        """Drop a tab's deep read (the tab closed)."""
        self._generations.pop(tab_id, None)

    def move(self, old_tab: int, new_tab: int) -> None:
        """A replaced tab keeps nothing: its epoch changed anyway."""
        self._generations.pop(old_tab, None)
        self._generations.pop(new_tab, None)

    def describe(self, tab_id: int) -> dict[str, Any]:
        """A JSON-ready view for debugging."""
        current = self._generations.get(tab_id)
        if current is None:
            return {"tabId": tab_id, "generation": None, "refs": []}
        return {"tabId": tab_id, "generation": current.prefix[:-1], "refs": [msgspec.to_builtins(n) for n in current.nodes.values()]}


def deep_facts(nodes: Iterable[DeepNode | None]) -> dict[str, Any]:
    """Element facts for the gatekeeper from deep refs (same shape as the L1 ones)."""
    known = [n for n in nodes if n is not None]
    types = [n.input_type for n in known if n.input_type]
    facts: dict[str, Any] = {"hints": [{"ref": n.ref, "role": n.role, "name": n.name[:200], **({"inputType": n.input_type} if n.input_type else {})}
                                       for n in known]}
    if types:
        facts["input_types"] = types
        if len(types) == 1:
            facts["input_type"] = types[0]
    return facts
