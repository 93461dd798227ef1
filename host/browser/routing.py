"""Which tab a thread's page tools act on when no `tabId` is given.

The default is the tab captured when the user submitted (`bind`); a child tab opened by one of
the thread's actions on that tab becomes the follow-up default; a closed default is an error,
never silently replaced by another tab. Threads that never bound a tab (a turn submitted
without a browser context, REPL and control-socket calls) lock the most recently used web page
on first use. Also kept: the tabs each thread touched and the tabs it wrote to ("driven"),
which decide whose turn a manual takeover pauses.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

MAX_THREADS = 256
MAX_TABS_PER_THREAD = 512


@dataclass
class _Thread:
    bound: bool = False  # bind() was called (a submission captured a tab, or None)
    target: int | None = None  # the current default tab
    closed: int | None = None  # the default tab that was closed
    floating: bool = False  # picked by fallback, not captured at submission
    touched: OrderedDict[int, None] = field(default_factory=OrderedDict)
    driven: OrderedDict[int, None] = field(default_factory=OrderedDict)


class Route:
    """The outcome of looking up a thread's default tab."""

    TAB = "tab"  # `tab_id` is the default
    NONE = "none"  # the submission captured no web page
    CLOSED = "closed"  # the default tab was closed (`tab_id` names it)
    UNBOUND = "unbound"  # nothing captured: the caller may pick and lock a tab

    def __init__(self, kind: str, tab_id: int | None = None):
        self.kind = kind
        self.tab_id = tab_id


def _remember(tabs: OrderedDict[int, None], tab_id: int) -> None:
    tabs.pop(tab_id, None)
    tabs[tab_id] = None
    while len(tabs) > MAX_TABS_PER_THREAD:
        tabs.popitem(last=False)


class TabRoutes:
    """Default tabs and tab traces per thread (bounded: the least recently used thread goes)."""

    def __init__(self) -> None:
        self._threads: OrderedDict[str, _Thread] = OrderedDict()

    def _thread(self, thread_id: str) -> _Thread:
        state = self._threads.pop(thread_id, None) or _Thread()
        self._threads[thread_id] = state
        while len(self._threads) > MAX_THREADS:
            self._threads.popitem(last=False)
        return state

    def bind(self, thread_id: str, tab_id: int | None) -> None:
        """Capture the submission's tab (None: the user was not on a web page)."""
        state = self._thread(thread_id)
        state.bound = True
        state.target = tab_id
        state.closed = None
        state.floating = False

    def lock(self, thread_id: str, tab_id: int) -> None:
        """Lock a fallback tab for a thread that captured none."""
        state = self._thread(thread_id)
        state.target = tab_id
        state.floating = True

    def release(self, thread_id: str) -> None:
        """Forget a floating lock (at the end of a turn)."""
        state = self._threads.get(thread_id)
        if state is not None and state.floating:
            state.target = None
            state.floating = False

    def default(self, thread_id: str) -> Route:
        """The thread's default tab, or why there is none."""
        state = self._threads.get(thread_id)
        if state is None:
            return Route(Route.UNBOUND)
        if state.target is not None:
            return Route(Route.TAB, state.target)
        if state.closed is not None:
            return Route(Route.CLOSED, state.closed)
        if state.bound:
            return Route(Route.NONE)
        return Route(Route.UNBOUND)

    def adopt_child(self, thread_id: str, source_tab: int, child_tab: int) -> bool:
        """A tab opened from `source_tab` by one of this thread's actions. It becomes the default
        when the source was the default. Returns True when the default moved."""
        state = self._thread(thread_id)
        _remember(state.touched, child_tab)
        _remember(state.driven, child_tab)
        if state.target == source_tab:
            state.target = child_tab
            return True
        return False

    def touch(self, thread_id: str, tab_id: int, *, wrote: bool) -> None:
        """Record that the thread used a tab (and wrote to it)."""
        state = self._thread(thread_id)
        _remember(state.touched, tab_id)
        if wrote:
            _remember(state.driven, tab_id)

    def end_turn(self, thread_id: str) -> None:
        """A turn finished: its driven tabs no longer make takeovers pause it."""
        state = self._threads.get(thread_id)
        if state is not None:
            state.driven.clear()
        self.release(thread_id)

    def driving(self, tab_id: int) -> list[str]:
        """Threads that wrote to `tab_id` in their current turn."""
        return [thread for thread, state in self._threads.items() if tab_id in state.driven]

    def tab_removed(self, tab_id: int) -> None:
        """A tab closed: routes to it end (a captured default stays marked as closed)."""
        for state in self._threads.values():
            if state.target == tab_id:
                state.target = None
                if state.floating:
                    state.floating = False
                else:
                    state.closed = tab_id
            state.touched.pop(tab_id, None)
            state.driven.pop(tab_id, None)

    def tab_replaced(self, old_tab: int, new_tab: int) -> None:
        """Chrome swapped a tab for another id: every route follows it."""
        for state in self._threads.values():
            if state.target == old_tab:
                state.target = new_tab
            for trace in (state.touched, state.driven):
                if old_tab in trace:
                    trace.pop(old_tab)
                    _remember(trace, new_tab)

    def describe(self, thread_id: str) -> dict:
        """A JSON-ready view for debugging (`browser.routes`)."""
        state = self._threads.get(thread_id)
        if state is None:
            return {"threadId": thread_id, "bound": False, "target": None}
        return {
            "threadId": thread_id, "bound": state.bound, "target": state.target, "closed": state.closed,
            "floating": state.floating, "touched": list(state.touched), "driven": list(state.driven),
        }
