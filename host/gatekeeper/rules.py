"""Permission rules: the model, validation, and an index that finds the winner fast.

A rule is `{tool, origin, verdict, source, args?, created_at}`. `args` maps a parameter name to a
regular expression that must be found in the parameter's value (all of them must match). For a
tool that acts on an element, the conditions see the host's facts about it (`role`, `name`,
`to`: `facts/rule_subject.py`), never the model's `element` text: a rule keyed on `element` is
refused. The winner among matching rules is decided by, in order: specificity (tool part +
origin part), whether it has `args` conditions, source (managed > user_setting >
approval_persist > plugin_default), restrictiveness (deny > ask > allow) and recency. Managed
rules form a tier of their own: a user's rule may be stricter than the managed winner but never
looser. A plugin's rules (`plugin_default`, ask or deny only) form the lowest tier: they decide
only where no rule of the user's matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal, get_args

import msgspec

from protocol.permissions import VERDICTS, Verdict

from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.origins import Origin
from host.gatekeeper.patterns import (
    OriginIndex,
    OriginPattern,
    PatternError,
    ToolPattern,
    parse_origin_pattern,
    parse_tool_pattern,
)
from host.gatekeeper.tool_names import unknown_tool_message

Source = Literal["managed", "user_setting", "approval_persist", "plugin_default"]
SOURCES: tuple[str, ...] = get_args(Source)
SOURCE_RANK = {"managed": 4, "user_setting": 3, "approval_persist": 2, "plugin_default": 1}
RESTRICTIVENESS = {"deny": 2, "ask": 1, "allow": 0}
MAX_REGEX_LENGTH = 2000
BUILTIN_RULE_PREFIX = "default:"  # the id of a rule Tabwarden seeds, as opposed to one a person added
# Keys a condition may not use, with what to use instead.
REFUSED_ARGS = {
    "element": "`element` is the model's own description of the element and proves nothing about what is "
               "acted on; use `name` (the element's accessible name), `role` (its role) or `to` (where it leads)",
}


class Several(tuple):
    """The values of one fact for each element a call acts on (a batch acts on several): a deny or
    ask condition holds when any of them matches, an allow condition only when all of them do."""


class Rule(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One permission rule as stored and shown (patterns in their normalised spelling)."""

    tool: str
    origin: str
    verdict: Verdict
    source: Source = "user_setting"
    args: dict[str, str] | None = None
    created_at: float = 0.0
    id: str = ""
    source_thread_id: str | None = None
    source_approval_id: str | None = None

    def describe(self) -> str:
        """`tool @ origin (source)`, as quoted in denial reasons; `(built-in)` for a seeded rule."""
        where = self.origin if self.origin else "(no origin)"
        cond = f" if {', '.join(f'{k}~/{v}/' for k, v in self.args.items())}" if self.args else ""
        source = "built-in" if self.id.startswith(BUILTIN_RULE_PREFIX) else self.source
        return f"{self.tool} @ {where}{cond} ({source})"


class CompiledRule:
    """A validated rule with its parsed patterns, regexes and sort key."""

    __slots__ = ("rule", "tool", "origin", "args", "sort_key", "managed", "restrictiveness")

    def __init__(self, rule: Rule, tool: ToolPattern, origin: OriginPattern,
                 args: tuple[tuple[str, re.Pattern[str]], ...], order: int) -> None:
        self.rule = rule
        self.tool = tool
        self.origin = origin
        self.args = args
        self.managed = rule.source == "managed"
        self.restrictiveness = RESTRICTIVENESS[rule.verdict]
        specificity = tool.specificity + origin.specificity
        # Ascending sort: the first element wins. `order` keeps ties deterministic (later wins).
        # A plugin's defaults rank below every rule of the user's, however specific: a plugin may
        # add questions where the user said nothing, never overrule what the user said.
        self.sort_key = (rule.source == "plugin_default", -specificity, -bool(args), -SOURCE_RANK[rule.source],
                         -self.restrictiveness, -rule.created_at, -order)

    def args_match(self, params: Mapping[str, Any]) -> bool:
        """True when every `args` condition finds its regex in the named value (for `Several`
        values: in any of them for a deny or ask rule, in all of them for an allow rule)."""
        for name, regex in self.args:
            if name not in params:
                return False
            value = params[name]
            if isinstance(value, Several):
                hits = [regex.search(_as_text(v)) is not None for v in value]
                held = bool(hits) and (all(hits) if self.rule.verdict == "allow" else any(hits))
                if not held:
                    return False
            elif regex.search(_as_text(value)) is None:
                return False
        return True


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def parse_rule(obj: object, *, path: str = "$", source: str | None = None,
               force_source: str | None = None) -> Rule:
    """Validate a rule given as plain data; raise `InvalidInput` naming the bad field (code
    `unknown_tool` when its tool pattern names no tool, with the nearest name).

    `force_source` stamps the source (a policy file decides its rules' source itself and a rule
    inside it may not claim another).
    """
    if isinstance(obj, Mapping) and force_source is not None:
        claimed = obj.get("source")
        if claimed is not None and claimed != force_source:
            raise InvalidInput("invalid_rule", f"rules here have source {force_source!r}; got {claimed!r}",
                               f"{path}.source", source)
        obj = {**obj, "source": force_source}
    try:
        rule = msgspec.convert(obj, Rule)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        where = where.rstrip("`")
        if message.startswith("Invalid enum value"):
            allowed = VERDICTS if where.endswith(".verdict") else SOURCES
            message += f"; expected one of {', '.join(allowed)}"
        raise InvalidInput("invalid_rule", message, path + where[1:] if where else path, source) from None
    for key, why in REFUSED_ARGS.items():
        if rule.args and key in rule.args:
            raise InvalidInput("invalid_rule", why, f"{path}.args.{key}", source)
    compiled = compile_rule(rule, path=path, source=source)  # validates patterns and regexes
    never = unknown_tool_message(compiled.tool)
    if never is not None:
        raise InvalidInput("unknown_tool", never, f"{path}.tool", source)
    return normalize_rule(rule)


def normalize_rule(rule: Rule) -> Rule:
    """The same rule with its patterns in their normalised spelling."""
    tool = parse_tool_pattern(rule.tool).text
    origin = parse_origin_pattern(rule.origin).text
    if tool == rule.tool and origin == rule.origin:
        return rule
    return msgspec.structs.replace(rule, tool=tool, origin=origin)


def compile_rule(rule: Rule, *, order: int = 0, path: str = "$", source: str | None = None) -> CompiledRule:
    """Parse a rule's patterns and regexes; raise `InvalidInput` on the first bad part."""
    try:
        tool = parse_tool_pattern(rule.tool)
    except PatternError as exc:
        raise InvalidInput("invalid_rule", str(exc), f"{path}.tool", source) from None
    try:
        origin = parse_origin_pattern(rule.origin)
    except PatternError as exc:
        raise InvalidInput("invalid_rule", str(exc), f"{path}.origin", source) from None
    args: list[tuple[str, re.Pattern[str]]] = []
    for name, expr in (rule.args or {}).items():
        where = f"{path}.args.{name}"
        if not name:
            raise InvalidInput("invalid_rule", "an args condition needs a parameter name", f"{path}.args", source)
        if len(expr) > MAX_REGEX_LENGTH:
            raise InvalidInput("invalid_rule", f"regular expression longer than {MAX_REGEX_LENGTH} characters",
                               where, source)
        try:
            args.append((name, re.compile(expr)))
        except re.error as exc:
            raise InvalidInput("invalid_rule", f"invalid regular expression: {exc}", where, source) from None
    return CompiledRule(rule, tool, origin, tuple(args), order)


class _ToolBucket:
    """Rules sharing one tool pattern, filed by origin."""

    __slots__ = ("origins",)

    def __init__(self) -> None:
        self.origins: OriginIndex[CompiledRule] = OriginIndex()


class RuleSet:
    """An immutable, indexed set of rules.

    Rules are filed by tool pattern (exact name, category, prefix, `*`) and inside that by origin
    pattern, so a lookup touches only the rules that can match; the ordered candidate lists are
    cached per (tool, origin) and only `args` regexes run per call.
    """

    __slots__ = ("rules", "_compiled", "_exact", "_category", "_effect", "_prefix", "_prefix_lengths", "_any",
                 "_cache", "_by_tool")

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self._compiled = [compile_rule(rule, order=i) for i, rule in enumerate(rules)]
        self.rules: tuple[Rule, ...] = tuple(c.rule for c in self._compiled)
        self._exact: dict[str, _ToolBucket] = {}
        self._category: dict[str, _ToolBucket] = {}
        self._effect: dict[str, _ToolBucket] = {}
        self._prefix: dict[str, _ToolBucket] = {}
        self._any = _ToolBucket()
        for compiled in self._compiled:
            self._bucket(compiled.tool).origins.add(compiled.origin, compiled)
        self._prefix_lengths = sorted({len(p) for p in self._prefix})
        self._cache: dict[tuple[str, str | None, str, str | None], tuple[list[CompiledRule], list[CompiledRule]]] = {}
        self._by_tool: dict[tuple[str, str | None], tuple[list[CompiledRule], list[CompiledRule]]] = {}

    def _bucket(self, tool: ToolPattern) -> _ToolBucket:
        if tool.kind == "any":
            return self._any
        table = {"exact": self._exact, "category": self._category, "effect": self._effect,
                 "prefix": self._prefix}[tool.kind]
        bucket = table.get(tool.value)
        if bucket is None:
            bucket = table[tool.value] = _ToolBucket()
        return bucket

    def __len__(self) -> int:
        return len(self.rules)

    def candidates(self, tool: str, category: str | None, origin: Origin,
                   effect: str | None = None) -> tuple[list[CompiledRule], list[CompiledRule]]:
        """Rules whose tool and origin patterns match, best first: (managed, others)."""
        key = (tool, category, origin.text, effect)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        found: list[CompiledRule] = []
        buckets = [self._any]
        bucket = self._exact.get(tool)
        if bucket is not None:
            buckets.append(bucket)
        if category is not None:
            bucket = self._category.get(category)
            if bucket is not None:
                buckets.append(bucket)
        if effect is not None:
            bucket = self._effect.get(effect)
            if bucket is not None:
                buckets.append(bucket)
        for length in self._prefix_lengths:
            if length > len(tool):
                break
            bucket = self._prefix.get(tool[:length])
            if bucket is not None:
                buckets.append(bucket)
        for bucket in buckets:
            if bucket.origins.size:
                found.extend(bucket.origins.lookup(origin))
        found.sort(key=lambda c: c.sort_key)
        result = ([c for c in found if c.managed], [c for c in found if not c.managed])
        if len(self._cache) >= 16384:
            self._cache.clear()
        self._cache[key] = result
        return result

    def for_tool(self, tool: str, category: str | None) -> tuple[list[CompiledRule], list[CompiledRule]]:
        """Every rule whose tool pattern matches, whatever its origin, best first: (managed,
        others). What a guard that cannot ask per destination needs (`reach.py`)."""
        key = (tool, category)
        cached = self._by_tool.get(key)
        if cached is not None:
            return cached
        found = [c for c in self._compiled if _tool_matches(c.tool, tool, category)]
        found.sort(key=lambda c: c.sort_key)
        result = ([c for c in found if c.managed], [c for c in found if not c.managed])
        self._by_tool[key] = result
        return result

    def match(self, tool: str, category: str | None, origin: Origin, params: Mapping[str, Any],
              effect: str | None = None) -> Rule | None:
        """The winning rule for a call (`effect`: what it commits, for `effect:` patterns), or None
        when no rule matches."""
        managed, others = self.candidates(tool, category, origin, effect)
        best_managed = _first(managed, params)
        best_other = _first(others, params)
        if best_managed is None:
            return best_other.rule if best_other is not None else None
        if best_other is not None and best_other.restrictiveness > best_managed.restrictiveness:
            return best_other.rule  # a user may be stricter than the administrator, never looser
        return best_managed.rule


def _tool_matches(pattern: ToolPattern, tool: str, category: str | None) -> bool:
    if pattern.kind == "any":
        return True
    if pattern.kind == "exact":
        return pattern.value == tool
    if pattern.kind == "category":
        return pattern.value == category
    if pattern.kind == "effect":
        return False  # what a call commits is known only per call, never per tool
    return tool.startswith(pattern.value)


def _first(candidates: list[CompiledRule], params: Mapping[str, Any]) -> CompiledRule | None:
    for compiled in candidates:
        if not compiled.args or compiled.args_match(params):
            return compiled
    return None


EMPTY_RULES = RuleSet()
