"""Which tabs the navigation guard's rules cover and with what reach: pure functions of the
guard's state and the gatekeeper's reach, turned into rules by `dnr.compile_rules`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from host.browser.navguard.dnr import NO_TAB, Scope, lock_domains
from host.gatekeeper.reach import Reach, combine

Guarded = dict[int, frozenset[tuple[str, str]]]  # tab -> the (thread, tool) pairs guarding it


def tab_keys(by_thread: dict[str, OrderedDict[int, str]]) -> Guarded:
    """tab -> the (thread, tool) pairs guarding it, from thread -> {tab: tool}."""
    out: dict[int, set[tuple[str, str]]] = {}
    for thread, tabs in by_thread.items():
        for tab, tool in tabs.items():
            out.setdefault(tab, set()).add((thread, tool))
    return {tab: frozenset(keys) for tab, keys in out.items()}


def guard_scopes(guarded: Guarded, known: set[int] | None, reach_of: Callable[[str, str], Reach]
                 ) -> list[tuple[Scope, Reach]]:
    """The scopes the rules are made of: the guarded tabs, grouped by who guards them, each held
    to what all of them may reach; the tabs not seen yet (`known` lists those seen); and the
    requests of no tab a locked site's service worker makes. `reach_of(thread, tool)` is the
    gatekeeper's reach."""
    reaches: dict[tuple[str, str], Reach] = {}

    def reach(pair: tuple[str, str]) -> Reach:
        if pair not in reaches:
            reaches[pair] = reach_of(pair[0], pair[1])
        return reaches[pair]

    groups: dict[frozenset[tuple[str, str]], list[int]] = {}
    for tab, keys in guarded.items():
        groups.setdefault(keys, []).append(tab)
    scopes = [(Scope(tab_ids=tuple(tabs)), combine(reach(pair) for pair in sorted(keys)))
              for keys, tabs in sorted(groups.items(), key=lambda item: min(item[1]))]
    # Tabs nobody has seen yet (a driven page's pop-ups) get what every thread denies; so do
    # documents of no tab, which is what a pop-up's first request may belong to.
    navigating = {(thread, "navigate") for keys in guarded.values() for thread, _ in keys}
    seen = set(known or ()) | set(guarded)
    scopes.append((Scope(excluded=tuple(seen)), combine(reach(pair) for pair in sorted(navigating))))
    # A locked site's service worker sends for its pages from no tab: held to the same lock.
    workers: dict[tuple, Reach] = {}
    for _, held in scopes[:-1]:
        hosts = lock_domains(held.lock) if held.lock is not None and held.confine_page else ()
        if hosts:
            workers[hosts] = combine([workers[hosts], held]) if hosts in workers else held
    scopes.extend((Scope(tab_ids=(NO_TAB,), initiators=hosts), Reach(held.blocked, (), held.lock))
                  for hosts, held in sorted(workers.items()))
    return scopes
