"""A `Reach` as declarativeNetRequest session rules for a scope: a set of tabs, or every tab the
host has not seen yet (the new tabs a driven page opens, before the host hears of them).

The rules of one scope, by priority (the highest among the rules that match a request decides):

    top            block   the never-reachable patterns (blocked list, managed denies)
    3 .. top - 1   block / allow   the ranked rules, the best ranked highest
    2              allow   the scope lock's patterns
    1              block   every URL (only under a scope lock)

so the blocked list beats everything, a ranked deny beats the lock's allow below it, and a ranked
allow is kept only where the lock holds all of it (otherwise it would open what the lock closes).
Scopes never overlap (a tab is in one scope), so each numbers its priorities on its own.

A block may match more than its pattern: a host with its subdomains, under any scheme and port
(`requestDomains`, which also matches the host spelled with a trailing dot). An allow matches
exactly its pattern: a RE2 expression over the canonical URL, accepting userinfo and a trailing
dot on the host, both of which the browser keeps in the URL it matches. Patterns of schemes the
network never sees (`chrome:`, `about:`...) need no rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from protocol.guard import MAX_GUARD_RULES, GuardRule

from host.gatekeeper.patterns import OriginPattern
from host.gatekeeper.reach import Reach, covers

RESOURCE_TYPES = ["main_frame", "sub_frame"]
NETWORK_SCHEMES = ("http", "https", "ws", "wss")
MAX_REGEX_RULES = 1000  # the browser's limit for regex rules across an extension's dynamic and session rules
MAX_DOMAINS_PER_RULE = 1000
TOP_OFFSET = 3
_ANY_SCHEME = r"[a-z][a-z0-9+.\-]*"
_USERINFO = r"([^/?#@]*@)?"
_END = r"([/?#]|$)"


class GuardTooLarge(ValueError):
    """The rules would not fit the browser's limits (the guard then fails closed)."""


@dataclass(frozen=True)
class Scope:
    """The tabs one set of rules applies to: `tab_ids`, or (when `excluded` is given) every tab
    but those."""

    tab_ids: tuple[int, ...] = ()
    excluded: tuple[int, ...] | None = None

    def condition(self) -> dict[str, Any]:
        """The rule fields that say so."""
        if self.excluded is not None:
            return {"excluded_tab_ids": sorted(set(self.excluded))}
        return {"tab_ids": sorted(set(self.tab_ids))}


def compile_rules(scopes: list[tuple[Scope, Reach]]) -> list[GuardRule]:
    """Every session rule for these scopes, numbered from 1. Raises `GuardTooLarge`."""
    rules: list[GuardRule] = []
    for scope, reach in scopes:
        where = scope.condition()

        def add(priority: int, action: str, url: dict[str, Any]) -> None:
            rules.append(GuardRule(id=len(rules) + 1, priority=priority, action=action,  # type: ignore[arg-type]
                                   resource_types=list(RESOURCE_TYPES), **where, **url))

        if reach.lock is not None:
            add(1, "block", {})
            for pattern in reach.lock:
                for url in allow_conditions(pattern):
                    add(2, "allow", url)
        ranked = list(reach.ranked)
        for rank, (pattern, denies) in enumerate(ranked):
            priority = TOP_OFFSET + len(ranked) - 1 - rank
            if denies:
                for url in block_conditions([pattern]):
                    add(priority, "block", url)
            elif reach.lock is None or any(covers(held, pattern) for held in reach.lock):
                for url in allow_conditions(pattern):
                    add(priority, "allow", url)
        for url in block_conditions(reach.blocked):
            add(TOP_OFFSET + len(ranked), "block", url)
    if len(rules) > MAX_GUARD_RULES:
        raise GuardTooLarge(f"{len(rules)} rules are more than the {MAX_GUARD_RULES} the guard may install")
    regexes = sum(1 for rule in rules if rule.regex_filter is not None)
    if regexes > MAX_REGEX_RULES:
        raise GuardTooLarge(f"{regexes} regular-expression rules are more than the browser's {MAX_REGEX_RULES}")
    return rules


def block_conditions(patterns: tuple[OriginPattern, ...] | list[OriginPattern]) -> list[dict[str, Any]]:
    """URL conditions matching at least every network URL of `patterns` (hosts grouped into
    `requestDomains` rules)."""
    out: list[dict[str, Any]] = []
    domains: list[str] = []
    for pattern in patterns:
        kind = pattern.kind
        if kind == "any":
            out.append({})
        elif kind == "scheme":
            if pattern.scheme in NETWORK_SCHEMES:
                out.append({"url_filter": f"|{pattern.scheme}:"})
        elif kind in ("host", "suffix", "exact"):
            if kind == "exact" and pattern.scheme not in NETWORK_SCHEMES:
                continue
            if pattern.port or pattern.host.startswith("["):
                port = f":{pattern.port}" if pattern.port else "(:[0-9]+)?"
                sub = "" if pattern.host.startswith("[") else r"([^/?#@:]+\.)?"
                out.append({"regex_filter": f"^{_ANY_SCHEME}://{_USERINFO}{sub}{_host(pattern.host)}{port}{_END}"})
            else:
                domains.append(pattern.host)
    unique = list(dict.fromkeys(domains))
    for start in range(0, len(unique), MAX_DOMAINS_PER_RULE):
        out.append({"request_domains": unique[start:start + MAX_DOMAINS_PER_RULE]})
    return out


def allow_conditions(pattern: OriginPattern) -> list[dict[str, Any]]:
    """URL conditions matching exactly the network URLs of `pattern` (none for a pattern the
    network never sees)."""
    kind = pattern.kind
    if kind == "any":
        return [{}]
    if kind == "scheme":
        return [{"regex_filter": f"^{_escape(pattern.scheme)}:"}] if pattern.scheme in NETWORK_SCHEMES else []
    if kind not in ("host", "suffix", "exact"):
        return []
    if kind == "exact" and pattern.scheme not in NETWORK_SCHEMES:
        return []
    scheme = _escape(pattern.scheme) if pattern.scheme else _ANY_SCHEME
    if kind == "exact":
        port = f":{pattern.port}" if pattern.port else ""  # the canonical URL leaves a default port out
    else:
        port = f":{pattern.port}" if pattern.port else "(:[0-9]+)?"
    sub = r"([^/?#@:]+\.)?" if kind == "suffix" else ""
    return [{"regex_filter": f"^{scheme}://{_USERINFO}{sub}{_host(pattern.host)}{port}{_END}"}]


def _host(host: str) -> str:
    # A name may be spelled with a trailing dot, which the canonical URL keeps; an address may not.
    return _escape(host) + ("" if host.startswith("[") else r"\.?")


def _escape(text: str) -> str:
    return re.sub(r"([^A-Za-z0-9_])", r"\\\1", text)
