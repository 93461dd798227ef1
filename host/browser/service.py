"""`BrowserTools`: the browser's tools (L0, L1, L2) as one router service.

Resolving a call finds its tab by the declaration's `target` (the tab it names, or the task's
http(s) tab) and describes it for the gatekeeper and the approval card: the origin, the acted-on
elements and whether the extension may script the page. An L2 write is described at the origin
of the frame its input lands in (`l2/landing.py`), which may be another origin's frame inside
the tab: that is the origin judged, checked for site access and audited. Calls on one tab run
one at a time (`hold`), whichever thread sent them. A manual takeover pauses the thread's page
calls. The tabs a turn drives show the page indicator until the turn ends or waits on the user.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from host.browser import described, history
from host.browser.gateway import BrowserGateway
from host.browser.indicator import PageIndicator
from host.browser.l2.landing import lands_in_frame, resolve_landing
from host.browser.target import WEB_SCHEMES, TabTarget, get_tab, resolve_page_tab
from host.calls.service import ToolService
from host.tools.call import Target, ToolCall
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec

log = logging.getLogger("tabwarden.browser")


class BrowserTools(ToolService):
    """The browser tools of one host (one browser connection)."""

    def __init__(self, gateway: BrowserGateway):
        self.gateway = gateway
        self.indicator = PageIndicator(gateway.bridge)
        # Threads in a turn: only their calls show the indicator (a REPL call is not a task).
        self._turns: set[str] = set()

    def offers(self, spec: ToolSpec) -> bool:
        """Every browser tool (a call made while no browser is connected fails `not_connected`)."""
        return True

    async def resolve(self, call: ToolCall) -> ToolCall:
        """The tab the call acts on and what the gatekeeper needs to know of it; sends nothing
        that acts. Raises ToolFailure (`paused`, `tab_closed`, `not_web_page`, `stale_ref`...)."""
        kind = call.spec.target
        if kind != "watched":  # a watch hands the tab over to the user: their input does not pause it
            self.gateway.takeover.check(call.thread_id)
        if kind == "none":
            return call.resolved(Target())
        if kind == "closed":
            return call.resolved(await history.resolve_restore(call, self.gateway))
        tab = await self.find_tab(call)
        target = await self.describe(call, tab)
        if kind == "history":  # where the move leads: the entry it reaches
            target = await history.resolve_move(call, target, self.gateway)
        return call.resolved(target)

    async def find_tab(self, call: ToolCall) -> TabTarget:
        """The tab named by the call's `tabId`, or (page targets) the task's http(s) tab."""
        browser = self.gateway
        tab_id = getattr(call.params, "tab_id", None)
        if call.spec.target == "tab":
            return await get_tab(browser.bridge, tab_id)  # type: ignore[arg-type]
        return await resolve_page_tab(browser.bridge, browser.routes, call.thread_id, tab_id)

    async def describe(self, call: ToolCall, tab: TabTarget) -> Target:
        """The target as the gatekeeper judges it: the tab's origin (for an L2 write, the origin
        of the frame it lands in) and, for calls that run in the page, the acted-on elements and
        whether the extension may script that origin."""
        browser, kind = self.gateway, call.spec.target
        in_page = kind == "page" or (kind == "watched" and _reads_text(call))
        if kind == "page" and call.spec.is_write:
            described.require_known_refs(call, tab.tab_id, browser)
        origin, handle = tab.origin, tab
        line = described.target_line(call, tab.tab_id, browser)
        if lands_in_frame(call.spec):
            landing = handle = await resolve_landing(call, browser, tab)
            origin = landing.origin
            if landing.in_other_origin:
                line = f"{line}\n{landing.note()}" if line else landing.note()
        return Target(
            origin=origin, url=tab.url, tab_id=tab.tab_id,
            facts=described.facts(call, tab.tab_id, browser) if kind == "page" else None,
            line=line, site_access=await self.site_access(origin) if in_page else None, handle=handle)

    async def site_access(self, origin: str) -> bool:
        """Whether the extension may script pages of `origin` now (never for an origin that is
        not a web page's: no pattern would name it)."""
        if not origin.startswith(WEB_SCHEMES):
            return False
        return bool(await self.gateway.bridge.api("permissions.contains", {"origins": [f"{origin}/*"]}))

    @contextlib.asynccontextmanager
    async def hold(self, call: ToolCall) -> AsyncIterator[None]:
        """The tab's queue: the final check and the run happen alone on the tab. The tab shows
        the indicator from here on, when a turn drives it (before the final check, so that nothing
        but the call itself is sent between the durable mark of a write and the write)."""
        if call.thread_id in self._turns:
            self.indicator.driving(call.thread_id, call.tab_id)
        async with self.gateway.queue.hold(call.tab_id):
            yield

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Run the tool on the tab it was judged on (a tab the call opened and adopted shows the
        indicator too)."""
        result = await runner(call, self.gateway)
        moved = result.result_tab_id or result.tab_id
        if moved != call.tab_id and call.thread_id in self._turns:
            self.indicator.driving(call.thread_id, moved)
        return result

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """Bind the submission's tab, lift a manual-takeover pause, allow the debugger again."""
        self._turns.add(thread_id)
        self.gateway.begin_turn(thread_id, tab_id, bound=bound)

    def end_turn(self, thread_id: str) -> None:
        """The turn's tabs lose the indicator; its driven tabs and floating target are forgotten."""
        self._turns.discard(thread_id)
        self.indicator.release(thread_id)
        self.gateway.end_turn(thread_id)

    def hand_over(self, thread_id: str) -> None:
        """The run waits on the user: no indicator, and the user's own input there does not pause
        it. The routes keep the task's captured tab."""
        self.indicator.release(thread_id)
        self.gateway.routes.end_turn(thread_id)

    async def aclose(self) -> None:
        """Stop the indicator's worker."""
        await self.indicator.close()


def _reads_text(call: ToolCall) -> bool:
    """A watch needs the page's text (and so site access) only for its text conditions."""
    params = call.params
    return getattr(params, "text_appears", None) is not None or getattr(params, "text_gone", None) is not None
