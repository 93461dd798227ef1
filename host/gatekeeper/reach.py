"""Where a thread may not send a tab, as origin patterns a network filter can hold.

`decision.check` denies a write at a destination for three reasons that depend on the
destination's origin alone: the blocked list (step 4), a deny rule (step 6) and the thread's
scope lock (step 7); nothing later in the order can turn those into an allow. `Reach` is that
part of the decision for one thread and one tool (`navigate` for what a page does by itself,
`download` for a download's redirect hops), in a form the browser can enforce without asking the
host: patterns that are never reachable, the rules' own ranking of deny and allow patterns, and
the lock as an allow-list. The navigation guard (`host/browser/navguard`) turns it into browser
rules; the exact decision for one destination stays `check` (`Gatekeeper.destination_denied`).

Where patterns cannot say what the decision says, the reach blocks more, never less:

- a deny rule with `args` conditions on the URL blocks its whole origin pattern (one with
  conditions on other parameters cannot apply to a page's own navigation and is left out);
- allow and ask rules with conditions are left out (they could only carve exceptions);
- managed allow rules are left out: they can only loosen a managed deny, which stays whole;
- two reaches combined (a tab two threads drive) keep every block of both and only the part of
  the two locks that pattern containment can prove common.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from host.gatekeeper.origins import Origin, is_ip_host
from host.gatekeeper.patterns import OriginPattern, OriginSet
from host.gatekeeper.rules import CompiledRule, RuleSet
from host.gatekeeper.sensitive import OriginLists
from host.tools.catalog import lookup


@dataclass(frozen=True)
class Reach:
    """What one thread may not reach with one tool. Hashable, so a caller can tell when it changed."""

    # Never reachable, whatever else matches: the blocked list and managed deny rules.
    blocked: tuple[OriginPattern, ...] = ()
    # The other rules that matter, best first as the rule index ranks them: (pattern, denies).
    # Where several match one origin, the first decides; an origin none matches is not denied by
    # a rule.
    ranked: tuple[tuple[OriginPattern, bool], ...] = ()
    # The scope lock: only these patterns are reachable at all (None: no lock).
    lock: tuple[OriginPattern, ...] | None = None
    # Whether the lock holds a driven page's own requests too (its scripts, images, beacons...),
    # or only where its documents go (the user's choice, for sites that load from elsewhere).
    confine_page: bool = True


def reach_of(tool: str, lists: OriginLists, rules: RuleSet, lock: OriginSet | None, *,
             confine_page: bool = True) -> Reach:
    """The reach of `tool` under these lists, rules and scope lock."""
    spec = lookup(tool)
    name = spec.name if spec is not None else tool
    category = spec.category if spec is not None else None
    url_param = spec.url_param if spec is not None else None
    managed, others = rules.for_tool(name, category)
    blocked = list(lists.blocked_patterns)
    blocked.extend(c.origin for c in managed if c.rule.verdict == "deny" and _applies(c, url_param))
    ranked: list[tuple[OriginPattern, bool]] = []
    for compiled in others:
        if compiled.rule.verdict == "deny":
            if _applies(compiled, url_param):
                ranked.append((compiled.origin, True))
        elif not compiled.args:
            ranked.append((compiled.origin, False))
    # An allow ranked after every deny decides nothing: where no deny matches, nothing is denied.
    while ranked and not ranked[-1][1]:
        ranked.pop()
    return Reach(tuple(dict.fromkeys(blocked)), tuple(ranked), tuple(lock.patterns) if lock is not None else None,
                 confine_page)


def _applies(compiled: CompiledRule, url_param: str | None) -> bool:
    """A deny rule that can decide a navigation: no conditions, or conditions on the URL only
    (taken as always true, which blocks more than the rule does)."""
    return all(name == url_param for name, _ in compiled.args)


def combine(reaches: Iterable[Reach]) -> Reach:
    """One reach that denies everything any of `reaches` denies (for a tab several threads drive,
    and for new tabs no thread has claimed yet)."""
    unique = list(dict.fromkeys(reaches))
    if not unique:
        return Reach()
    if len(unique) == 1:
        return unique[0]
    blocked: list[OriginPattern] = []
    locks: list[tuple[OriginPattern, ...]] = []
    for reach in unique:
        blocked.extend(reach.blocked)
        # Their exceptions are dropped: an allow of one thread must not open what another denies.
        blocked.extend(pattern for pattern, denies in reach.ranked if denies)
        if reach.lock is not None:
            locks.append(reach.lock)
    lock: tuple[OriginPattern, ...] | None = None
    for each in locks:
        lock = each if lock is None else intersect(lock, each)
    confine = any(reach.confine_page for reach in unique if reach.lock is not None)
    return Reach(tuple(dict.fromkeys(blocked)), (), lock, confine or lock is None)


def intersect(a: tuple[OriginPattern, ...], b: tuple[OriginPattern, ...]) -> tuple[OriginPattern, ...]:
    """Patterns whose origins are in both `a` and `b`, as far as containment proves it (an origin
    only a partial overlap would admit is left out)."""
    kept = [p for p in a if any(covers(q, p) for q in b)] + [q for q in b if any(covers(p, q) for p in a)]
    return tuple(dict.fromkeys(kept))


def covers(outer: OriginPattern, inner: OriginPattern) -> bool:
    """True when every origin `inner` matches is matched by `outer` (False when unsure)."""
    if outer.kind == "any":
        return True
    if inner.kind == "none" or outer.kind == "none":
        return inner.kind == outer.kind
    if inner.kind == "exact":
        return OriginSet([outer]).match(Origin(inner.text, inner.scheme, inner.host, inner.port)) is not None
    if inner.kind == "host":
        if outer.kind == "host":
            return outer.host == inner.host and (not outer.port or outer.port == inner.port)
        return outer.kind == "suffix" and not outer.scheme and _under(inner.host, outer.host)
    if inner.kind == "suffix":
        return (outer.kind == "suffix" and _under(inner.host, outer.host)
                and (not outer.scheme or outer.scheme == inner.scheme))
    return inner.kind == "scheme" and outer.kind == "scheme" and outer.scheme == inner.scheme


def _under(host: str, domain: str) -> bool:
    return not is_ip_host(host) and (host == domain or host.endswith("." + domain))
