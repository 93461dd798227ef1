"""The stored half of the rules and origin lists: the user's rules (`gk_rules`, including those
persisted by `acceptForSite`) and their additions to the blocked and guarded lists
(`gk_origin_lists`). Every failure leaves as `StoreError`; the service turns it into a
fail-closed `GatekeeperUnavailable`."""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from protocol.permissions import OriginList as ListName

from host.gatekeeper.rules import Rule
from host.store.db import Store


class RuleStorage:
    """Reads and writes the gatekeeper's rule and origin-list tables in one store."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def seed_once(self, marker: str, rule: Rule, clock: Callable[[], float]) -> None:
        """Store `rule` (stamped with `clock()`) unless a rule for its tool is stored already, and
        only while the meta key `marker` is unset: a seeded rule the user deleted never returns."""
        if self._store.get_meta(marker) == "1":
            return
        with self._store.transaction() as conn:
            rows = conn.execute("SELECT body FROM gk_rules").fetchall()
            if not any(msgspec.json.decode(r["body"], type=Rule).tool == rule.tool for r in rows):
                stamped = msgspec.structs.replace(rule, created_at=clock())
                conn.execute("INSERT INTO gk_rules (id, body, created_at) VALUES (?, ?, ?)",
                             (stamped.id, msgspec.json.encode(stamped).decode(), stamped.created_at))
            conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (marker,))

    def rules(self) -> list[Rule]:
        """Every stored rule, oldest first."""
        return [msgspec.json.decode(r["body"], type=Rule)
                for r in self._store.query("SELECT body FROM gk_rules ORDER BY created_at, id")]

    def origin_lists(self) -> tuple[list[str], list[str]]:
        """The user's (blocked, guarded) origin patterns, oldest first."""
        lists: dict[str, list[str]] = {"blocked": [], "guarded": []}
        for row in self._store.query("SELECT list, pattern FROM gk_origin_lists ORDER BY created_at"):
            lists[row["list"]].append(row["pattern"])
        return lists["blocked"], lists["guarded"]

    def rule_of_approval(self, approval_id: str) -> Rule | None:
        """The rule an approval already persisted, if any."""
        rows = self._store.query("SELECT body FROM gk_rules WHERE source_approval_id = ?", (approval_id,))
        return msgspec.json.decode(rows[0]["body"], type=Rule) if rows else None

    def insert_rule(self, rule: Rule) -> None:
        """Store a validated rule."""
        self._store.execute("INSERT INTO gk_rules (id, body, created_at, source_approval_id) VALUES (?, ?, ?, ?)",
                            (rule.id, msgspec.json.encode(rule).decode(), rule.created_at, rule.source_approval_id))

    def delete_rule(self, rule_id: str) -> None:
        """Remove a stored rule (no-op for an unknown id)."""
        self._store.execute("DELETE FROM gk_rules WHERE id = ?", (rule_id,))

    def add_origin_pattern(self, list_name: ListName, pattern: str, created_at: float) -> None:
        """Add a normalised pattern to a list (no-op when it is there already)."""
        self._store.execute("INSERT OR IGNORE INTO gk_origin_lists (list, pattern, created_at) VALUES (?, ?, ?)",
                            (list_name, pattern, created_at))

    def delete_origin_pattern(self, list_name: ListName, pattern: str) -> None:
        """Remove a normalised pattern from a list (no-op when it is not there)."""
        self._store.execute("DELETE FROM gk_origin_lists WHERE list = ? AND pattern = ?", (list_name, pattern))
