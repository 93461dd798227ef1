"""The definitions MCP tools were trusted under (see `storage/pins.py`): what a grant, a site
rule or an approval was made for. A tool whose definition changed loses its session grants and
the site rules approvals made for it, and an approval covers only the definition the user was
asked about. Storage errors fail closed.
"""

from __future__ import annotations

import logging

import msgspec

from host.gatekeeper.availability import Availability
from host.gatekeeper.decision import FLAG_APPROVED, Decision, TraceStep
from host.gatekeeper.grants import SessionGrants
from host.gatekeeper.rule_edits import RuleEdits
from host.gatekeeper.storage.pins import ToolPins
from host.store.db import StoreError

log = logging.getLogger("tabwarden.gatekeeper")

# Bounds the memory of questions asked; forgetting one only means asking again.
_MAX_ASKED = 1024


class ToolDefinitions:
    """The pins, and which changed definition the user was last asked about per (tool, origin)."""

    def __init__(self, pins: ToolPins, grants: SessionGrants, rules: RuleEdits, availability: Availability) -> None:
        self.pins = pins
        self._grants = grants
        self._rules = rules
        self._availability = availability
        # (tool, origin) -> the changed definition the user was last asked about: an approval
        # covers that definition only (not one the server switched to while it waited).
        self._asked: dict[tuple[str, str], str] = {}

    def changed(self, tool: str, origin: str, definition: str, *, forget: bool) -> bool:
        """Whether an MCP tool's definition differs from its pin (the first one seen is pinned).
        With `forget`, a changed tool loses its session grants and the site rules approvals made
        for it. Raises `GatekeeperUnavailable` (fail closed)."""
        try:
            pinned = self.pins.pinned(tool, origin)
            if pinned is None:
                self.pins.pin(tool, origin, definition)
                return False
            if pinned == definition:
                return False
            if not forget:
                return True
            self._grants.clear_tool(tool, origin)
            dropped = self._rules.drop_approval_rules(tool, origin)
            if dropped:
                log.warning("the definition of %s at %s changed: dropped its rules %s", tool, origin, dropped)
            return True
        except StoreError as exc:
            raise self._availability.fail(exc) from exc

    def settle(self, decision: Decision, key: tuple[str, str], definition: str, *, approved: bool) -> Decision:
        """The decision for a call whose definition changed: a question remembers the definition
        asked about; an approval of that definition pins it, an approval of any other asks again.
        `approved` tells a dispatch re-check (the user answered) from a first check."""
        if decision.verdict == "ask" and not approved:
            if len(self._asked) > _MAX_ASKED:
                self._asked.clear()
            self._asked[key] = definition
        if decision.verdict == "allow" and FLAG_APPROVED in decision.flags:
            if self._asked.get(key) != definition:
                # Approved for another definition (or before a restart that forgot which): ask again.
                step = TraceStep("definition_changed", "hit", "the approval was given for another definition")
                decision = msgspec.structs.replace(
                    decision, verdict="ask", flags=tuple(f for f in decision.flags if f != FLAG_APPROVED),
                    reason=f"the MCP server changed {key[0]} again after it was approved; confirm it anew",
                    trace=(*decision.trace, step))
            else:
                try:  # the user approved the new definition: grants and rules are made for it from now on
                    self.pins.pin(*key, definition)
                except StoreError as exc:
                    raise self._availability.fail(exc) from exc
                self._asked.pop(key, None)
        return decision
