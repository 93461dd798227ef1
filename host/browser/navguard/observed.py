"""What the browser reports about the tabs the navigation guard covers (`browser.event`s): a
navigation it blocked, a new tab and the page that opened it, a tab's new URL, a tab closed or
swapped. Part of `NavigationGuard` (its state is the guard's own): a blocked navigation the
gatekeeper would indeed deny is audited at once and told with the running call or the next
one on that tab; a pop-up of a guarded page is guarded like it, or closed once its first load
shows it went where the thread may not (`screen_popup`)."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from host.browser.navguard.dnr import NO_TAB
from host.browser import snapshots
from host.browser.navguard.report import MAX_NOTES, Blocked, Happening, current_watch
from host.gatekeeper.origins import normalize_origin
from host.tools.failure import ToolCode, ToolFailure

log = logging.getLogger("tabwarden.browser.guard")

# How long a new tab stays covered as a possible pop-up before, no page having claimed it, the
# host takes it for the user's (the browser says which page opened a tab within milliseconds).
POPUP_WAIT_S = 0.5
POPUP_LOAD_S = 10.0


class ObservedTabs:
    """The guard's handlers of what the browser reports, and the bookkeeping they share."""

    bridge: Any
    gatekeeper: Any
    _guarded: dict[str, OrderedDict[int, str]]
    _known: set[int] | None
    _popups: dict[int, asyncio.TimerHandle]
    _opened_by: dict[int, int]
    _watches: dict[int, Any]
    _earlier: dict[int, list[Happening]]
    _urls: dict[int, tuple[str, str]]
    _blocked_pages: dict[int, tuple[Blocked, str]]
    _last_tool: dict[int, tuple[str, str]]
    _protect_s: dict[tuple[str, int], float]
    _hops: dict[int, tuple[str, ...]]
    _loop: asyncio.AbstractEventLoop | None

    def _guarding(self, tab_id: int) -> bool:
        raise NotImplementedError

    def _schedule_sync(self) -> None:
        raise NotImplementedError

    async def screen_popup(self, thread_id: str, source: int, tab: dict[str, Any]) -> bool:
        """Whether a tab the running call's page opened may be used: once its first navigation
        has ended, a tab the guard blocked, or whose address the thread may not reach, is closed,
        audited and reported with the call (False); any other is guarded like its opener (True)."""
        tab_id = int(tab["id"])
        loaded = await snapshots.wait_for_load(self.bridge, tab_id, timeout_s=POPUP_LOAD_S)
        shown = loaded.get("tab") if isinstance(loaded.get("tab"), dict) else tab
        url = str(shown.get("url") or shown.get("pendingUrl") or "")
        watch = current_watch.get()
        found = [b for b in (watch.findings.blocked if watch else []) if b.tab_id == tab_id and b.frame_id == 0]
        decision = None if found or not url else self._denial_or_none(thread_id, url, "navigate")
        if not found and decision is None:
            if not loaded.get("closed"):
                self._adopt_popup(source, tab_id, url)
            return not loaded.get("closed")
        if found:
            blocked = found[0]
        else:
            blocked = Blocked(tab_id, 0, url, normalize_origin(url).text, decision.code, decision.reason)
            self._audit(thread_id, watch.tool if watch else "navigate", blocked)
            if watch is not None:
                watch.findings.blocked.append(blocked)
        blocked.opened_by = source
        await self._close(blocked)
        return False

    def refused_popups(self) -> list[Blocked]:
        """The tabs the running call's page opened that the guard closed."""
        watch = current_watch.get()
        return [b for b in watch.findings.blocked if b.opened_by is not None] if watch is not None else []

    def tab_created(self, tab_id: int, opener: int | None) -> None:
        """A new tab: covered as a possible pop-up until the browser says which page opened it
        (`opened_by_page`), or for `POPUP_WAIT_S`. Its `openerTabId` proves nothing: for a pop-up
        of a background tab the browser names the window's active tab."""
        if self._known is None or tab_id in self._popups or tab_id in self._known:
            return  # nothing guarded yet (the first install lists every tab), or already settled
        loop = self._loop
        if loop is not None:
            self._popups[tab_id] = loop.call_later(POPUP_WAIT_S, self._not_a_popup, tab_id)

    def opened_by_page(self, source: int, tab_id: int, url: str) -> None:
        """The browser says the page in `source` opened `tab_id` (for `url`): a pop-up of a
        guarded tab is guarded like it; any other tab is the user's."""
        if self._guarding(source):
            self._adopt_popup(source, tab_id, url)
        elif self._known is not None and tab_id not in self._opened_by:
            self._not_a_popup(tab_id)

    def popups_of(self, source: int) -> list[int]:
        """The tabs the browser said the page in `source` opened."""
        return [tab for tab, opener in self._opened_by.items() if opener == source]

    def navigation_blocked(self, tab_id: int, frame_id: int, url: str) -> None:
        """The browser blocked a navigation in `tab_id`. Ours when a thread guarding the tab may
        indeed not go there: audited now, reported with the running call or the next one."""
        threads = [thread for thread, tabs in self._guarded.items() if tab_id in tabs]
        for thread in threads:
            decision = self._denial_or_none(thread, url, self._guarded[thread][tab_id])
            if decision is not None:
                break
        else:
            self._hop_held(tab_id, frame_id, url)
            return  # a hold's block, another extension's, or a tab no thread guards
        source = self._opened_by.get(tab_id)
        blocked = Blocked(tab_id, frame_id, url, normalize_origin(url).text, decision.code, decision.reason,
                          opened_by=source)
        watch = self._watches.get(tab_id) or (self._watches.get(source) if source is not None else None)
        tool = watch.tool if watch else self._last_tool.get(source if source is not None else tab_id, ("", "navigate"))[1]
        self._audit(thread, tool, blocked)
        if frame_id == 0:
            # The browser may report the tab at the blocked URL (its notice) before the block.
            now, previous = self._urls.get(tab_id, ("", ""))
            before = normalize_origin(previous if now == url else now).text
            self._blocked_pages[tab_id] = (blocked, before)
            notes = self._earlier.get(tab_id)
            if notes:
                notes[:] = [n for n in notes if not (n.kind == "navigated" and n.url == url)]
        if source is not None and frame_id == 0 and self._loop is not None:
            self._loop.create_task(self._close(blocked))
        if watch is not None:
            watch.findings.blocked.append(blocked)
        else:
            self._remember(source if source is not None else tab_id, Happening("blocked", url, tab_id, blocked))

    def _hop_held(self, tab_id: int, frame_id: int, url: str) -> None:
        """A redirect of the running navigation to another site was held: the call says so."""
        sites = self._hops.get(tab_id)
        watch = self._watches.get(tab_id)
        if sites is None or frame_id != 0 or watch is None or watch.findings.held_hop:
            return
        if hop_sites(url) and hop_sites(url)[0] not in sites:
            watch.findings.held_hop = url

    def tab_updated(self, tab_id: int, url: str) -> None:
        """A guarded tab shows a new URL: a navigation no call made is told with the next call."""
        if not url or not self._guarding(tab_id):
            return
        shown = self._blocked_pages.get(tab_id)
        if shown is not None and shown[0].url == url:
            return  # the browser's notice for the blocked navigation, at the blocked URL
        self._blocked_pages.pop(tab_id, None)
        previous = self._urls.get(tab_id, ("", ""))[0]
        if previous == url:
            return
        self._urls[tab_id] = (url, previous)
        if previous and tab_id not in self._watches:
            self._remember(tab_id, Happening("navigated", url, tab_id))

    def tab_removed(self, tab_id: int) -> None:
        """A tab closed: it is guarded for nobody."""
        changed = False
        for tabs in self._guarded.values():
            changed |= tabs.pop(tab_id, None) is not None
        for table in (self._opened_by, self._earlier, self._urls, self._blocked_pages, self._last_tool, self._watches):
            table.pop(tab_id, None)
        timer = self._popups.pop(tab_id, None)
        if timer is not None:
            timer.cancel()
        for key in [key for key in self._protect_s if key[1] == tab_id]:
            del self._protect_s[key]
        if self._known is not None:
            self._known.discard(tab_id)
        if changed:
            self._schedule_sync()

    def tab_replaced(self, old: int, new: int) -> None:
        """Chrome swapped a tab for another id: its guard follows."""
        changed = False
        for tabs in self._guarded.values():
            tool = tabs.pop(old, None)
            if tool is not None:
                tabs[new] = tool
                changed = True
        if self._known is not None:
            self._known.discard(old)
            self._known.add(new)
        if changed:
            self._schedule_sync()

    def _adopt_popup(self, source: int, tab_id: int, url: str) -> None:
        timer = self._popups.pop(tab_id, None)
        if timer is not None:
            timer.cancel()
        if tab_id not in self._opened_by:
            self._opened_by[tab_id] = source
            for tabs in self._guarded.values():
                if source in tabs:
                    tabs[tab_id] = "navigate"
            watch = self._watches.get(source)
            if watch is not None:
                watch.findings.opened.append((tab_id, url))
            elif url:
                self._remember(source, Happening("opened", url, tab_id))
        if self._known is not None:
            self._known.add(tab_id)
        self._schedule_sync()

    def _not_a_popup(self, tab_id: int) -> None:
        timer = self._popups.pop(tab_id, None)
        if timer is not None:
            timer.cancel()
        if self._known is not None and tab_id not in self._opened_by:
            self._known.add(tab_id)
            self._schedule_sync()

    def _denial_or_none(self, thread_id: str, url: str, tool: str) -> Any:
        try:
            return self.gatekeeper.destination_denied(thread_id, tool, url)
        except Exception:
            log.warning("could not judge a blocked navigation to %s", url, exc_info=True)
            return None

    def _remember(self, tab_id: int, happening: Happening) -> None:
        notes = self._earlier.setdefault(tab_id, [])
        notes.append(happening)
        del notes[:-4 * MAX_NOTES]

    def audit_blocked(self, thread_id: str, tool: str, url: str, decision: Any) -> None:
        """Record a request to `url` the thread may not make that was stopped elsewhere (a
        download the guard could not see, cancelled afterwards)."""
        self._audit(thread_id, tool, Blocked(-1, 0, url, normalize_origin(url).text, decision.code, decision.reason))

    def _audit(self, thread_id: str, tool: str, blocked: Blocked) -> None:
        where = (f"tab {blocked.tab_id}" if blocked.tab_id != NO_TAB else "no tab") + (
            f" frame {blocked.frame_id}" if blocked.frame_id else "")
        if blocked.opened_by is not None:
            where += f" (opened by tab {blocked.opened_by})"
        try:
            self.gatekeeper.record_outcome(thread_id=thread_id, tool=tool or "navigate",
                                           outcome=ToolCode.NAVIGATION_BLOCKED, target_origin=blocked.origin,
                                           detail=f"{where}: {blocked.url} ({blocked.code})")
        except Exception:
            log.warning("the blocked navigation to %s could not be audited", blocked.origin, exc_info=True)

    async def _close(self, blocked: Blocked) -> None:
        if blocked.closed:
            return
        blocked.closed = True
        try:
            await self.bridge.api("tabs.remove", blocked.tab_id)
        except ToolFailure as problem:
            blocked.closed = problem.code in (ToolCode.NOT_FOUND, ToolCode.TAB_CLOSED)


def hop_sites(url: str) -> tuple[str, ...]:
    """The site a navigation to `url` is for, as the hold names it (its registrable domain), or
    () for an address that is not a web page's."""
    from urllib.parse import urlsplit

    from host.gatekeeper.facts.values import site_of

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return ()
    if parts.scheme not in ("http", "https") or not host or ":" in host:
        return ()
    return (site_of(host),)
