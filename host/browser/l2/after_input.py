"""What trusted input did, as its result says it: where it landed, where the focus is now, what
the network did, a tab it opened (adopted), a navigation it caused."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from host.browser import page_writes, snapshots
from host.browser.l2.landing import Landing
from host.browser.l2.network_idle import Settled
from host.browser.l2.targets import Writer
from host.browser.results import SNAPSHOT_DIVIDER
from host.browser.target import get_tab, target_from_tab
from host.cdp.client import TabClient
from host.tools.call import ToolCall
from host.tools.failure import ToolFailure
from host.tools.result import ToolResult, success

if TYPE_CHECKING:
    from host.browser.diff import SnapshotDiff
    from host.browser.gateway import BrowserGateway

log = logging.getLogger("tabwarden.browser")

TRUSTED_NOTE = "trusted input through the debugger"
# The focused element's line said after trusted input (a name is at most 80 characters of it).
MAX_FOCUS_LINE = 400


def _took(call: ToolCall, diff: "SnapshotDiff") -> tuple[str, str] | None:
    """What the input plainly did, as its page's changes show it: its target's own states
    changed (the target keeps its ref while its role and name stay; a key without one acts on
    the focused element), a dialog opened, or one closed. None when none of these."""
    target = getattr(call.params, "ref", None)
    if target and target in diff.restated:
        return "target_state_changed", "Verified: the target's own state changed (its line below)."
    if not target and call.tool == "press_key" and diff.focus_restated:
        return "target_state_changed", "Verified: the focused element's own state changed (its line below)."
    if diff.dialogs_opened:
        return "dialog_opened", f"Verified: a dialog opened ({diff.dialogs_opened[0].removeprefix('- ')})."
    if diff.dialogs_closed:
        return "dialog_closed", "Verified: a dialog closed."
    return None


async def report_input(call: ToolCall, browser: "BrowserGateway", client: TabClient, writer: Writer, landing: Landing,
                       settled: Settled, interrupted: str | None, before_tabs: set[int] | None, text: str,
                       details: dict[str, Any], tabs_after: list[Any] | None = None) -> ToolResult:
    """The result of trusted input that was sent: `text` and `details` said by the tool,
    `settled` what the network and the focus did after it, `before_tabs` the tabs listed before
    it (None when that listing failed), `interrupted` why the rest of the input was not sent,
    `tabs_after` the tabs listed after it when that was done already."""
    tab_id = call.tab_id
    assert tab_id is not None and call.target is not None
    browser.routes.touch(call.thread_id, tab_id, wrote=True)
    evidence = {"attempts": [{"phase": "execute", "strategy": "l2", "ok": True}], "strategy": "cdp", "trusted": True,
                "effectState": "dispatched", "outcome": "uncertain", "observedEffects": []}
    out = {"dispatched": True, "evidence": evidence, "networkSettled": settled.settled, "networkWaitMs": settled.waited_ms,
           "networkRequests": settled.requests, "networkWaited": settled.waited_for_network,
           "frameOrigin": landing.origin, **details}
    parts = [text if not landing.in_other_origin else f"{text} It landed in a frame of {landing.origin}."]
    if interrupted:
        parts.append(f"The page changed during the input ({interrupted}); the rest of it was not sent.")
        out["interruptedBy"] = interrupted
    if settled.focus:
        # The page names its elements: quoted as the snapshot quotes them, and fenced with the result.
        parts.append(f"Focus now: {settled.focus[:MAX_FOCUS_LINE]}")
    if not settled.settled:
        parts.append(f"[the network was still busy after {settled.waited_ms / 1000:.1f} s ({settled.pending} requests)]")
    result_tab = None
    tabs = tabs_after
    if tabs is None:
        try:  # once, for the tab it opened and where this one is now
            tabs = await browser.bridge.api("tabs.query", {})
        except ToolFailure as exc:  # the input was sent: its answer stands, without a child tab found
            log.warning("the tabs after trusted input could not be listed: %s", exc.message)
    child = await page_writes.child_tab(call, browser, tab_id, before_tabs if tabs is not None else None, tabs=tabs)
    if child is not None:
        result_tab, section = await page_writes.adopt(call, browser, child)
        evidence["observedEffects"].append("tab_created")
        evidence["outcome"] = "verified"
        out["childTabId"] = result_tab
        parts.append(section)
    else:
        listed = next((tab for tab in tabs or [] if isinstance(tab, dict) and tab.get("id") == tab_id), None)
        now = target_from_tab(listed) if listed is not None else await get_tab(browser.bridge, tab_id)
        if now.url != call.target.url:
            evidence["observedEffects"].append("url_changed")
            out["navigatedTo"] = now.url
            parts.append(f"The tab now shows {now.url}; every earlier ref is invalid. Read the page again.")
        elif settled.page_changed and not landing.in_other_origin:
            # The page changed in place (a tree item opened, a cell saved): what changed, and
            # the refs that are new, as a synthetic write's answer has them.
            diff = await snapshots.changes_since_last(browser.bridge, browser.refs, tab_id)
            if diff is not None:
                evidence["observedEffects"].append("dom_mutated")
                evidence["effectState"] = "observed"
                took = _took(call, diff)
                if took:
                    evidence["observedEffects"].append(took[0])
                    evidence["effectState"] = evidence["outcome"] = "verified"
                    parts.append(took[1])
                out["changed"] = diff.changed
                parts.append(f"{SNAPSHOT_DIVIDER}\n{diff.text}")
    if client.epoch != writer.epoch and "url_changed" not in evidence["observedEffects"]:
        parts.append("The page's documents changed after the input; deep refs from before are invalid.")
    return success(call.tool, "\n".join(parts), tab_id=tab_id, result_tab_id=result_tab, details=out)
