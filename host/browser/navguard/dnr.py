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

Every rule holds every kind of request, not only documents: a driven page's own fetch, beacon,
image, style sheet, prefetch or WebSocket to a blocked site is blocked like a navigation there.
The lock's two rules hold documents only when the user kept the lock to navigations
(`Reach.confine_page` false). Requests of no tab (tab -1) are held by the new-tabs scope for
documents only (a pop-up's first request may be one); their other requests are held only where
a locked site started them (`Scope.initiators`: a driven site's service worker), since the
browser's own and other sites' workers also make requests of no tab.

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

FRAMES = ("main_frame", "sub_frame")
SUBRESOURCES = ("stylesheet", "script", "image", "font", "object", "xmlhttprequest", "ping", "csp_report", "media",
                "websocket", "webtransport", "webbundle", "other")
NO_TAB = -1  # a request from no tab: a pop-up's first one, a service worker's, the browser's own
NETWORK_SCHEMES = ("http", "https", "ws", "wss")
MAX_REGEX_RULES = 1000  # the browser's limit for regex rules across an extension's dynamic and session rules
MAX_DOMAINS_PER_RULE = 1000
TOP_OFFSET = 3
HOLD_PRIORITY = 1_000_000  # above any rule `compile_rules` numbers (at most MAX_GUARD_RULES + TOP_OFFSET)
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
    # Only requests these hosts' documents started (with `tab_ids=(NO_TAB,)`: a service worker's).
    initiators: tuple[str, ...] = ()

    def conditions(self, kinds: tuple[str, ...]) -> list[dict[str, Any]]:
        """The rule fields that hold `kinds` of request in these tabs, one dict per rule needed."""
        if self.initiators:
            subs = [kind for kind in kinds if kind in SUBRESOURCES]
            return [{"tab_ids": sorted(set(self.tab_ids)), "initiator_domains": list(self.initiators),
                     "resource_types": subs}] if subs else []
        if self.excluded is None:
            return [{"tab_ids": sorted(set(self.tab_ids)), "resource_types": list(kinds)}]
        # Requests of no tab match an exclusion list; only documents of them are held here.
        frames = [kind for kind in kinds if kind in FRAMES]
        subs = [kind for kind in kinds if kind in SUBRESOURCES]
        out = [{"excluded_tab_ids": sorted(set(self.excluded)), "resource_types": frames}] if frames else []
        if subs:
            out.append({"excluded_tab_ids": sorted(set(self.excluded) | {NO_TAB}), "resource_types": subs})
        return out


def compile_rules(scopes: list[tuple[Scope, Reach]]) -> list[GuardRule]:
    """Every session rule for these scopes, numbered from 1. Raises `GuardTooLarge`."""
    rules: list[GuardRule] = []
    every = FRAMES + SUBRESOURCES
    for scope, reach in scopes:

        def add(priority: int, action: str, url: dict[str, Any], kinds: tuple[str, ...] = every) -> None:
            for where in scope.conditions(kinds):
                rules.append(GuardRule(id=len(rules) + 1, priority=priority, action=action,  # type: ignore[arg-type]
                                       **where, **url))

        if reach.lock is not None:
            held = every if reach.confine_page else FRAMES
            add(1, "block", {}, held)
            for pattern in reach.lock:
                for url in allow_conditions(pattern):
                    add(2, "allow", url, held)
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


def hold_rules(holds: dict[int, tuple[str, ...]], first_id: int) -> list[GuardRule]:
    """The holds on the agent's own navigations: in each tab, a document request to any site but
    the one the navigation is for is blocked, above every allow, so that a redirect hop to
    another site waits for a judgement of its own (numbered from `first_id`)."""
    return [GuardRule(id=first_id + index, priority=HOLD_PRIORITY, action="block", resource_types=["main_frame"],
                      tab_ids=[tab], excluded_request_domains=list(sites))
            for index, (tab, sites) in enumerate(sorted(holds.items()))]


def lock_domains(lock: tuple[OriginPattern, ...]) -> tuple[str, ...]:
    """The hosts of a lock's patterns (their subdomains included), or () when a pattern names no
    host (a scheme, or anything): then no initiator condition can hold the lock's sites apart."""
    hosts: list[str] = []
    for pattern in lock:
        if pattern.kind not in ("host", "suffix", "exact") or not pattern.host or pattern.host.startswith("["):
            return ()
        hosts.append(pattern.host)
    return tuple(dict.fromkeys(hosts))


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
