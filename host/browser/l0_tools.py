"""L0 tools: tabs, navigation and browser metadata through allow-listed extension APIs. Nothing
is injected into pages; only `tab_focus` changes what the user sees."""

from __future__ import annotations

import contextlib
import time
from typing import Any, TYPE_CHECKING

from host.browser import history, snapshots
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.browser_params import (BookmarksSearchParams, HistorySearchParams, NavigateParams, RecentlyClosedParams,
                                 SessionRestoreParams, TabCloseParams, TabFocusParams, TabGroupUpdateParams,
                                 TabOpenParams, TabsGroupParams, TopSitesParams)
from host.browser.results import NEW_PAGE_DIVIDER
from host.tools.result import ToolResult, success
from host.browser.target import loaded_tab
from host.gatekeeper.origins import destination

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

LOAD_TIMEOUT_S = 15.0
BLANK = "about:blank"


def _clip(text: Any, limit: int = 120) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "…"


def _when(ms: Any) -> str:
    if not isinstance(ms, (int, float)) or ms <= 0:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


def _loadable(url: str) -> str:
    """The normalised http(s) URL to load (what the gatekeeper judged), or invalid_params."""
    dest = destination(url)
    if not dest.valid or dest.scheme not in ("http", "https"):
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"{url!r} is not an http(s) URL", phase="validate",
                          details={"dispatched": False})
    return dest.href


# ---------------------------------------------------------------- tabs


async def tabs_list(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Every tab of every window, marking the one the user is looking at."""
    tabs = await browser.bridge.api("tabs.list")
    lines = []
    for tab in tabs or []:
        marks = []
        if tab.get("userLooking"):
            marks.append("the user is looking at it")
        elif tab.get("active"):
            marks.append("active in its window")
        if tab.get("groupId", -1) not in (-1, None):
            marks.append(f"group {tab['groupId']}")
        suffix = f" ({'; '.join(marks)})" if marks else ""
        lines.append(f"- [tabId={tab.get('id')}] {_clip(tab.get('title'), 80)!r} {tab.get('url', '')} "
                     f"window {tab.get('windowId')}{suffix}")
    text = f"{len(lines)} tab(s):\n" + "\n".join(lines)
    return success(call.tool, text, details={"tabs": [{k: t.get(k) for k in ("id", "windowId", "url", "title", "active",
                                                                           "userLooking")} for t in tabs or []]})


async def tab_open(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Open `url` in a background tab, or reuse a tab already showing exactly that URL."""
    assert isinstance(call.params, TabOpenParams)
    href = _loadable(call.params.url)
    for tab in await browser.bridge.api("tabs.query", {}) or []:
        if tab.get("url") == href:
            browser.routes.touch(call.thread_id, tab["id"], wrote=False)
            return success(call.tool, f"Tab {tab['id']} already shows {href}; reused it without focusing it.",
                           tab_id=tab["id"], details={"reused": True})
    # The tab starts blank and is guarded before it loads anything, so that each redirect hop of
    # `href` is held to where this thread may go, like the pages it then opens.
    created = await browser.bridge.api("tabs.create", {"url": BLANK, "active": False})
    tab_id = int(created["id"])
    browser.routes.touch(call.thread_id, tab_id, wrote=False)
    try:
        await browser.guard.protect(call.thread_id, tab_id, url=href)
    except ToolFailure:
        with contextlib.suppress(ToolFailure):
            await browser.bridge.api("tabs.remove", tab_id)
        raise
    await browser.guard.hold_hops(tab_id, href)
    await browser.bridge.api("tabs.update", tab_id, {"url": href})
    loaded = await snapshots.wait_for_load(browser.bridge, tab_id, from_url=BLANK, timeout_s=LOAD_TIMEOUT_S, url=href)
    tab = await loaded_tab(browser.bridge, tab_id, loaded)
    note = "" if not loaded.get("timedOut") else " (still loading)"
    where = tab.url or href
    redirected = f" (redirected from {href})" if tab.url and tab.url != href else ""
    return success(call.tool, f"Opened tab {tab_id} in the background at {where}{redirected}{note}.", tab_id=tab_id,
                   details={"reused": False, "url": tab.url, "timedOut": bool(loaded.get("timedOut"))})


async def tab_focus(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Bring a tab to the front (the only tool that changes what the user sees)."""
    assert isinstance(call.params, TabFocusParams)
    tab = await browser.bridge.api("tabs.focus", call.params.tab_id)
    return success(call.tool, f"Tab {call.params.tab_id} ({tab.get('url', '')}) is now in front; the user's view changed.",
                   tab_id=call.params.tab_id)


async def tab_close(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Close a tab and say whether the user's view changed."""
    assert isinstance(call.params, TabCloseParams)
    tabs = await browser.bridge.api("tabs.list")
    looking = any(t.get("id") == call.params.tab_id and t.get("userLooking") for t in tabs or [])
    await browser.bridge.api("tabs.remove", call.params.tab_id)
    view = "the user was looking at it, so their view changed" if looking else "the user's view did not change"
    return success(call.tool, f"Closed tab {call.params.tab_id}; {view}.", tab_id=call.params.tab_id,
                   details={"userViewChanged": looking})


async def _after_navigation(call: ToolCall, browser: "BrowserGateway", tab_id: int, from_url: str, verb: str,
                            *, reload: bool = False, loaded: dict[str, Any] | None = None) -> ToolResult:
    # A reload ends at the URL it started from: its load is waited for, not a change of URL.
    if loaded is None:
        loaded = await snapshots.wait_for_load(browser.bridge, tab_id, from_url=None if reload else from_url,
                                               timeout_s=LOAD_TIMEOUT_S, snapshot=True)
    if loaded.get("closed"):
        raise ToolFailure(ToolCode.TAB_CLOSED, f"tab {tab_id} closed during {call.tool}", phase="settle",
                          details={"dispatched": True})
    tab = await loaded_tab(browser.bridge, tab_id, loaded)
    browser.refs.forget(tab_id)
    browser.tab_mirror.seen(tab)
    browser.routes.touch(call.thread_id, tab_id, wrote=True)
    if tab.url == from_url and not reload:
        return success(call.tool, f"{verb}, but the tab still shows {tab.url} after {LOAD_TIMEOUT_S:g} s.", tab_id=tab_id,
                       details={"url": tab.url, "timedOut": True})
    snapshot = await snapshots.loaded_snapshot(browser.bridge, browser.refs, tab_id, loaded) if tab.is_web_page \
        else "(not a web page)"
    still = " (still loading)" if loaded.get("timedOut") else ""
    details: dict[str, Any] = {"url": tab.url, **({"reloaded": True} if reload else {})}
    return success(call.tool, f"{verb}: the tab now shows {tab.url}{still}; every earlier ref is invalid.\n"
                   f"{NEW_PAGE_DIVIDER}\n{snapshot}", tab_id=tab_id, details=details)


async def navigate(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Load `url` in the routed tab (reload it when it already shows `url`, as a person asking
    for the page again expects) and return the new page's snapshot."""
    assert isinstance(call.params, NavigateParams) and call.target is not None
    href = _loadable(call.params.url)
    # A redirect to another site waits for a judgement of its own (see host/calls/hops.py); the
    # hold also replaces one left from a call that just ended (its release is not waited for).
    if call.target.url == href:
        await browser.guard.hold_hops(call.tab_id, href)  # type: ignore[arg-type]
        await browser.bridge.api("tabs.reload", call.tab_id)
        return await _after_navigation(call, browser, call.tab_id, href, f"Reloaded {href} (the tab already showed it)",  # type: ignore[arg-type]
                                       reload=True)
    # The load goes out right behind the hold's install (the extension starts it once the hold is
    # in force), and the wait for its end comes back in the same call.
    hold = await browser.guard.hold_hops_sent(call.tab_id, href)  # type: ignore[arg-type]
    try:
        loaded = await snapshots.navigate_and_wait(browser.bridge, call.tab_id, href, from_url=call.target.url,  # type: ignore[arg-type]
                                                   timeout_s=LOAD_TIMEOUT_S, snapshot=True, after_guard=True)
    finally:
        await hold  # a refused hold refused the load too: its failure is the call's
    return await _after_navigation(call, browser, call.tab_id, call.target.url, f"Navigated to {href}",  # type: ignore[arg-type]
                                   loaded=loaded)


async def _move_in_history(call: ToolCall, browser: "BrowserGateway", verb: str) -> ToolResult:
    # To exactly the entry the call was judged for (see host/browser/history.py).
    assert call.target is not None and call.tab_id is not None
    await history.move(call, browser)
    return await _after_navigation(call, browser, call.tab_id, call.target.url, verb)


async def go_back(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Go back one entry in the routed tab's history."""
    return await _move_in_history(call, browser, "Went back")


async def go_forward(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Go forward one entry in the routed tab's history."""
    return await _move_in_history(call, browser, "Went forward")


# ---------------------------------------------------------------- browser metadata


async def history_search(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Search the browsing history."""
    p = call.params
    assert isinstance(p, HistorySearchParams)
    query: dict[str, Any] = {"text": p.query, "maxResults": p.max_results}
    query["startTime"] = p.start_time if p.start_time is not None else 0
    if p.end_time is not None:
        query["endTime"] = p.end_time
    items = await browser.bridge.api("history.search", query) or []
    lines = [f"- {_clip(i.get('title') or '(untitled)', 80)!r} {i.get('url', '')} (visits {i.get('visitCount', 0)}, "
             f"last {_when(i.get('lastVisitTime'))})" for i in items]
    return success(call.tool, f"{len(lines)} history entr{'y' if len(lines) == 1 else 'ies'}:\n" + "\n".join(lines))


async def bookmarks_search(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Search bookmarks (entries with a URL)."""
    p = call.params
    assert isinstance(p, BookmarksSearchParams)
    items = [b for b in await browser.bridge.api("bookmarks.search", p.query) or [] if b.get("url")][: p.max_results]
    lines = [f"- {_clip(b.get('title') or '(untitled)', 80)!r} {b.get('url')}" for b in items]
    return success(call.tool, f"{len(lines)} bookmark(s):\n" + "\n".join(lines))


async def top_sites(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """The browser's most visited sites."""
    p = call.params
    assert isinstance(p, TopSitesParams)
    items = (await browser.bridge.api("topSites.get") or [])[: p.max_results]
    lines = [f"- {_clip(s.get('title') or '(untitled)', 80)!r} {s.get('url')}" for s in items]
    return success(call.tool, f"{len(lines)} top site(s):\n" + "\n".join(lines))


async def sessions_recently_closed(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Recently closed tabs and windows with their session ids."""
    p = call.params
    assert isinstance(p, RecentlyClosedParams)
    items = await browser.bridge.api("sessions.getRecentlyClosed", {"maxResults": p.max_results}) or []
    lines = []
    for item in items:
        if item.get("tab"):
            tab = item["tab"]
            lines.append(f"- tab sessionId={tab.get('sessionId')} {_clip(tab.get('title'), 80)!r} {tab.get('url', '')}")
        elif item.get("window"):
            window = item["window"]
            lines.append(f"- window sessionId={window.get('sessionId')} with {len(window.get('tabs') or [])} tab(s)")
    return success(call.tool, f"{len(lines)} recently closed item(s):\n" + "\n".join(lines))


async def session_restore(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Reopen the recently closed tab or window the call was judged for: looked up once more
    right before (`not_found` when it is gone, `target_changed` when it reopens other pages now)."""
    p = call.params
    assert isinstance(p, SessionRestoreParams)
    judged = call.target.handle if call.target is not None else None
    now = (await history.resolve_restore(call, browser)).handle
    if not isinstance(judged, history.Closed) or now != judged:
        raise ToolFailure(ToolCode.TARGET_CHANGED, f"the closed item {p.session_id!r} reopens other pages than when it "
                          "was checked; call sessions_recently_closed again", phase="dispatch",
                          details={"dispatched": False})
    restored = await browser.bridge.api("sessions.restore", p.session_id) or {}
    if restored.get("tab"):
        tab = restored["tab"]
        return success(call.tool, f"Restored tab {tab.get('id')} at {tab.get('url', '')}.", tab_id=tab.get("id"))
    window = restored.get("window") or {}
    return success(call.tool, f"Restored window {window.get('id')} with {len(window.get('tabs') or [])} tab(s).")


async def tab_groups_list(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Every tab group with its tabs."""
    groups = await browser.bridge.api("tabGroups.query", {}) or []
    tabs = await browser.bridge.api("tabs.query", {}) or []
    lines = []
    for group in groups:
        members = [t["id"] for t in tabs if t.get("groupId") == group.get("id")]
        state = "collapsed" if group.get("collapsed") else "expanded"
        lines.append(f"- groupId={group.get('id')} {group.get('title', '')!r} {group.get('color')} {state} "
                     f"window {group.get('windowId')} tabs {members}")
    return success(call.tool, f"{len(lines)} tab group(s):\n" + "\n".join(lines))


async def tabs_group(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Put tabs into a new group, or into `groupId`."""
    p = call.params
    assert isinstance(p, TabsGroupParams)
    options: dict[str, Any] = {"tabIds": p.tab_ids}
    if p.group_id is not None:
        options["groupId"] = p.group_id
    group_id = await browser.bridge.api("tabs.group", options)
    return success(call.tool, f"Tabs {p.tab_ids} are now in group {group_id}.", details={"groupId": group_id})


async def tab_group_update(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Change a group's title, colour or collapsed state."""
    p = call.params
    assert isinstance(p, TabGroupUpdateParams)
    props = {k: v for k, v in (("title", p.title), ("color", p.color), ("collapsed", p.collapsed)) if v is not None}
    group = await browser.bridge.api("tabGroups.update", p.group_id, props) or {}
    return success(call.tool, f"Group {p.group_id} is now {group.get('title', '')!r}, {group.get('color')}, "
                   f"{'collapsed' if group.get('collapsed') else 'expanded'}.")
