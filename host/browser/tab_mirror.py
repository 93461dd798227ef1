"""The host's own record of where each tab is, so that a page read need not ask the browser first.

A read is judged at the origin of the page its tab shows. Asking the browser costs a round trip
through native messaging on every read; the record is kept instead from what the browser
already tells the host (its tab events, and each tab it is asked for). It may lag behind the
tab: a read judged from it carries the URL it was judged for, and the extension reads nothing
unless the tab still shows exactly that URL (`target_changed` otherwise, and the entry is
dropped, so the next call asks the browser). So may a load (`navigate`), which the extension
starts only while the tab still shows the URL it was judged from; other writes ask the browser.
"""

from __future__ import annotations

from collections import OrderedDict

from host.browser.target import TabTarget, target_from_tab

MAX_TABS = 512


class TabMirror:
    """The last known URL (and title) of each tab."""

    def __init__(self) -> None:
        self._tabs: OrderedDict[int, TabTarget] = OrderedDict()

    def get(self, tab_id: int) -> TabTarget | None:
        """The tab as last known, or None when the host has no word of it."""
        return self._tabs.get(tab_id)

    def seen(self, tab: TabTarget) -> None:
        """The browser just described the tab."""
        self._tabs.pop(tab.tab_id, None)
        self._tabs[tab.tab_id] = tab
        while len(self._tabs) > MAX_TABS:
            self._tabs.popitem(last=False)

    def moved(self, tab_id: int, url: str) -> None:
        """The browser reported the tab's URL (a tab event): the title known belongs to the
        page before when the URL changed."""
        known = self._tabs.get(tab_id)
        title = known.title if known is not None and known.url == url else ""
        self.seen(target_from_tab({"id": tab_id, "url": url, "title": title}))

    def forget(self, tab_id: int) -> None:
        """The tab closed, was replaced, or showed another page than recorded."""
        self._tabs.pop(tab_id, None)
