"""The rules and origin lists in force: the policy files, the stored rules and list additions and
the rules the host injects, loaded into one `PolicySnapshot`.

A policy file edited by hand is noticed without a restart: at most once a second, a use compares
the files' size and modification time with those last loaded and reloads when they differ. A file
that became invalid leaves the previous snapshot in force; one fixed after start-up makes the
gatekeeper available again. Storage errors while loading fail closed (`Availability.fail`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from host.gatekeeper import revision as rev
from host.gatekeeper.availability import Availability
from host.gatekeeper.decision import Call, Context, check
from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.patterns import parse_tool_pattern
from host.gatekeeper.policy import DEFAULT_POLICY
from host.gatekeeper.policy_files import PolicyFileError, PolicyLayer, load_policy_file
from host.gatekeeper.rules import BUILTIN_RULE_PREFIX, Rule, RuleSet
from host.gatekeeper.sensitive import OriginLists
from host.gatekeeper.storage.rule_storage import RuleStorage
from host.gatekeeper.tool_names import unknown_tool_message
from host.store.db import Store, StoreError

log = logging.getLogger("tabwarden.gatekeeper")


class RuleView(msgspec.Struct, frozen=True):
    """A rule with where it came from, so a person can see why it is in force and whether they may
    remove it."""

    rule: Rule
    provenance: str  # builtin | user:<path> | managed:<path> | store | injected:<name>
    removable: bool


@dataclass(frozen=True)
class PolicySnapshot:
    """Everything one load produced; replaced whole, never changed in place."""

    default_policy: str
    rules: RuleSet
    views: tuple[RuleView, ...]
    lists: OriginLists
    sources: tuple[str, ...]
    rules_digest: str
    examples: tuple[tuple[str, dict[str, Any]], ...]
    warnings: tuple[InvalidInput, ...] = ()
    lock_holds_page_requests: bool = True


class LoadedPolicy:
    """Loads, reloads and rebuilds the snapshot of rules and origin lists in force."""

    def __init__(self, store: Store | None, rule_storage: RuleStorage | None, availability: Availability, *,
                 user_path: Path, managed_path: Path, reload_interval_s: float) -> None:
        self._store = store
        self._rule_storage = rule_storage
        self._availability = availability
        self._user_path = user_path
        self._managed_path = managed_path
        self._lock = threading.RLock()
        self._reload_interval_s = reload_interval_s
        self._files_seen: tuple[Any, ...] = ()
        self._files_checked_at = time.monotonic()
        self._reloading = threading.Lock()
        self._injected: dict[str, tuple[tuple[Rule, ...], tuple[str, ...], tuple[str, ...]]] = {}
        self.load_errors: list[InvalidInput] = []
        self.snapshot: PolicySnapshot | None = None  # None until a load succeeded
        self._layers: tuple[PolicyLayer, ...] = ()

    def current(self) -> PolicySnapshot:
        """The snapshot in force, after reloading edited files. Raises `GatekeeperUnavailable`
        when any state is unavailable or nothing valid was ever loaded (fail closed)."""
        self._reload_if_edited()
        self._availability.raise_if_unavailable()
        if self.snapshot is None:
            problems = "; ".join(str(e) for e in self.load_errors) or "not loaded"
            raise GatekeeperUnavailable(f"permission policy is unavailable: {problems}. Every tool call is refused "
                                        "until the file is fixed; the host reads it again within a second")
        return self.snapshot

    def revision(self, policy: str, *, exclude_approval: str | None = None) -> str:
        """The authorisation revision under `policy` (optionally ignoring one approval's own rules)."""
        state = self.current()
        digest = state.rules_digest if exclude_approval is None else rev.rules_digest(
            state.rules.rules, exclude_approval=exclude_approval)
        return rev.authorization_revision(policy, digest, state.lists.digest)

    def _file_signatures(self) -> tuple[Any, ...]:
        out = []
        for path in (self._managed_path, self._user_path):
            try:
                st = path.stat()
                out.append((st.st_mtime_ns, st.st_size, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def _reload_if_edited(self) -> None:
        now = time.monotonic()
        if now - self._files_checked_at < self._reload_interval_s:
            return
        self._files_checked_at = now
        if self._file_signatures() == self._files_seen or not self._reloading.acquire(blocking=False):
            return
        try:
            problems = self.reload()
        except GatekeeperUnavailable:
            return  # the error is recorded: the caller fails closed
        finally:
            self._reloading.release()
        if problems:
            log.warning("an edited policy file is refused, the previous rules stay in force: %s",
                        "; ".join(str(p) for p in problems))
        else:
            log.info("policy files reloaded after an edit")

    def reload(self) -> list[InvalidInput]:
        """(Re)read the policy files and stored rules. On any error the previous snapshot stays in
        force (or, at start-up, none does and `current` raises) and the errors are returned."""
        self._files_seen = self._file_signatures()  # taken first: an edit while reading is seen next time
        errors: list[InvalidInput] = []
        layers: list[PolicyLayer] = []
        for path, managed in ((self._managed_path, True), (self._user_path, False)):
            try:
                layer = load_policy_file(path, managed=managed)
            except PolicyFileError as exc:
                errors.extend(exc.errors)
                continue
            if layer is not None:
                layers.append(layer)
        if not errors:
            try:
                state = self._build(layers)
                errors.extend(self._check_examples(state))
            except StoreError as exc:
                raise self._availability.fail(exc) from exc
            except InvalidInput as exc:
                errors.append(exc)
        with self._lock:
            self.load_errors = errors
            if not errors:
                self.snapshot = state
                self._layers = tuple(layers)
        if not errors:
            self._availability.changed()
        return errors

    def rebuild(self) -> None:
        """Rebuild after stored rules or lists changed, from the files as last loaded (re-reading
        them here could half-apply a file the user is in the middle of editing). Storage errors
        leave as `StoreError`."""
        with self._lock:
            self.snapshot = self._build(list(self._layers))
        self._availability.changed()

    def inject(self, name: str, rules: tuple[Rule, ...], *, blocked: tuple[str, ...] = (),
               guarded: tuple[str, ...] = ()) -> None:
        """Put `rules` and list additions in force under `injected:<name>`, replacing that name's
        previous set (nothing at all withdraws the name)."""
        with self._lock:
            if rules or blocked or guarded:
                self._injected[name] = (rules, blocked, guarded)
            else:
                self._injected.pop(name, None)
            self.rebuild()

    def _stored(self) -> tuple[list[Rule], list[str], list[str]]:
        if self._rule_storage is None:
            return [], [], []
        rules = self._rule_storage.rules()
        blocked, guarded = self._rule_storage.origin_lists()
        return rules, blocked, guarded

    def _build(self, layers: list[PolicyLayer]) -> PolicySnapshot:
        stored_rules, blocked, guarded = self._stored()
        views: list[RuleView] = []
        warnings: list[InvalidInput] = []
        sources = ["builtin"]
        default_policy = None
        holds_page: bool | None = None
        examples: list[tuple[str, dict[str, Any]]] = []
        # The managed file's default policy wins over the user's; so does its word on the lock.
        for layer in layers:
            sources.append(layer.label)
            if default_policy is None and layer.policy is not None:
                default_policy = layer.policy
            if holds_page is None:
                holds_page = layer.lock_holds_page_requests
            views.extend(RuleView(r, layer.label, False) for r in layer.rules)
            blocked = [*blocked, *layer.sensitive_origins]
            guarded = [*guarded, *layer.guarded_origins]
            examples.extend((layer.label, e) for e in layer.examples)
            warnings.extend(layer.skipped)
        if self._store is not None:
            sources.append(f"store:{self._store.path}")
        for index, rule in enumerate(stored_rules):
            # Stored before names were checked: kept (the user can see and delete it; it can
            # never match) and reported.
            never = unknown_tool_message(parse_tool_pattern(rule.tool))
            if never is not None:
                warnings.append(InvalidInput("unknown_tool", f"stored rule {rule.describe()}: {never}",
                                             f"$.rules[{index}].tool", "stored rules"))
            views.append(RuleView(rule, "builtin" if rule.id.startswith(BUILTIN_RULE_PREFIX) else "store", True))
        for name, (rules, more_blocked, more_guarded) in self._injected.items():
            sources.append(f"injected:{name}")
            views.extend(RuleView(r, f"injected:{name}", False) for r in rules)
            blocked = [*blocked, *more_blocked]
            guarded = [*guarded, *more_guarded]
        rules = [v.rule for v in views]
        lists = OriginLists(blocked, guarded)
        for warning in warnings:
            log.warning("rule left out or never matching: %s", warning)
        return PolicySnapshot(default_policy or DEFAULT_POLICY, RuleSet(rules), tuple(views), lists, tuple(sources),
                              rev.rules_digest(rules), tuple(examples), tuple(warnings),
                              holds_page is not False)

    def _check_examples(self, state: PolicySnapshot) -> list[InvalidInput]:
        errors = []
        for index, (label, example) in enumerate(state.examples):
            ctx = Context(origin=example.get("origin") or "", policy=example.get("policy") or state.default_policy,
                          rules=state.rules, lists=state.lists, target=example.get("target"))
            decision = check(Call(example["tool"], example.get("params") or {}, example.get("effects"),
                                  example.get("level")), ctx)
            expected, code = example["expect"], example.get("expect_code")
            if decision.verdict != expected or (code is not None and decision.code != code):
                errors.append(InvalidInput(
                    "policy_example_failed",
                    f"example expects {expected}{f' ({code})' if code else ''} but the policy gives "
                    f"{decision.verdict} ({decision.code}): {decision.reason}",
                    f"$.examples[{index}]", label.split(":", 1)[1]))
        return errors
