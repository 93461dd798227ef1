"""Tool-definition pins: the definition (a hash of its description and input schema) an MCP
tool had when the user's approvals, grants and rules for it were made.

A server may change a tool after the user trusted it (`lookup(q)` becoming `lookup(q,
forward_to, payload)`). The first definition seen for a (tool, origin) is pinned; a call whose
definition differs from the pin has its session grants and its approval-made site rules
dropped and must be approved again, and that approval pins the new definition. Pins are stored
(`gk_tool_pins`) so a change made while the host was down is caught too.

Any storage failure raises `StoreError`; the service turns it into a fail-closed
`GatekeeperUnavailable`.
"""

from __future__ import annotations

import threading

from host.store.db import Store

MAX_DEFINITION = 128
FACT = "definition"  # the target fact an MCP call carries its definition hash in


class ToolPins:
    """The pinned definitions, cached in memory over the store (or in memory only)."""

    def __init__(self, store: Store | None) -> None:
        self._store = store
        self._pins: dict[tuple[str, str], str] | None = None
        self._lock = threading.Lock()

    def _loaded(self) -> dict[tuple[str, str], str]:
        if self._pins is None:
            rows = self._store.query("SELECT tool, origin, definition FROM gk_tool_pins") if self._store else []
            self._pins = {(r["tool"], r["origin"]): r["definition"] for r in rows}
        return self._pins

    def pinned(self, tool: str, origin: str) -> str | None:
        """The pinned definition of `tool` at `origin` (None: never seen)."""
        with self._lock:
            return self._loaded().get((tool, origin))

    def pin(self, tool: str, origin: str, definition: str) -> None:
        """Pin `definition` (persisted before returning)."""
        with self._lock:
            pins = self._loaded()
            if self._store is not None:
                self._store.execute(
                    "INSERT INTO gk_tool_pins (tool, origin, definition) VALUES (?, ?, ?) "
                    "ON CONFLICT (tool, origin) DO UPDATE SET definition = excluded.definition",
                    (tool, origin, definition))
            pins[(tool, origin)] = definition


def definition_of(target: object) -> str | None:
    """The definition hash an MCP call's target facts carry (None when absent or malformed)."""
    if not isinstance(target, dict):
        return None
    value = target.get(FACT)
    return value if isinstance(value, str) and 0 < len(value) <= MAX_DEFINITION else None
