"""The page watcher behind page watches: polls one tab until its condition holds.

Each round reads the tab (L0, `tabs.get`) for its URL, then, when the URL condition holds and
text is watched, asks the page executor once (`wait_for` with no wait) whether the text is
there. A tab that moves to another origin is judged again by the gatekeeper (`recheck`) before
its page is read. The engine bounds the watch with the persisted deadline and cancels it when
the user answers; this loop only ends on its own when the condition holds or the watch cannot go
on (tab closed, permission refused, no site access).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from protocol.errors import ErrorCode

from host.browser.target import get_tab
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted

log = logging.getLogger("tabwarden.browser")

POLL_S = 1.0
IDLE_POLL_S = 5.0  # while no browser is connected
CHECK_DEADLINE_MS = 5000
# Failures that mean "not now" (the page is loading or not a web page yet), not "never".
_TRANSIENT = frozenset({ToolCode.TIMEOUT, ToolCode.NOT_WEB_PAGE, ToolCode.NO_REPLY, ToolCode.INJECT_FAILED,
                        ToolCode.NOT_CONNECTED, ErrorCode.OVERLOADED, ErrorCode.DISCONNECTED, ToolCode.ABORTED})

Recheck = Callable[[str], Awaitable["str | None"]]
_STAR = re.compile(r"\*+")


def url_pattern(pattern: str) -> re.Pattern[str]:
    """The regular expression of a `urlMatches` pattern: `*` matches any run, the rest literally,
    anchored at both ends."""
    return re.compile("^" + ".*".join(re.escape(part) for part in _STAR.split(pattern)) + "$", re.DOTALL)


async def _text_present(bridge: Any, tab_id: int, params: dict[str, Any]) -> bool:
    try:
        await bridge.content(tab_id, "wait_for", {**params, "timeMs": 0}, write=False, deadline_ms=CHECK_DEADLINE_MS)
    except ToolFailure as failure:
        if failure.code == ToolCode.TIMEOUT:
            return False  # the executor looked and the condition does not hold (yet)
        raise
    return True


async def watch_until(bridge: Any, request: dict[str, Any], recheck: Recheck, *, poll_s: float = POLL_S) -> dict:
    """Wait until the condition of a watch `request` holds on its tab. Returns the answer
    to settle the interaction with: submit (with the URL) or cancel (with the reason)."""
    tab_id = int(request["tabId"])
    origin = str(request.get("origin") or "")
    pattern = url_pattern(request["urlMatches"]) if request.get("urlMatches") else None
    texts = [{"text": request["textAppears"]}] if request.get("textAppears") else []
    if request.get("textGone"):
        texts.append({"textGone": request["textGone"]})
    while True:
        try:
            tab = await get_tab(bridge, tab_id)
        except ToolFailure as failure:
            if failure.code == ToolCode.TAB_CLOSED:
                return {"kind": "cancel", "note": f"tab {tab_id} was closed"}
            await asyncio.sleep(IDLE_POLL_S if failure.code == ToolCode.NOT_CONNECTED else poll_s)
            continue
        if tab.origin != origin and tab.origin:
            problem = await recheck(tab.origin)
            if problem is not None:
                return {"kind": "cancel", "note": problem}
            origin = tab.origin
        if pattern is None or pattern.match(tab.url):
            held = True
            try:
                for text in texts:
                    if not await _text_present(bridge, tab_id, text):
                        held = False
                        break
            except ToolFailure as failure:
                # The note ends up in a trusted result: the origin and what the browser
                # reported are quoted as data.
                if failure.code == "host_permission_required":
                    return {"kind": "cancel", "note": f"Tabwarden has no access to {quoted(origin)} to read the page"}
                if failure.code == ToolCode.TAB_CLOSED:
                    return {"kind": "cancel", "note": f"tab {tab_id} was closed"}
                if failure.code not in _TRANSIENT:
                    problem = failure.in_own_words()
                    return {"kind": "cancel", "note": f"the page could not be read ({problem.code}: {problem.message})"}
                log.debug("watch of tab %d: %s", tab_id, failure)
                held = False
            if held:
                return {"kind": "submit", "value": {"url": tab.url[:2000], "origin": tab.origin}}
        await asyncio.sleep(poll_s)
