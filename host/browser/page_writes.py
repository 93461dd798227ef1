"""The page executor's write tools (and the synthetic fallback of trusted key presses): dispatch
inside the dialog patch, diff the post-write snapshot against the last one, adopt a
child tab the action opened, and, when the page never answers, work out what happened without
ever sending the write again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Awaitable, Iterable

import msgspec

from host.browser import snapshots
from host.browser.described import refs_used
from host.browser.expected import expected_elements
from host.browser.results import NEW_PAGE_DIVIDER, SNAPSHOT_DIVIDER, UNSTABLE_NOTICE, dialog_lines
from host.browser.target import loaded_tab
from host.browser.wire import ExecuteResult
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.params import content_params
from host.tools.result import ToolResult, success

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

log = logging.getLogger("tabwarden.browser")

WRITE_DEADLINE_MS = 15_000


async def tab_ids(call: ToolCall, browser: "BrowserGateway") -> set[int]:
    """The ids of every open tab (taken before an action, to spot the tab it opens)."""
    return ids_of(await browser.bridge.api("tabs.query", {}))


async def listed_before(listing: Awaitable[Any]) -> set[int] | None:
    """The tabs listed before a write (`listing`: a tabs.query sent before it), or None when the
    listing failed: the write was sent, so its failure is not the write's (only a tab it opened
    cannot be told apart then)."""
    try:
        return ids_of(await listing)
    except ToolFailure as exc:
        log.warning("the tabs before a write could not be listed: %s", exc.message)
        return None


def ids_of(tabs: Any) -> set[int]:
    """The ids of the tabs a `tabs.query` listed."""
    return {t["id"] for t in tabs or [] if isinstance(t, dict) and isinstance(t.get("id"), int)}


async def child_tab(call: ToolCall, browser: "BrowserGateway", source: int, before: set[int] | None, expected_urls: Iterable[str] = (),
                    tabs: list | None = None) -> dict | None:
    """A tab that did not exist before the action and that the action opened: its opener is the
    source tab, or it shows a URL the page was seen opening (Chrome does not always record the
    opener of a `target=_blank` tab). The navigation guard screens it first: one at a place the
    thread may not reach is closed and reported, never adopted. `tabs`: the open tabs, when the
    caller has just listed them."""
    if before is None:
        return None  # what was open before is not known: no tab can be told to be new
    if tabs is None:
        tabs = await browser.bridge.api("tabs.query", {})
    fresh = [t for t in tabs or [] if isinstance(t, dict) and isinstance(t.get("id"), int) and t["id"] not in before]
    expected = set(expected_urls)
    opened = set(browser.guard.popups_of(source))  # what the browser said this page opened
    candidates = [t for t in fresh if t["id"] in opened or t.get("openerTabId") == source]
    candidates += [t for t in fresh if t not in candidates and {t.get("url"), t.get("pendingUrl")} & expected]
    for tab in candidates:
        if await browser.guard.screen_popup(call.thread_id, source, tab):
            return tab
    return None


def _opened_urls(result: ExecuteResult) -> list[str]:
    return [*result.opens_tabs, *(d.message for d in result.dialogs if d.kind == "open")]


def _dialogs(result: ExecuteResult) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(d) for d in result.dialogs if d.kind != "open"]


async def adopt(call: ToolCall, browser: "BrowserGateway", child: dict) -> tuple[int, str]:
    """Make a child tab the follow-up target and read it; returns (tab id, text section)."""
    child_id = int(child["id"])
    moved = browser.routes.adopt_child(call.thread_id, call.tab_id, child_id)  # type: ignore[arg-type]
    loaded = await snapshots.wait_for_load(browser.bridge, child_id, timeout_s=10)
    tab = await loaded_tab(browser.bridge, child_id, loaded)
    note = f"The action opened a new tab {child_id} ({tab.url})"
    note += "; it is now the task's default tab." if moved else "."
    snapshot = await snapshots.fresh_snapshot(browser.bridge, browser.refs, child_id) if tab.is_web_page else "(not a web page)"
    return child_id, f"{note}\n{NEW_PAGE_DIVIDER}\n{snapshot}"


async def run_write(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Dispatch one write and report what it did."""
    tab_id = call.tab_id
    assert tab_id is not None and call.target is not None
    params = content_params(call.params, ref_recovery=call.spec.ref_recovery, expect=expected_elements(call))
    # The tabs from before the write, to spot the one it opens: listed while it runs, asked
    # first (the extension starts each call in the order they arrive, so the list is older).
    listing = asyncio.ensure_future(browser.bridge.api_now("tabs.query", {}))
    before = snapshots.baseline(browser.refs, tab_id)
    try:
        result = await browser.bridge.content(tab_id, call.tool, params, write=True, deadline_ms=WRITE_DEADLINE_MS)
    except ToolFailure as exc:
        browser.routes.touch(call.thread_id, tab_id, wrote=exc.dispatched)
        if exc.code == "no_reply":
            return await after_no_reply(call, browser, exc, await listed_before(listing))
        listing.cancel()
        await asyncio.gather(listing, return_exceptions=True)
        raise
    except BaseException:
        listing.cancel()
        await asyncio.gather(listing, return_exceptions=True)
        raise
    before_tabs = await listed_before(listing)
    browser.routes.touch(call.thread_id, tab_id, wrote=True)
    details: dict[str, Any] = {"dispatched": True, "evidence": dict(result.evidence),
                               "pageStabilized": result.page_stabilized}
    dialogs = _dialogs(result)
    if dialogs:
        details["dialogs"] = dialogs
    if result.steps:
        details["steps"] = result.steps
    snapshot = result.snapshot
    summary = snapshots.record(browser.refs, tab_id, snapshot)
    if summary:
        details.update(summary)
    parts = [result.result_text]
    if dialogs:
        parts.append(dialog_lines(dialogs))
    if not result.page_stabilized:
        parts.append(UNSTABLE_NOTICE)
    if snapshot is not None:
        diff = snapshots.changes(before, snapshot, tuple(refs_used(call)))
        details["changed"] = diff.changed
        parts.append(f"{SNAPSHOT_DIVIDER}\n{diff.text}")
    opened = _opened_urls(result)
    if opened:
        details["openedUrls"] = opened
    child = await child_tab(call, browser, tab_id, before_tabs, opened)
    result_tab = None
    if child is not None:
        result_tab, section = await adopt(call, browser, child)
        details["evidence"] = {**details["evidence"], "outcome": "verified",
                               "observedEffects": [*details["evidence"].get("observedEffects", []), "tab_created"]}
        details["childTabId"] = result_tab
        parts.append(section)
    elif opened and not browser.guard.refused_popups():
        parts.append(f"The page tried to open {opened[0]} in a new tab or window, but none appeared (the browser blocks "
                     "pop-ups from synthetic input); use tab_open if that page is needed.")
    return success(call.tool, "\n".join(parts), tab_id=tab_id, result_tab_id=result_tab, details=details)


async def after_no_reply(call: ToolCall, browser: "BrowserGateway", failure: ToolFailure,
                         before_tabs: set[int] | None) -> ToolResult:
    """The page never answered a write. One nothing received was not sent (`target_changed`).
    Otherwise adopt a child tab it opened, or report the navigation it caused; failing that the
    outcome is unknown: `navigation_uncertain`, never a replay."""
    tab_id = call.tab_id
    assert tab_id is not None and call.target is not None
    if failure.details.get("delivered") is False:
        # Nothing took it: the document it was made ready in had been replaced before it was sent.
        raise ToolFailure(ToolCode.TARGET_CHANGED, f"{call.describe()} was not sent: the page changed just before it "
                          "could be; look at the page again", phase="dispatch", retryable=True,
                          details={"dispatched": False})
    evidence_base = {"attempts": [{"phase": "execute", "strategy": "l1", "ok": None}], "channelUnavailable": True}
    child = await child_tab(call, browser, tab_id, before_tabs)
    if child is not None:
        child_id, section = await adopt(call, browser, child)
        evidence = {**evidence_base, "effectState": "observed", "observedEffects": ["tab_created"], "outcome": "verified"}
        return success(call.tool, f"{call.describe()} was dispatched.\n{section}", tab_id=tab_id, result_tab_id=child_id,
                       details={"dispatched": True, "evidence": evidence, "childTabId": child_id})
    try:
        # The page it ends on is read in the same call as the wait (used only if it is another page).
        loaded = await snapshots.wait_for_load(browser.bridge, tab_id, timeout_s=10, snapshot=True)
        now = await loaded_tab(browser.bridge, tab_id, loaded)
    except ToolFailure as exc:
        if exc.code != ToolCode.TAB_CLOSED:
            raise
        raise ToolFailure(ToolCode.NAVIGATION_UNCERTAIN, f"{call.describe()} was sent and then the tab closed",
                          phase="settle", details={**failure.details, "dispatched": True, "effectMayHaveOccurred": True,
                                                   "tabClosed": True}) from None
    if now.url != call.target.url:
        browser.refs.forget(tab_id)
        snapshot = await snapshots.loaded_snapshot(browser.bridge, browser.refs, tab_id, loaded) if now.is_web_page \
            else "(not a web page)"
        evidence = {**evidence_base, "effectState": "observed", "observedEffects": ["url_changed"], "outcome": "verified"}
        text = (f"{call.describe()} was dispatched and the page navigated to {now.url}; "
                f"every earlier ref is invalid.\n{NEW_PAGE_DIVIDER}\n{snapshot}")
        return success(call.tool, text, tab_id=tab_id,
                       details={"dispatched": True, "evidence": evidence, "navigatedTo": now.url})
    raise ToolFailure(
        ToolCode.NAVIGATION_UNCERTAIN,
        f"{call.describe()} was sent but the page stopped answering before it reported back; it may or may not have "
        "taken effect. Call read_page to see the page before doing anything else; do not simply repeat the action.",
        phase="settle",
        details={**failure.details, "dispatched": True, "effectMayHaveOccurred": True, "channelUnavailable": True},
    )
