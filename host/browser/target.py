"""Resolving the tab a call acts on: an explicit `tabId`, else the thread's route. A closed tab
or one that is not an http(s) page is an error; the call is never moved to another tab. The one
exception is a call that loads a URL (`navigate`): it may start from an empty tab or the
browser's new-tab page, since it is judged at its destination and leaves nothing of the start
page behind; a thread whose user was on such a page when they wrote loads it there."""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any

from host.browser.bridge import Bridge
from host.tools.failure import ToolCode, ToolFailure
from host.browser.routing import Route, TabRoutes
from host.gatekeeper.origins import normalize_origin

WEB_SCHEMES = ("http://", "https://")
# Pages a browser shows in a tab nobody has loaded anything into yet (exactly these URLs: a page
# that sent itself to about:blank#... or to another browser page is not one).
# Chromium shows its third-party page when the default search engine brings no new-tab page.
START_PAGES = frozenset({"about:blank", "about:newtab", "chrome://newtab/", "chrome://new-tab-page/",
                         "chrome://new-tab-page-third-party/", "chrome-search://local-ntp/local-ntp.html",
                         "edge://newtab/", "brave://newtab/"})


@dataclass(frozen=True)
class TabTarget:
    """A tab as it was when the call was resolved."""

    tab_id: int
    url: str
    origin: str
    title: str = ""
    window_id: int | None = None
    status: str = ""

    @property
    def is_web_page(self) -> bool:
        return self.url.startswith(WEB_SCHEMES)

    @property
    def is_start_page(self) -> bool:
        """An empty tab or the new-tab page (see START_PAGES)."""
        return self.url in START_PAGES


def target_from_tab(tab: dict[str, Any]) -> TabTarget:
    """A TabTarget from a chrome.tabs.Tab object."""
    url = str(tab.get("url") or tab.get("pendingUrl") or "")
    return TabTarget(
        tab_id=int(tab["id"]), url=url, origin=normalize_origin(url).text if url else "",
        title=str(tab.get("title") or ""), window_id=tab.get("windowId"), status=str(tab.get("status") or ""),
    )


async def get_tab(bridge: Bridge, tab_id: int) -> TabTarget:
    """The tab with this id; `tab_closed` when there is none."""
    try:
        tab = await bridge.api("tabs.get", tab_id)
    except ToolFailure as exc:
        if exc.code in (ToolCode.NOT_FOUND, ToolCode.BROWSER_API_ERROR):
            raise ToolFailure(ToolCode.TAB_CLOSED, f"tab {tab_id} does not exist (closed?); call tabs_list",
                              phase="resolve", details={"dispatched": False}) from None
        raise
    if not isinstance(tab, dict) or not isinstance(tab.get("id"), int):
        raise ToolFailure(ToolCode.UNKNOWN, f"the browser described tab {tab_id} oddly", phase="resolve")
    return target_from_tab(tab)


async def loaded_tab(bridge: Bridge, tab_id: int, loaded: dict[str, Any]) -> TabTarget:
    """The tab as a wait for its load (`loaded`, the extension's answer) last saw it; asked again
    when the wait did not say, or saw it close (`tab_closed` then)."""
    seen = loaded.get("tab")
    if isinstance(seen, dict) and isinstance(seen.get("id"), int) and not loaded.get("closed"):
        return target_from_tab(seen)
    return await get_tab(bridge, tab_id)


def require_web_page(target: TabTarget, start_ok: bool = False) -> TabTarget:
    """Page tools work on http(s) pages only (`start_ok`: an empty or new-tab page will do too)."""
    if not target.is_web_page and not (start_ok and target.is_start_page):
        # A page can send itself to about:blank#<any words>: only the scheme is said in our words,
        # and the address itself is left to tabs_list, which the model reads as the browser's data.
        raise ToolFailure(ToolCode.NOT_WEB_PAGE, f"tab {target.tab_id} shows {_kind_of_page(target.url)}, not an http(s) "
                          "page; load one into it with navigate, or pass the tabId of a web page from tabs_list",
                          phase="resolve", details={"dispatched": False})
    return target


def _kind_of_page(url: str) -> str:
    """'an about: page', 'a chrome: page'... or 'an empty tab': a page's address without its words."""
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if not scheme or not re.fullmatch(r"[a-z][a-z0-9+.\-]{0,19}", scheme):
        return "an empty tab" if not url else "a page that is not on the web"
    return f"{'an' if scheme[0] in 'aeiou' else 'a'} {scheme}: page"


async def _most_recent_web_tab(bridge: Bridge, start_ok: bool = False) -> TabTarget | None:
    tabs = await bridge.api("tabs.query", {"active": True})
    candidates = [t for t in tabs or [] if str(t.get("url") or "").startswith(WEB_SCHEMES)
                  or (start_ok and target_from_tab(t).is_start_page)]
    if not candidates:
        return None
    best = max(candidates, key=lambda t: t.get("lastAccessed") or 0)
    return target_from_tab(best)


async def _start_page_looked_at(bridge: Bridge) -> TabTarget | None:
    tabs = await bridge.api("tabs.list")
    found = [target_from_tab(t) for t in tabs or [] if isinstance(t, dict) and t.get("userLooking")]
    return next((t for t in found if t.is_start_page), None)


async def resolve_page_tab(bridge: Bridge, routes: TabRoutes, thread_id: str, tab_id: int | None,
                           start_ok: bool = False) -> TabTarget:
    """The http(s) tab a page tool acts on (explicit id, or the thread's default); with
    `start_ok`, an empty or new-tab page will do too."""
    if tab_id is not None:
        return require_web_page(await get_tab(bridge, tab_id), start_ok)
    route = routes.default(thread_id)
    if route.kind == Route.TAB:
        assert route.tab_id is not None
        return require_web_page(await get_tab(bridge, route.tab_id), start_ok)
    if route.kind == Route.CLOSED:
        raise ToolFailure(ToolCode.TAB_CLOSED, f"the task's tab {route.tab_id} was closed; pass a tabId from tabs_list",
                          phase="resolve", details={"dispatched": False})
    if route.kind == Route.NONE:
        # The user was on an empty or new-tab page: a URL load goes there, as it would from the
        # address bar.
        looking = await _start_page_looked_at(bridge) if start_ok else None
        if looking is not None:
            routes.lock(thread_id, looking.tab_id)
            return looking
        raise ToolFailure(ToolCode.NO_TARGET, "no captured web-page target: the user was not on a web page; "
                          "pass a tabId from tabs_list or open one with tab_open", phase="resolve",
                          details={"dispatched": False})
    found = await _most_recent_web_tab(bridge, start_ok)
    if found is None:
        raise ToolFailure(ToolCode.NO_TARGET, "no web page is open; open one with tab_open", phase="resolve",
                          details={"dispatched": False})
    routes.lock(thread_id, found.tab_id)
    return found
