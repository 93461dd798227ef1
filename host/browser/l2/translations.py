"""The cache of L1 refs translated to backend node ids (and their frames) for trusted (L2) actions."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Translation:
    """The element an L1 ref names, as the debugger knows it."""

    backend_node_id: int
    frame_id: str  # the frame whose document holds the element


@dataclass
class L1Translations:
    """Translations of L1 refs, per tab, valid for one snapshot under one epoch."""

    _tabs: dict[int, tuple[int, str, dict[str, Translation]]] = field(default_factory=dict)

    def get(self, tab_id: int, epoch: int, snapshot: str, ref: str) -> Translation | None:
        entry = self._tabs.get(tab_id)
        if entry is None or entry[0] != epoch or entry[1] != snapshot:
            return None
        return entry[2].get(ref)

    def put(self, tab_id: int, epoch: int, snapshot: str, ref: str, translation: Translation) -> None:
        entry = self._tabs.get(tab_id)
        if entry is None or entry[0] != epoch or entry[1] != snapshot:
            entry = self._tabs[tab_id] = (epoch, snapshot, {})
        entry[2][ref] = translation

    def forget(self, tab_id: int) -> None:
        self._tabs.pop(tab_id, None)
