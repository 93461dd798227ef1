"""Whether the extension may script an origin's pages: a yes from the browser is kept per origin
until the browser says the extension's permissions changed (`permissions.added` and
`permissions.removed` events, which the extension forwards as they happen). A no is never kept:
the user may grant the access on the approval card, and the call is resolved again right after,
possibly before the browser's event about the grant reaches the host.

A host process lives as long as its one connection to the extension, so what is kept is never
older than the connection. An answer asked for before a change and arriving after it is not
kept (the change may not be in it). The browser stays the last word either way: it refuses to
script a page the extension may not."""

from __future__ import annotations

from collections.abc import Callable

from host.browser.bridge import Bridge
from host.browser.target import WEB_SCHEMES

MAX_KEPT = 512


class SiteAccess:
    """The extension's site access by origin, for one connection."""

    def __init__(self, bridge: Callable[[], Bridge]):
        self._bridge = bridge  # the gateway's bridge, whichever it is when asked
        self._kept: dict[str, bool] = {}
        self._generation = 0

    async def allows(self, origin: str) -> bool:
        """Whether the extension may script pages of `origin` now (never for an origin that is
        not a web page's: no pattern would name it). Raises ToolFailure when the browser cannot
        be asked."""
        if not origin.startswith(WEB_SCHEMES):
            return False
        kept = self._kept.get(origin)
        if kept is not None:
            return kept
        asked_at = self._generation
        allowed = bool(await self._bridge().api("permissions.contains", {"origins": [f"{origin}/*"]}))
        if allowed and asked_at == self._generation:
            if len(self._kept) >= MAX_KEPT:
                self._kept.clear()
            self._kept[origin] = allowed
        return allowed

    def changed(self) -> None:
        """The extension's permissions changed: ask the browser again from now on."""
        self._generation += 1
        self._kept.clear()
