"""`BrowserTools`: the browser's tools (L0, L1, L2) as one router service.

Resolving a call finds its tab by the declaration's `target` (the tab it names, or the task's
http(s) tab) and describes it for the gatekeeper and the approval card: the origin, the acted-on
elements and whether the extension may script the page. An L2 write is described at the origin
of the frame its input lands in (`l2/landing.py`), which may be another origin's frame inside
the tab: that is the origin judged, checked for site access and audited. Calls on one tab run
one at a time (`hold`), whichever thread sent them. A manual takeover pauses the thread's page
calls. The tabs a turn drives show the page indicator until the turn ends or waits on the user.

A call that drives its tab (a write the tab or its page carries out) runs only once the
navigation guard covers the tab (`navguard/`): whatever the page then does, the browser will not
send it where the thread may not go. What the guard saw during the call, or on the tab since the
previous call, goes into the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from host.browser import described, history
from host.browser.gateway import BrowserGateway
from host.browser.indicator import PageIndicator
from host.browser.l2.landing import lands_in_frame, resolve_landing
from host.browser.navguard.guard import current_watch, drives
from host.browser.routing import Route
from host.browser.target import TabTarget, get_tab, resolve_page_tab
from host.calls.service import ToolService
from host.gatekeeper.origins import destination
from host.tools.call import Target, ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult, failure
from host.tools.spec import ToolSpec

log = logging.getLogger("tabwarden.browser")

READS = "host.browser.page_reads:"  # the runners of reads the page executor makes (run_read)
# Loads the extension starts only while the tab still shows the URL they were judged from
# (`tabs.navigate`'s fromUrl): these too may be judged from the host's record of the tab.
CHECKED_LOADS = frozenset({"host.browser.l0_tools:navigate"})

# Set by `hold` for the call it holds: the reason the navigation guard could not cover its tab,
# which the resolution inside the hold then raises, so the call ends refused, unsent.
_unguarded: contextvars.ContextVar[tuple[int, ToolFailure] | None] = contextvars.ContextVar(
    "tabwarden_unguarded", default=None)


def _tab_moved(result: ToolResult) -> bool:
    """The call was refused unsent because its tab showed another page than the one it was judged for."""
    error = result.error
    return error is not None and error.code == ToolCode.TARGET_CHANGED and (error.details or {}).get("tabMoved") is True


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
        unguarded = _unguarded.get()
        if unguarded is not None and unguarded[0] == id(call):
            raise unguarded[1]
        if kind != "watched":  # a watch hands the tab over to the user: their input does not pause it
            self.gateway.takeover.check(call.thread_id)
        if kind == "none":
            return call.resolved(Target())
        if kind == "closed":
            return call.resolved(await history.resolve_restore(call, self.gateway))
        tab = self.past_blocked_page(call, await self.find_tab(call))
        if drives(call.spec):
            self.gateway.guard.note_url(tab.tab_id, tab.url)
        target = await self.describe(call, tab)
        if kind == "history":  # where the move leads: the entry it reaches
            target = await history.resolve_move(call, target, self.gateway)
        return call.resolved(target)

    async def locate(self, call: ToolCall) -> ToolCall:
        """The call on the tab it names or is routed to, so that it can be resolved and judged
        under that tab's hold: the host's own word for it when it has one (the call's `tabId`,
        the thread's tab), else one look at the browser. Nothing about the tab is judged from it."""
        kind = call.spec.target
        if kind in ("none", "closed"):
            return call
        tab_id = getattr(call.params, "tab_id", None)
        if tab_id is None and kind != "tab":
            route = self.gateway.routes.default(call.thread_id)
            tab_id = route.tab_id if route.kind == Route.TAB else None
        if tab_id is not None:
            return call.resolved(Target(tab_id=tab_id))
        tab = await self.find_tab(call)
        return call.resolved(Target(origin=tab.origin, url=tab.url, tab_id=tab.tab_id, handle=tab))

    async def find_tab(self, call: ToolCall) -> TabTarget:
        """The tab named by the call's `tabId`, or (page targets) the task's http(s) tab. A page
        read takes the tab from the host's record when it has one (the read then happens only if
        the tab still shows that URL; see `tab_mirror`)."""
        browser = self.gateway
        tab_id = getattr(call.params, "tab_id", None)
        if call.spec.target == "tab":
            tab = await get_tab(browser.bridge, tab_id)  # type: ignore[arg-type]
        else:
            known = self._known_page(call, tab_id)
            if known is not None:
                return known
            # A call that loads a URL is judged at its destination and replaces the page, so it
            # may start from an empty or new-tab page (nothing there to read or to carry away).
            loads_url = call.spec.target == "routed" and call.spec.url_param is not None
            tab = await resolve_page_tab(browser.bridge, browser.routes, call.thread_id, tab_id, start_ok=loads_url)
        browser.tab_mirror.seen(tab)
        return tab

    def _known_page(self, call: ToolCall, tab_id: int | None) -> TabTarget | None:
        """The recorded web page a call acts on, when the host knows which tab and where it is:
        only for calls that check the URL they were judged for before anything is sent (the page
        executor's reads, `page_reads.run_read`; a load, `CHECKED_LOADS`, that does not reload
        the recorded page), and only at their first resolution (a call resolved again, after an
        approval, asks the browser whether its tab moved meanwhile)."""
        spec = call.spec
        reads = spec.target == "page" and spec.effects == "read" and spec.runner.function.startswith(READS)
        if not reads and spec.runner.function not in CHECKED_LOADS:
            return None
        if call.target is not None and call.target.url:
            return None
        if tab_id is None:
            route = self.gateway.routes.default(call.thread_id)
            tab_id = route.tab_id if route.kind == Route.TAB else None
        known = self.gateway.tab_mirror.get(tab_id) if tab_id is not None else None
        if known is None or not known.is_web_page:
            return None
        if not reads and destination(call.params.url).href == known.url:  # type: ignore[attr-defined]
            return None  # whether a load reloads the page is the browser's word, never the record's
        return known

    def past_blocked_page(self, call: ToolCall, tab: TabTarget) -> TabTarget:
        """A tab showing the browser's notice for a navigation the guard blocked holds nothing of
        the blocked site: a page tool there is refused (`navigation_blocked`), and the other calls
        are judged at the origin the tab showed before (navigate, go_back and tab_close must stay
        possible even when the blocked origin is out of reach)."""
        found = self.gateway.guard.blocked_page(tab.tab_id, tab.url)
        if found is None:
            return tab
        blocked, before = found
        if call.spec.target == "page":
            raise ToolFailure(ToolCode.NAVIGATION_BLOCKED,
                              f"tab {tab.tab_id} shows the browser's notice for a navigation to {quoted(blocked.url, 2000)} "
                              f"that was blocked ({quoted(blocked.origin)} is out of this task's reach: {blocked.reason}); "
                              "nothing from there was loaded. Use navigate (or go_back) to load a page in it.",
                              phase="resolve", details={"dispatched": False, "blockedOrigin": blocked.origin,
                                                        "blockedUrl": blocked.url})
        return dataclasses.replace(tab, origin=before or tab.origin)

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
        access = None
        if lands_in_frame(call.spec):
            # Most input lands in the tab's own origin: its access is asked while the frame is found.
            early = asyncio.ensure_future(browser.site_access.allows(tab.origin))
            try:
                landing = handle = await resolve_landing(call, browser, tab)
            except BaseException:
                early.cancel()
                await asyncio.gather(early, return_exceptions=True)
                raise
            origin = landing.origin
            if landing.in_other_origin:
                line = f"{line}\n{landing.note()}" if line else landing.note()
                early.cancel()
                await asyncio.gather(early, return_exceptions=True)
            else:
                access = await early
        if in_page and access is None:
            access = await browser.site_access.allows(origin)
        facts = described.facts(call, tab.tab_id, browser) if kind == "page" else None
        if facts is not None and tab.title:
            facts["title"] = tab.title[:300]  # "Review your order" tells what a "Continue" commits
        return Target(
            origin=origin, url=tab.url, tab_id=tab.tab_id, start_page=tab.is_start_page, facts=facts,
            line=line, site_access=access if in_page else None, handle=handle)

    def holds_quietly(self, call: ToolCall) -> bool:
        """True when the thread already drives the call's tab as holding it would (the indicator
        shown there in a turn, the guard covering it for a write): then the call is judged under
        its hold. A tab not driven yet is held only once the call is allowed, so a call that is
        denied or waits for the user never guards the tab or shows the indicator."""
        tab_id, thread_id = call.tab_id, call.thread_id
        if tab_id is None:
            return call.spec.target in ("none", "closed")
        if thread_id in self._turns and tab_id not in self.indicator.tabs_of(thread_id):
            return False
        return not drives(call.spec) or self.gateway.guard.covers(thread_id, tab_id)

    @contextlib.asynccontextmanager
    async def hold(self, call: ToolCall) -> AsyncIterator[None]:
        """The tab's queue: the final check and the run happen alone on the tab. The tab shows
        the indicator from here on, when a turn drives it, and a call that drives the tab has it
        covered by the navigation guard (both before the final check, so that nothing but the call
        itself is sent between the durable mark of a write and the write). When the guard cannot
        be put in place, the resolution inside the hold refuses the call (`guard_unavailable`)."""
        if call.thread_id in self._turns:
            self.indicator.driving(call.thread_id, call.tab_id)
        async with self.gateway.queue.hold(call.tab_id):
            token = None
            if drives(call.spec) and call.tab_id is not None:
                try:
                    url = call.target.url if call.target is not None else ""
                    await self.gateway.guard.protect(call.thread_id, call.tab_id, url=url)
                except ToolFailure as problem:
                    token = _unguarded.set((id(call), problem))
            try:
                yield
            finally:
                if token is not None:
                    _unguarded.reset(token)

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Run the tool on the tab it was judged on (a call that drives its tab only when `hold`
        had the guard cover it); the result says what the navigation guard saw meanwhile. A tab
        the call opened and adopted shows the indicator too."""
        guard = self.gateway.guard
        watch = guard.begin(call.thread_id, call.tool, call.tab_id, loads_page=call.spec.category == "navigate")
        token = current_watch.set(watch)
        try:
            try:
                if drives(call.spec) and call.tab_id is not None and not guard.covers(call.thread_id, call.tab_id):
                    raise guard.not_covered(call.tab_id)
                result = await runner(call, self.gateway)
            except ToolFailure as problem:
                result = failure(call.tool, problem, tab_id=call.tab_id)
        except BaseException:
            guard.abandon(watch)
            raise
        finally:
            current_watch.reset(token)
        result = await guard.finish(watch, result)
        if _tab_moved(result):  # judged from a record of the tab that was behind: the next call asks
            self.gateway.tab_mirror.forget(call.tab_id)  # type: ignore[arg-type]
        self._note_keys(call, result)
        moved = result.result_tab_id or result.tab_id
        if moved != call.tab_id and call.thread_id in self._turns:
            self.indicator.driving(call.thread_id, moved)
        return result

    def _note_keys(self, call: ToolCall, result: ToolResult) -> None:
        """Keep the tab's run of typed keys (see `key_runs`): a key that ran adds to it, any
        other write ends it."""
        if call.tab_id is None or call.spec.effects != "write":
            return
        runs = self.gateway.key_runs
        if call.tool != "press_key" or not result.ok:
            runs.other_write(call.tab_id)
            return
        params = call.wire_params()
        repeat = params.get("repeat", 1)
        runs.pressed(call.tab_id, params.get("ref"), str(params.get("key") or ""),
                     repeat if isinstance(repeat, int) else 1)

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
        self.gateway.guard.release(thread_id)

    async def aclose(self) -> None:
        """Stop the indicator's worker."""
        await self.indicator.close()


def _reads_text(call: ToolCall) -> bool:
    """A watch needs the page's text (and so site access) only for its text conditions."""
    params = call.params
    return getattr(params, "text_appears", None) is not None or getattr(params, "text_gone", None) is not None
