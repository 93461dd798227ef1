"""Changes to the stored rules and origin lists: the user's rules and list additions, the rules
an approval persists (`acceptForSite`), the rules the host injects, and the default rule seeded
once per database. Every change rebuilds the snapshot in force (`LoadedPolicy.rebuild`); a
storage failure fails closed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec

from protocol.permissions import ORIGIN_LISTS, OriginList

from host.gatekeeper.availability import Availability
from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.loaded_policy import LoadedPolicy
from host.gatekeeper.patterns import PatternError, parse_origin_pattern
from host.gatekeeper.rules import BUILTIN_RULE_PREFIX, Rule, parse_rule
from host.gatekeeper.sensitive import BUILTIN_BLOCKED, BUILTIN_GUARDED
from host.gatekeeper.storage.rule_storage import RuleStorage
from host.store.db import StoreError

# Stored like a user's rule (so the user may delete it, and it ranks as it always has) but shown
# as built in: its id starts with `BUILTIN_RULE_PREFIX`.
DEFAULT_RULE = Rule(tool="run_javascript", origin="*", verdict="deny", source="user_setting",
                    id=f"{BUILTIN_RULE_PREFIX}run_javascript-deny")
_SEEDED_META = "gatekeeper.default_rules_seeded_v1"


class RuleEdits:
    """Writes rules and origin-list additions through `RuleStorage` (None: no store, and every
    edit that needs one is refused with `InvalidInput`)."""

    def __init__(self, rule_storage: RuleStorage | None, policy: LoadedPolicy, availability: Availability,
                 clock: Callable[[], float]) -> None:
        self._rule_storage = rule_storage
        self._policy = policy
        self._availability = availability
        self._clock = clock

    def seed_defaults(self) -> None:
        """Store the default rule, once per database: the user may have deleted it, so it never
        comes back. Needs a store; storage errors leave as `StoreError`."""
        assert self._rule_storage is not None
        self._rule_storage.seed_once(_SEEDED_META, DEFAULT_RULE, self._clock)

    def add_rule(self, rule: Mapping[str, Any] | Rule) -> Rule:
        """Validate and store a user rule (see `Gatekeeper.add_rule`)."""
        self._policy.current()
        body = msgspec.to_builtins(rule) if isinstance(rule, Rule) else dict(rule)
        if body.get("source") == "managed":
            raise InvalidInput("rule_not_allowed", "managed rules come only from the managed policy file", "$.source")
        body.setdefault("source", "user_setting")
        parsed = parse_rule(body)
        parsed = msgspec.structs.replace(parsed, id=parsed.id or f"rule:{uuid.uuid4()}",
                                         created_at=parsed.created_at or self._clock())
        self._insert(parsed)
        return parsed

    def persist_site_rule(self, thread_id: str, approval_id: str, tool: str, origin: str) -> Rule:
        """The allow rule an `acceptForSite` answer persists (idempotent per approval id)."""
        if self._rule_storage is None:
            raise InvalidInput("no_store", "acceptForSite needs persistent storage")
        persisted = self._rule_storage.rule_of_approval(approval_id)
        if persisted is not None:
            return persisted  # idempotent per approval
        # Origin-less calls get an origin-less rule (""), never a global "*" allow.
        rule = Rule(tool=tool, origin=origin, verdict="allow", source="approval_persist",
                    created_at=self._clock(), id=f"approval:{approval_id}", source_thread_id=thread_id,
                    source_approval_id=approval_id)
        self._insert(rule)
        return rule

    def _insert(self, rule: Rule) -> None:
        if self._rule_storage is None:
            raise InvalidInput("no_store", "rules need persistent storage")
        try:
            self._rule_storage.insert_rule(rule)
            self._policy.rebuild()
        except StoreError as exc:
            raise self._availability.fail(exc) from exc

    def remove_rule(self, rule_id: str) -> None:
        """Remove a stored rule (see `Gatekeeper.remove_rule`)."""
        state = self._policy.current()
        view = next((v for v in state.views if v.rule.id == rule_id and v.rule.id), None)
        if view is None:
            raise InvalidInput("unknown_rule", f"no rule with id {rule_id!r}", "$.id")
        if not view.removable:
            raise InvalidInput("rule_not_removable", f"rule {rule_id!r} comes from {view.provenance} and cannot be "
                               "removed here", "$.id")
        try:
            self._rule_storage.delete_rule(rule_id)  # type: ignore[union-attr]
            self._policy.rebuild()
        except StoreError as exc:
            raise self._availability.fail(exc) from exc

    def drop_approval_rules(self, tool: str, origin: str) -> list[str]:
        """Delete the site rules approvals made for (`tool`, `origin`) and return their ids.
        Storage errors leave as `StoreError` (the caller fails closed)."""
        dropped = [v.rule.id for v in self._policy.current().views if v.removable and v.rule.tool == tool
                   and v.rule.origin == origin and v.rule.source == "approval_persist" and v.rule.id]
        if dropped and self._rule_storage is not None:
            for rule_id in dropped:
                self._rule_storage.delete_rule(rule_id)
            self._policy.rebuild()
        return dropped

    def inject_rules(self, name: str, rules: Iterable[Mapping[str, Any]], *, source: str = "plugin_default",
                     blocked: Iterable[str] = (), guarded: Iterable[str] = ()) -> None:
        """Put host-computed rules and list additions in force under `injected:<name>` (see
        `Gatekeeper.inject_rules`)."""
        self._policy.current()
        if source == "managed":
            raise InvalidInput("rule_not_allowed", "injected rules cannot be managed", "$.source")
        parsed = tuple(parse_rule(r, path=f"$[{i}]", force_source=source) for i, r in enumerate(rules))
        for index, rule in enumerate(parsed):
            if rule.source == "plugin_default" and rule.verdict == "allow":
                raise InvalidInput("rule_not_allowed", "a plugin's rule may ask or deny, never allow: it can only make "
                                   "the gatekeeper stricter", f"$[{index}].verdict")
        lists = {}
        for list_name, patterns in (("blocked", blocked), ("guarded", guarded)):
            texts = []
            for index, pattern in enumerate(patterns):
                try:
                    texts.append(parse_origin_pattern(pattern).text)
                except PatternError as exc:
                    raise InvalidInput("invalid_pattern", str(exc), f"$.{list_name}[{index}]") from None
            lists[list_name] = tuple(dict.fromkeys(texts))
        self._policy.inject(name, parsed, **lists)

    def add_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> str:
        """Add a user pattern to the blocked or guarded list; return its normalised form."""
        self._policy.current()
        if list_name not in ORIGIN_LISTS:
            raise InvalidInput("invalid_list", "the list is `blocked` or `guarded`", "$.list")
        try:
            text = parse_origin_pattern(pattern).text
        except PatternError as exc:
            raise InvalidInput("invalid_pattern", str(exc), "$.pattern") from None
        if self._rule_storage is None:
            raise InvalidInput("no_store", "origin lists need persistent storage")
        try:
            self._rule_storage.add_origin_pattern(list_name, text, self._clock())
            self._policy.rebuild()
        except StoreError as exc:
            raise self._availability.fail(exc) from exc
        return text

    def remove_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> None:
        """Remove a user pattern; built-in patterns cannot be removed."""
        self._policy.current()
        text = parse_origin_pattern(pattern).text
        builtin = BUILTIN_BLOCKED if list_name == "blocked" else BUILTIN_GUARDED
        if text in {parse_origin_pattern(p).text for p in builtin}:
            raise InvalidInput("builtin_pattern", f"{text} is built in and cannot be removed", "$.pattern")
        try:
            self._rule_storage.delete_origin_pattern(list_name, text)  # type: ignore[union-attr]
            self._policy.rebuild()
        except StoreError as exc:
            raise self._availability.fail(exc) from exc
