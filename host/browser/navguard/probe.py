"""A download's redirect hops, judged one by one before anything is saved.

declarativeNetRequest does not match the requests of the downloads API, so `download` cannot be
guarded where it runs. Instead its URL is first loaded in a blank background tab that the guard
covers with the thread's reach for `download`: every hop is matched there, as a navigation's
would be, and a hop to a place the thread may not reach is blocked before its request leaves
(audited like any blocked navigation). What comes back is where the chain ended: a page, a
download the browser started from the tab, a block, or an error. The tab is closed afterwards.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from host.gatekeeper.origins import normalize_origin
from host.tools.failure import ToolFailure

if TYPE_CHECKING:
    from host.browser.navguard.guard import NavigationGuard

BLANK = "about:blank"


@dataclass(frozen=True)
class Followed:
    """Where a URL's redirect chain ended in the guarded tab."""

    outcome: str  # page | download | blocked | error | timeout
    url: str  # the last URL of the chain (the blocked one, for a block)
    download_id: int | None = None  # the download the browser started from the tab
    error: str = ""
    reason_code: str = ""  # for a block: why the thread may not go there
    reason: str = ""

    @property
    def origin(self) -> str:
        """The origin of `url`."""
        return normalize_origin(self.url).text if self.url else ""


async def follow(guard: "NavigationGuard", thread_id: str, url: str, *, timeout_s: float) -> Followed:
    """Load `url` in a guarded background tab and report where its redirect chain ended.
    Raises ToolFailure (`guard_unavailable` when the tab cannot be guarded: nothing was loaded)."""
    bridge = guard.bridge
    created = await bridge.api("tabs.create", {"url": BLANK, "active": False})
    tab_id = int(created["id"])
    try:
        await guard.protect(thread_id, tab_id, tool="download", url=url)
        answer: Any = await bridge.api("guard.follow", tab_id, url, int(timeout_s * 1000), timeout=timeout_s + 5)
    finally:
        guard.tab_removed(tab_id)
        with contextlib.suppress(ToolFailure):
            await bridge.api("tabs.remove", tab_id)
    answer = answer if isinstance(answer, dict) else {}
    outcome = str(answer.get("outcome") or "error")
    where = str(answer.get("url") or url)
    download_id = answer.get("downloadId") if isinstance(answer.get("downloadId"), int) else None
    if outcome == "blocked":
        decision = guard.denial(thread_id, where, "download")
        return Followed(outcome, where, reason_code=getattr(decision, "code", ""),
                        reason=getattr(decision, "reason", "the guard blocked it"))
    return Followed(outcome, where, download_id, error=str(answer.get("error") or ""))
