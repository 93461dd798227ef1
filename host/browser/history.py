"""Where a history move or a session restore leads, found before the gatekeeper judges it, and
the history move to exactly that place.

`go_back` / `go_forward`: the tabs API does not say which URL an entry of a tab's history holds,
and Chrome's own back (`tabs.goBack`) skips entries a page added without user interaction, so
from outside nobody can tell which entry it would reach. The tab's history is therefore read
through the debugger (`Page.getNavigationHistory`), the entry one step away is judged, and the
move goes to exactly that entry (`Page.navigateToHistoryEntry`), so what was judged is what
loads. The cost: the debugger attaches to the tab (Chrome shows its "started debugging this
browser" bar until the attachment ends 30 s after the last command, and the debugger leaves any
other tab it was attached to, whose deep refs then go stale); a tab where the user dismissed that
bar refuses history moves until the user's next message. Only reads are sent before the move.
A move counts every entry, those a page added on its own included (the browser's back button
would skip them).

`session_restore`: `sessions.getRecentlyClosed` names the closed tab, or the closed window's
tabs, with their URLs, by session id.

Both put where they lead in the target's facts as `destinations`, which the gatekeeper judges
(as a navigation there, and as the call at that origin). Resolution runs again at dispatch: a
history entry that is no longer the one judged ends the call as `target_changed`, a session id
that no longer exists as `not_found`; and the move itself checks the entry once more, in the
same debugger hold as the move.
"""

from __future__ import annotations

import dataclasses
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, AsyncIterator

from host.browser.l2.targets import cdp_failure
from host.browser.target import TabTarget
from host.cdp.client import TabClient
from host.cdp.errors import CdpError
from host.gatekeeper.origins import normalize_origin
from host.tools.browser_params import SessionRestoreParams
from host.tools.call import Target, ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

# How far each history tool moves.
STEPS = {"go_back": -1, "go_forward": 1}
# chrome.sessions.MAX_SESSION_RESULTS: the most getRecentlyClosed returns.
MAX_CLOSED = 25
HISTORY_TIMEOUT_S = 10.0
MAX_LINE_URLS = 5


@dataclass(frozen=True)
class Entry:
    """One entry of a tab's history, as the debugger reports it."""

    id: int
    url: str


@dataclass(frozen=True)
class Move:
    """A resolved history move (the target's handle): the tab, the step and the entry it reaches."""

    tab: TabTarget
    step: int
    entry: Entry


@dataclass(frozen=True)
class Closed:
    """A resolved restore (the target's handle): the session id and the URLs it reopens ("" where
    the browser did not say)."""

    session_id: str
    kind: str  # "tab" or "window"
    urls: tuple[str, ...]


# ---------------------------------------------------------------- history moves


async def resolve_move(call: ToolCall, target: Target, browser: "BrowserGateway") -> Target:
    """`target` (the routed tab) with the entry the move reaches as its destination. Raises
    `no_history` when there is none, `target_changed` when the call was judged for another entry
    of this tab, and the debugger's failures (nothing is sent but reads)."""
    assert target.tab_id is not None and isinstance(target.handle, TabTarget)
    step = STEPS[call.tool]
    async with _debugger(browser, target.tab_id, call.tool) as client:
        entry = await _entry(client, step, call.tool)
    previous = call.target.handle if call.target is not None else None
    if isinstance(previous, Move) and previous.tab.tab_id == target.tab_id and previous.entry != entry:
        raise _changed(call.tool, target.tab_id, previous.entry, entry)
    return dataclasses.replace(target, facts={"destinations": [{"url": entry.url}]},
                               line=f"{'back' if step < 0 else 'forward'} to {entry.url}",
                               handle=Move(target.handle, step, entry))


async def move(call: ToolCall, browser: "BrowserGateway") -> None:
    """Go to the entry the call was judged for, after checking, in the same debugger hold, that
    it is still the one a step away (else `target_changed`, nothing sent)."""
    assert call.target is not None and isinstance(call.target.handle, Move)
    judged = call.target.handle
    tab_id = judged.tab.tab_id
    async with _debugger(browser, tab_id, call.tool) as client:
        entry = await _entry(client, judged.step, call.tool)
        if entry != judged.entry:
            raise _changed(call.tool, tab_id, judged.entry, entry)
        try:
            await client.send("Page.navigateToHistoryEntry", {"entryId": entry.id}, timeout=HISTORY_TIMEOUT_S)
        except CdpError as exc:
            raise cdp_failure(exc, write=True) from None


@asynccontextmanager
async def _debugger(browser: "BrowserGateway", tab_id: int, tool: str) -> AsyncIterator[TabClient]:
    """The tab's debugger for reading its history; its failures before the move are refusals
    (nothing was sent that acts)."""
    manager = browser.cdp
    stopped = manager.user_stopped(tab_id)
    if stopped:
        raise ToolFailure(ToolCode.DEBUGGER_CANCELLED, f"{tool} reads the tab's history through the debugger, which the "
                          f"user stopped in tab {tab_id} (they dismissed the browser's debugging bar); it stays off "
                          "there until the user's next message. Use navigate with the page's URL instead",
                          phase="resolve", details={"dispatched": False, "reason": stopped})
    try:
        async with manager.use(tab_id) as client:
            yield client
    except CdpError as exc:
        failure = cdp_failure(exc, write=False)
        raise ToolFailure(failure.code, f"the history of tab {tab_id} could not be read through the debugger: "
                          f"the browser reported {quoted(failure.message)}", phase="resolve", retryable=failure.retryable,
                          details={"dispatched": False}) from None


async def _entry(client: TabClient, step: int, tool: str) -> Entry:
    """The entry `step` away from the current one; `no_history` when there is none."""
    answer = await client.send("Page.getNavigationHistory", timeout=HISTORY_TIMEOUT_S)
    current = answer.get("currentIndex") if isinstance(answer, dict) else None
    entries = answer.get("entries") if isinstance(answer, dict) else None
    if not isinstance(current, int) or not isinstance(entries, list) or not 0 <= current < len(entries):
        raise ToolFailure(ToolCode.UNKNOWN, f"the browser described tab {client.tab_id}'s history oddly",
                          phase="resolve", details={"dispatched": False})
    index = current + step
    # A tab tab_open made starts blank and is guarded before it loads its URL; the browser may
    # keep that blank start as an entry, which is no page to go back to.
    blank_start = index == 0 and step < 0 and isinstance(entries[0], dict) and entries[0].get("url") == "about:blank"
    if not 0 <= index < len(entries) or blank_start:
        where = "earlier" if step < 0 else "later"
        raise ToolFailure(ToolCode.NO_HISTORY, f"tab {client.tab_id} has no {where} page to go to with {tool}",
                          phase="resolve", details={"dispatched": False})
    item = entries[index]
    if not isinstance(item, dict) or not isinstance(item.get("id"), int) or not isinstance(item.get("url"), str):
        raise ToolFailure(ToolCode.UNKNOWN, f"the browser described an entry of tab {client.tab_id}'s history oddly",
                          phase="resolve", details={"dispatched": False})
    return Entry(item["id"], item["url"])


def _changed(tool: str, tab_id: int, judged: Entry, now: Entry) -> ToolFailure:
    return ToolFailure(ToolCode.TARGET_CHANGED, f"{tool} was checked for going to {quoted(judged.url)} in tab {tab_id}, "
                       f"but that entry is no longer the one it reaches (now {quoted(now.url)}); nothing was sent. Call it again",
                       phase="dispatch", retryable=True, details={"dispatched": False})


# ---------------------------------------------------------------- restores


async def resolve_restore(call: ToolCall, browser: "BrowserGateway") -> Target:
    """The closed tab or window `sessionId` names, with every URL it reopens as a destination and
    the (active) tab's origin as the target origin; `not_found` when the browser no longer lists
    it. Sends nothing but the lookup."""
    assert isinstance(call.params, SessionRestoreParams)
    session_id = call.params.session_id
    items = await browser.bridge.api("sessions.getRecentlyClosed", {"maxResults": MAX_CLOSED}) or []
    found = _find(items, session_id)
    if found is None:
        raise ToolFailure(ToolCode.NOT_FOUND, f"no recently closed tab or window has sessionId {quoted(session_id)} (it was "
                          f"restored already, or is no longer among the last {MAX_CLOSED}); call "
                          "sessions_recently_closed", phase="resolve", details={"dispatched": False})
    kind, tabs = found
    urls = tuple(_url(tab) for tab in tabs)
    shown = next((_url(tab) for tab in tabs if tab.get("active")), urls[0] if urls else "")
    # A tab the browser gave no URL for cannot be judged: the gatekeeper asks for it.
    destinations = [{"url": url} if url else {"unresolved": True} for url in urls] or [{"unresolved": True}]
    listed = ", ".join(url or "(unknown URL)" for url in urls[:MAX_LINE_URLS])
    more = f" and {len(urls) - MAX_LINE_URLS} more" if len(urls) > MAX_LINE_URLS else ""
    line = f"reopen {listed}" if kind == "tab" else f"reopen a window of {len(urls)} tab(s): {listed}{more}"
    return Target(origin=normalize_origin(shown).text if shown else "", url=shown, facts={"destinations": destinations},
                  line=line, handle=Closed(session_id, kind, urls))


def _find(items: Any, session_id: str) -> tuple[str, list[dict[str, Any]]] | None:
    """("tab", [tab]) or ("window", tabs) for the closed item with this id; a tab inside a closed
    window can be restored on its own by its id too."""
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        tab, window = item.get("tab"), item.get("window")
        if isinstance(tab, dict) and tab.get("sessionId") == session_id:
            return "tab", [tab]
        if isinstance(window, dict):
            tabs = [t for t in window.get("tabs") or [] if isinstance(t, dict)]
            if window.get("sessionId") == session_id:
                return "window", tabs
            for inner in tabs:
                if inner.get("sessionId") == session_id:
                    return "tab", [inner]
    return None


def _url(tab: dict[str, Any]) -> str:
    url = tab.get("url")
    return url if isinstance(url, str) else ""
