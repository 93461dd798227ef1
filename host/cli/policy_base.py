"""The rule set `tabwarden policy` starts from: by default what the live host uses (the stored
rules and origin lists, the user and managed policy files), or nothing at all (`--bare`), with
a one-line label saying which, so an answer is never mistaken for the host's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from protocol.errors import TabwardenError
from protocol.permissions import describe_policy


class BaseError(TabwardenError):
    """The installed rules cannot be read; `message` says what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Base:
    """What every case is added to."""

    policy: str | None
    rules: tuple
    blocked: tuple[str, ...]
    guarded: tuple[str, ...]
    label: str
    warnings: tuple[str, ...] = ()


BARE = Base(None, (), (), (), "rules: bare (no stored rules, no policy files: each case alone)")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def installed(user_policy: Path | None = None) -> Base:
    """The rules the host would use now; `user_policy` replaces the user's policy file (to try
    a file before installing it). Raises `BaseError` when they cannot be read: answers from
    another set would not be the host's."""
    from host.gatekeeper.errors import GatekeeperUnavailable
    from host.gatekeeper.policy_files import managed_policy_path, user_policy_path
    from host.gatekeeper.service import DEFAULT_RULE, Gatekeeper
    from host.store import Store, StoreError, default_path

    db = default_path()
    store = None
    try:
        # A database the host has not created yet is not created here: the host would seed it
        # with the built-in rule at its first start, so that rule is added below instead.
        store = Store(db) if db.exists() else None
        gatekeeper = Gatekeeper(store, user_policy=user_policy)
        policy, rules, lists = gatekeeper.decision_inputs()
        views = gatekeeper.list_rules()
        warnings = tuple(str(w) for w in gatekeeper.load_warnings)
    except (StoreError, GatekeeperUnavailable) as exc:
        raise BaseError("policy_unavailable", f"the installed rules cannot be used: {exc}. Fix what it names "
                        "(`tabwarden doctor` checks every settings file), or answer without them with "
                        "--bare") from None
    finally:
        if store is not None:
            store.close()
    all_rules = tuple(rules.rules)
    builtin = sum(1 for v in views if v.provenance == "builtin")
    if store is None:
        all_rules, builtin = (*all_rules, DEFAULT_RULE), 1
    stored = sum(1 for v in views if v.provenance == "store")
    parts = [_plural(stored, "user rule")]
    if builtin:
        parts[0] += f" + the built-in {DEFAULT_RULE.tool} {DEFAULT_RULE.verdict}"
    files = []
    for kind, path in (("user", user_policy or user_policy_path()), ("managed", managed_policy_path())):
        count = sum(1 for v in views if v.provenance == f"{kind}:{path}")
        files.append(f"{kind} {path} ({_plural(count, 'rule')})" if path.exists() else f"{kind} none")
    parts.append(f"policy files: {', '.join(files)}")
    parts.append(f"default policy {describe_policy(policy)}")
    label = f"rules: installed ({'; '.join(parts)})"
    return Base(policy, all_rules, tuple(lists.blocked_extra), tuple(lists.guarded_extra), label, warnings)
