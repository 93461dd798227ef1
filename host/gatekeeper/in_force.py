"""What is in force (rules with their provenance, origin lists, the policy) and the edits to it.

`Gatekeeper` takes these methods from `InForce`: the user's rules and origin patterns added and
removed, a plugin's rules injected, and snapshots of the state for the settings page, the CLI
and what-if checks. The edits themselves are `rule_edits.RuleEdits`'; this is their face.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from protocol.permissions import OriginList

from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.loaded_policy import LoadedPolicy, RuleView
from host.gatekeeper.policy import resolve_policy
from host.gatekeeper.rule_edits import RuleEdits
from host.gatekeeper.rules import Rule, RuleSet
from host.gatekeeper.sensitive import BUILTIN_BLOCKED, BUILTIN_GUARDED, OriginLists
from host.gatekeeper.thread_state import ThreadState


class ActivePermissions(msgspec.Struct, frozen=True):
    """A snapshot of what is in force: the policy, every rule with its provenance, the origin lists
    and their revision."""

    policy: str
    rules: list[RuleView]
    loaded_sources: list[str]
    sensitive_origins: list[str]
    guarded_origins: list[str]
    builtin_sensitive_count: int
    builtin_guarded_count: int
    revision: str


class InForce:
    """The rules and lists in force and their edits (a part of `Gatekeeper`)."""

    _policy: LoadedPolicy
    _rules: RuleEdits
    _threads: ThreadState

    def authorization_revision(self, policy: str, *, exclude_approval: str | None = None) -> str:
        """The current revision under `policy` (optionally ignoring one approval's own rules)."""
        return self._policy.revision(policy, exclude_approval=exclude_approval)

    # -- rules and lists -----------------------------------------------------------------------

    def add_rule(self, rule: Mapping[str, Any] | Rule) -> Rule:
        """Validate and store a user rule (source `user_setting` unless given as
        `approval_persist`/`plugin_default`; `managed` only comes from the managed file)."""
        return self._rules.add_rule(rule)

    def remove_rule(self, rule_id: str) -> None:
        """Remove a stored rule. Rules from policy files (managed above all) and injected rules
        cannot be removed here; raises `InvalidInput` for them or an unknown id."""
        self._rules.remove_rule(rule_id)

    def inject_rules(self, name: str, rules: Iterable[Mapping[str, Any]], *, source: str = "plugin_default",
                     blocked: Iterable[str] = (), guarded: Iterable[str] = ()) -> None:
        """Add host-computed rules and blocked or guarded origin patterns under the provenance
        `injected:<name>` (replacing that name's previous set; nothing withdraws it). They may not
        claim the `managed` source, and a `plugin_default` rule may not allow (a plugin only makes
        the gatekeeper stricter). Raises `InvalidInput` and changes nothing on a bad rule or pattern."""
        self._rules.inject_rules(name, rules, source=source, blocked=blocked, guarded=guarded)

    @property
    def load_warnings(self) -> list[InvalidInput]:
        """Rules in force that can never match, or left out of a policy file for that reason
        (each names the nearest tool). Empty when all rules are sound or nothing is loaded."""
        state = self._policy.snapshot
        return list(state.warnings) if state is not None else []

    def list_rules(self) -> list[RuleView]:
        """Every rule in force with its provenance."""
        return list(self._policy.current().views)

    def add_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> str:
        """Add a user pattern to the blocked or guarded list; return its normalised form."""
        return self._rules.add_origin_pattern(pattern, list_name=list_name)

    def remove_origin_pattern(self, pattern: str, *, list_name: OriginList = "blocked") -> None:
        """Remove a user pattern; built-in patterns cannot be removed."""
        self._rules.remove_origin_pattern(pattern, list_name=list_name)

    # -- snapshot ------------------------------------------------------------------------------

    def decision_inputs(self) -> tuple[str, RuleSet, OriginLists]:
        """(default policy, rules, origin lists) in force: what a what-if check builds on."""
        state = self._policy.current()
        return state.default_policy, state.rules, state.lists

    def active_permissions(self, thread_id: str | None = None) -> ActivePermissions:
        """What is in force now: policy (for a thread if given), rules with provenance, loaded
        sources, the user's list additions and the authorisation revision."""
        state = self._policy.current()
        policy = resolve_policy(self._threads.policy(thread_id) if thread_id else None, state.default_policy)
        return ActivePermissions(
            policy=policy, rules=list(state.views), loaded_sources=list(state.sources),
            sensitive_origins=list(state.lists.blocked_extra), guarded_origins=list(state.lists.guarded_extra),
            builtin_sensitive_count=len(BUILTIN_BLOCKED), builtin_guarded_count=len(BUILTIN_GUARDED),
            revision=self.authorization_revision(policy))
