"""`NavigationGuard`: which tabs are guarded for which thread, keeping the browser's rules in step,
and what the browser reports back (see the package docstring for why the rules are
declarativeNetRequest session rules).

A tab is guarded for a thread from its first write there (before the write is sent), for a tab
it opens, and for the tabs its driven pages open, until the thread's turn ends, the run hands
the tab to the user, or the tab closes. The rules are computed from scratch from that state and
the gatekeeper's reach, and sent whole when they differ from what is installed: per action that
is a comparison of a key, and a round trip only after a change.

The browser reports three things, as `browser.event`s: a navigation blocked (its tab, frame and
URL), a new tab a page opened (with its opener), and a tab's new URL (`observed.py` handles
them). Each blocked navigation the gatekeeper would indeed deny is audited at once
(`record_outcome`, naming the destination's origin), and told in the result of the call during
which it happened or, when it happened between calls, in the next result for that tab.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from host.browser.navguard.dnr import compile_rules, hold_rules
from host.browser.navguard.observed import ObservedTabs, hop_sites
from host.browser.navguard.scopes import guard_scopes, tab_keys
from host.browser.navguard.report import (URL_MAX, Blocked, Happening, Watch, blocked_result, current_watch,
                                          held_result, with_earlier)
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult

log = logging.getLogger("tabwarden.browser.guard")

MAX_TABS_PER_THREAD = 256

class NavigationGuard(ObservedTabs):
    """The navigation guard of one browser connection."""

    def __init__(self, bridge: Any, gatekeeper: Any):
        self.bridge = bridge
        self.gatekeeper = gatekeeper
        # thread -> {tab: the tool whose reach applies (navigate, or download for a probe)}
        self._guarded: dict[str, OrderedDict[int, str]] = {}
        # Every tab the host knows exists (excluded from the new-tab rules); None until needed.
        self._known: set[int] | None = None
        self._popups: dict[int, asyncio.TimerHandle] = {}  # new tabs whose opener is not known yet
        self._opened_by: dict[int, int] = {}  # pop-up -> the guarded tab that opened it
        self._installed_key: Any = ()  # () means nothing installed by this host yet
        self._installed_pairs: frozenset[tuple[str, int]] = frozenset()  # (thread, tab) the rules cover
        self._installed_count = 0
        self._sync_lock = asyncio.Lock()
        self._error: str | None = None
        self._watches: dict[int, Watch] = {}
        self._earlier: dict[int, list[Happening]] = {}
        self._urls: dict[int, tuple[str, str]] = {}  # guarded tab -> (its URL, the one before)
        self._blocked_pages: dict[int, tuple[Blocked, str]] = {}  # tab -> (block, the origin before it)
        self._last_tool: dict[int, tuple[str, str]] = {}  # tab -> (thread, tool) of its last call
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending_sync: asyncio.Task | None = None
        self._dirty = False  # a change came while an install ran: install once more after it
        self.installs = 0
        self.install_ms: list[float] = []  # the latest installs' round trips
        self.spent_ms: list[tuple[str, float]] = []  # (tool, the guard's own time on the call), the latest 256
        self._protect_s: dict[tuple[str, int], float] = {}  # a protect before its call began (in hold)
        self._hops: dict[int, tuple[str, ...]] = {}  # tab -> the site its running navigation is for
        if gatekeeper is not None and hasattr(gatekeeper, "on_change"):
            gatekeeper.on_change(self._gatekeeper_changed)

    # -- the calls' side ---------------------------------------------------------------------------

    async def protect(self, thread_id: str, tab_id: int, *, tool: str = "navigate", url: str = "") -> None:
        """Guard `tab_id` for `thread_id` and return once the browser enforces it (a tab the running
        call created is watched for it too). Raises ToolFailure `guard_unavailable` (nothing was
        sent to the tab) when that cannot be done."""
        started = time.perf_counter()
        watch = current_watch.get()
        if watch is not None and tab_id not in watch.tabs:
            watch.tabs.add(tab_id)
            self._watches[tab_id] = watch
        tabs = self._guarded.setdefault(thread_id, OrderedDict())
        tabs.pop(tab_id, None)
        tabs[tab_id] = tool
        while len(tabs) > MAX_TABS_PER_THREAD:
            tabs.popitem(last=False)
        self.note_url(tab_id, url)
        if self._known is not None:
            self._known.add(tab_id)
        try:
            await self.sync()
        except ToolFailure as problem:
            if problem.code == ToolCode.NOT_CONNECTED:
                raise
            raise self._unavailable(tab_id, problem.message) from None
        except Exception as exc:  # the gatekeeper cannot say, or the rules do not fit
            raise self._unavailable(tab_id, str(exc)) from None
        finally:
            elapsed = time.perf_counter() - started
            if watch is not None:
                watch.spent_s += elapsed
            else:
                self._protect_s[(thread_id, tab_id)] = elapsed

    def note_url(self, tab_id: int, url: str) -> None:
        """The URL a tab was seen at, for a guarded tab whose URL the guard has not learnt yet
        (what a blocked navigation there is told against)."""
        if url and tab_id not in self._urls and self._guarding(tab_id):
            self._urls[tab_id] = (url, "")

    async def hold_hops(self, tab_id: int, url: str, *, sent: asyncio.Event | None = None) -> None:
        """The agent's own navigation of `tab_id` to `url` is about to start: until its call ends,
        a redirect hop to another site is held (blocked, and reported to the call as
        `redirect_held`) instead of followed. Raises ToolFailure `guard_unavailable` when the hold
        cannot be put in place (the page load must then not be sent). `sent` is set once no more
        is to be sent for the hold, or its install is on its way."""
        sites = hop_sites(url)
        if not sites or not self._guarding(tab_id):
            return
        self._hops[tab_id] = sites
        try:
            await self.sync(sent=sent)
        except ToolFailure as problem:
            self._hops.pop(tab_id, None)
            if problem.code == ToolCode.NOT_CONNECTED:
                raise
            raise self._unavailable(tab_id, problem.message) from None
        except Exception as exc:
            self._hops.pop(tab_id, None)
            raise self._unavailable(tab_id, str(exc)) from None

    async def hold_hops_sent(self, tab_id: int, url: str) -> "asyncio.Future[None]":
        """`hold_hops`, returning as soon as the hold's install is on its way to the extension
        (or none was needed): what it returns ends with the install, raising as `hold_hops` does.
        A load sent to the extension after this returns, with `after_guard`, starts only once the
        hold is in force and not at all when the browser refused it, so the install's round trip
        is off the load's path. Raises at once when the hold failed before anything was sent."""
        sent = asyncio.Event()
        hold = asyncio.ensure_future(self.hold_hops(tab_id, url, sent=sent))
        # Its failure is the caller's to raise; one left behind (the caller cancelled) is only logged.
        hold.add_done_callback(lambda done: done.cancelled() or done.exception())
        waiting = asyncio.ensure_future(sent.wait())
        try:
            await asyncio.wait({hold, waiting}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiting.cancel()
        if hold.done():
            hold.result()
        return hold

    def covers(self, thread_id: str, tab_id: int) -> bool:
        """Whether the rules in force guard `tab_id` for `thread_id` (and no install has failed since)."""
        return self._error is None and (thread_id, tab_id) in self._installed_pairs

    def not_covered(self, tab_id: int) -> ToolFailure:
        """The refusal of a call on a tab the guard does not cover."""
        return self._unavailable(tab_id, self._error or "the tab is not guarded")

    def begin(self, thread_id: str, tool: str, tab_id: int | None, *, loads_page: bool = False) -> Watch:
        """A call starts on `tab_id`: what happened there since the previous call is its to tell.
        Set `current_watch` to the returned watch while the call runs."""
        started = time.perf_counter()
        watch = Watch(thread_id, tool, tab_id, loads_page=loads_page)
        if tab_id is not None:
            watch.spent_s = self._protect_s.pop((thread_id, tab_id), 0.0)
            watch.tabs.add(tab_id)
            self._watches[tab_id] = watch
            watch.earlier = self._earlier.pop(tab_id, [])
            self._last_tool[tab_id] = (thread_id, tool)
        watch.spent_s += time.perf_counter() - started
        return watch

    async def finish(self, watch: Watch, result: ToolResult) -> ToolResult:
        """The call's result, with what the guard saw: a blocked navigation makes it a
        `navigation_blocked` failure; a tab the call opened and adopted is guarded before the
        result goes back; earlier happenings come first."""
        started = time.perf_counter()
        self._release_hops(watch)
        for tab in watch.tabs:
            if self._watches.get(tab) is watch:
                del self._watches[tab]
            if tab != watch.tab_id:
                self._last_tool[tab] = (watch.thread_id, watch.tool)
        adopted = result.result_tab_id
        if adopted is not None and adopted != watch.tab_id and not any(b.tab_id == adopted for b in watch.findings.blocked):
            try:
                await self.protect(watch.thread_id, adopted)
            except ToolFailure as problem:
                # The tab is there but unguarded: say so; the thread's writes there will be refused.
                result = _with_note(result, f"[tab {adopted} could not be guarded: {problem.message}]")
        blocked = watch.findings.blocked
        unreported = [(tab, url) for tab, url in watch.findings.opened
                      if tab != adopted and url and not any(b.tab_id == tab for b in blocked)]
        if unreported:
            result = _with_note(result, "\n".join(f"The page opened a new tab {tab} at {quoted(url, URL_MAX)}."
                                                   for tab, url in unreported))
        if blocked:
            result = blocked_result(result, blocked, result.tab_id if result.tab_id is not None else watch.tab_id,
                                    loads_page=watch.loads_page)
        elif watch.findings.held_hop:
            result = held_result(result, watch.findings.held_hop,
                                 result.tab_id if result.tab_id is not None else watch.tab_id)
        if watch.earlier and watch.tab_id is not None:
            result = with_earlier(result, watch.tab_id, watch.earlier)
        watch.spent_s += time.perf_counter() - started
        self.spent_ms.append((watch.tool, watch.spent_s * 1000))
        del self.spent_ms[:-256]
        return result

    def abandon(self, watch: Watch) -> None:
        """The call ended without a result (cancelled): stop watching for it."""
        self._release_hops(watch)
        for tab in watch.tabs:
            if self._watches.get(tab) is watch:
                del self._watches[tab]

    def _release_hops(self, watch: Watch) -> None:
        if any(self._hops.pop(tab, None) is not None for tab in list(watch.tabs)):
            self._schedule_sync()

    def release(self, thread_id: str) -> None:
        """The thread's turn ended (or its run now waits on the user): its tabs are no longer
        guarded for it."""
        if self._guarded.pop(thread_id, None):
            self._schedule_sync()

    def blocked_page(self, tab_id: int, url: str) -> tuple[Blocked, str] | None:
        """(the block, the origin the tab showed before) when `tab_id` shows the browser's notice
        for a navigation the guard blocked (its URL is the blocked one)."""
        found = self._blocked_pages.get(tab_id)
        return found if found is not None and found[0].url == url else None

    def denial(self, thread_id: str, url: str, tool: str = "navigate") -> Any:
        """The gatekeeper's deny for sending this thread to `url` (None when it would not deny)."""
        return self.gatekeeper.destination_denied(thread_id, tool, url)

    def describe(self) -> dict[str, Any]:
        """A JSON-ready view for debugging and the benchmark (`browser.guard`)."""
        return {
            "guarded": {thread: list(tabs) for thread, tabs in self._guarded.items() if tabs},
            "installedRules": self._installed_count, "installs": self.installs, "error": self._error,
            "knownTabs": len(self._known) if self._known is not None else None,
            "spentMs": [[tool, ms] for tool, ms in self.spent_ms], "installMs": list(self.install_ms),
        }

    # -- installing ----------------------------------------------------------------------------

    async def sync(self, *, sent: asyncio.Event | None = None) -> None:
        """Install the rules the current state calls for, unless they are installed already.
        Raises what prevents it (a ToolFailure from the extension, GatekeeperUnavailable,
        GuardTooLarge); the previous rules then stay in force, and writes are refused until an
        install succeeds. `sent` is set when the install is on its way, or none is needed."""
        self._loop = asyncio.get_running_loop()
        async with self._sync_lock:
            guarded = tab_keys(self._guarded)
            if guarded and self._known is None:
                tabs = await self.bridge.api("tabs.query", {})
                self._known = {t["id"] for t in tabs or [] if isinstance(t, dict) and isinstance(t.get("id"), int)}
                self._known.update(guarded)
            key = self._key(guarded)
            # After a refused install the rules in force are known but the guard is not: the
            # next sync installs again, so one refusal does not leave the guard down for good.
            if key == self._installed_key and self._error is None:
                if sent is not None:
                    sent.set()
                return
            try:
                rules = compile_rules(guard_scopes(guarded, self._known, self.gatekeeper.reach)) if guarded else []
                holds = {tab: sites for tab, sites in self._hops.items() if tab in guarded}
                rules += hold_rules(holds, len(rules) + 1)
                started = time.perf_counter()
                installing = self.bridge.install_guard_now(rules)
                if sent is not None:
                    sent.set()
                await installing
                self.install_ms.append((time.perf_counter() - started) * 1000)
                del self.install_ms[:-256]
            except Exception as exc:
                self._error = getattr(exc, "message", None) or str(exc)
                raise
            self._installed_key = key
            self._installed_pairs = frozenset((thread, tab) for tab, keys in guarded.items() for thread, _ in keys)
            self._installed_count = len(rules)
            self._error = None
            self.installs += 1

    def _key(self, guarded: dict[int, frozenset[tuple[str, str]]]) -> Any:
        if not guarded:
            return ("none",)
        return (self.gatekeeper.changes, frozenset(guarded.items()), frozenset(self._known or ()),
                frozenset(self._hops.items()))

    def _schedule_sync(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        self._dirty = True
        if self._pending_sync is not None and not self._pending_sync.done():
            return  # it installs once more when it is done

        async def run() -> None:
            while self._dirty:
                self._dirty = False
                await asyncio.sleep(0)
                try:
                    await self.sync()
                except Exception as exc:
                    log.warning("the navigation guard could not be updated: %s; writes on driven tabs are refused "
                                "until it can", exc)

        self._pending_sync = loop.create_task(run())

    def _gatekeeper_changed(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed() and self._guarded:
            loop.call_soon_threadsafe(self._schedule_sync)

    def _unavailable(self, tab_id: int, why: str) -> ToolFailure:
        return ToolFailure(ToolCode.GUARD_UNAVAILABLE,
                           f"the navigation guard for tab {tab_id} could not be put in place ({why}); the call was not "
                           "sent, since nothing would stop the page from going where this task may not go",
                           phase="precheck", retryable=True, details={"dispatched": False})

    # -- helpers -------------------------------------------------------------------------------

    def _guarding(self, tab_id: int) -> bool:
        return any(tab_id in tabs for tabs in self._guarded.values())


def _with_note(result: ToolResult, note: str) -> ToolResult:
    import msgspec

    return msgspec.structs.replace(result, text=f"{result.text}\n{note}")


def guarded_calls(tools: Iterable[Any]) -> list[str]:
    """The names of the tools whose calls the guard protects (for documentation and tests)."""
    return sorted(spec.name for spec in tools if drives(spec))


def drives(spec: Any) -> bool:
    """Whether a call of this tool drives its tab (a write the tab or a page in it carries out)."""
    return spec.is_write and spec.target in ("page", "routed")
