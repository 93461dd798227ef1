"""The decision's types: the call as the gatekeeper sees it, the context it is judged in, and the
explained answer (`decision.check` and its steps share them)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from host.gatekeeper.patterns import OriginSet
from host.gatekeeper.policy import DEFAULT_POLICY
from host.gatekeeper.provenance import Provenance
from host.gatekeeper.rules import EMPTY_RULES, Rule, RuleSet
from host.gatekeeper.sensitive import DEFAULT_LISTS, OriginLists

# Not one of the approval flags (no request carries it): marks a decision that the user's answer
# turned into an allow.
FLAG_APPROVED = "approved"


class TraceStep(msgspec.Struct, frozen=True):
    """One evaluated step: `outcome` is `hit` (it decided), `pass` or `skip`."""

    step: str
    outcome: str
    detail: str


class Decision(msgspec.Struct, frozen=True):
    """The gatekeeper's answer, with the steps that led to it."""

    verdict: str  # allow | ask | deny
    code: str
    reason: str
    flags: tuple[str, ...] = ()
    target_origin: str = ""
    rule: Rule | None = None
    trace: tuple[TraceStep, ...] = ()
    findings: tuple[str, ...] = ()
    tool: str = ""
    revision: str = ""
    # The decisive values the user did not give ({"kind", "what", "value", "seenAt"}), for the card.
    untrusted: tuple[dict[str, Any], ...] = ()
    # What the write commits (`facts.consequence`): its effect class and the facts that decided it.
    effect: str = ""
    effect_facts: tuple[str, ...] = ()


@dataclass(slots=True)
class Call:
    """A tool call as the gatekeeper sees it. `effects`/`level` override the catalog (for what-if
    cases and unknown tools); MCP tools stay writes whatever is given."""

    tool: str
    params: Mapping[str, Any] = field(default_factory=dict)
    effects: str | None = None
    level: str | None = None


@dataclass(slots=True)
class Context:
    """Everything else a decision depends on, already loaded and compiled."""

    origin: str = ""  # the resolved target's origin (tab, MCP server); "" when there is none
    policy: str = DEFAULT_POLICY
    rules: RuleSet = EMPTY_RULES
    lists: OriginLists = DEFAULT_LISTS
    grants: Collection[tuple[str, str]] = frozenset()  # (tool, normalised origin) of this thread
    scope_origins: Collection[str] = frozenset()  # normalised origins the user has accepted
    scope_lock: OriginSet | None = None
    # Element facts, e.g. {"input_type": "password", "autocomplete": "cc-number", "hints": [...],
    # "values": {ref: the field's value before the call}}
    target: Mapping[str, Any] | None = None
    # The MCP tool's definition differs from the one its grants and rules were made for.
    definition_changed: bool = False
    # What the thread's model was shown and where it came from (None: not known, step 9 skipped).
    provenance: Provenance | None = None
    # The user issued the call themself (REPL, control API): what it commits, they asked for.
    direct: bool = False
