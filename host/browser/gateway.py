"""`BrowserGateway`: the host's side of one browser connection, as the browser tools use it.

    bridge          calls into the extension (tabs and other APIs, the page executor)
    refs            the latest snapshot's refs per tab (read_page)
    deep_refs       the latest deep read's refs per tab (read_page_deep)
    routes          which tab each thread drives
    guard           the browser's rules that keep driven tabs away from denied origins
    queue           one call at a time per tab
    takeover        threads paused because a person used their tab
    cdp             debugger sessions (L2), with the L1-ref translations and user attachments

A browser tool's runner receives the gateway as its second argument; `BrowserTools` resolves,
holds and runs the calls (see host/browser/service.py).
"""

from __future__ import annotations

from typing import Any, Callable

from host.browser.bridge import Bridge
from host.browser.l2.attachments import Attachments
from host.browser.l2.deep_refs import DeepRefMap
from host.browser.l2.translations import L1Translations
from host.browser.navguard.guard import NavigationGuard
from host.browser.key_runs import KeyRuns
from host.browser.refmap import RefMap
from host.browser.tab_mirror import TabMirror
from host.browser.routing import TabRoutes
from host.browser.serial import TabQueue
from host.browser.site_access import SiteAccess
from host.browser.takeover import Takeover
from host.cdp.manager import CdpManager
from host.cdp.transport import EndpointTransport


class BrowserGateway:
    """The state of one browser connection the browser tools share."""

    def __init__(self, endpoint: Callable[[], Any], gatekeeper: Any):
        self.bridge = Bridge(endpoint)
        # Browser events that end the browser session revoke its session grants.
        self.gatekeeper = gatekeeper
        self.refs = RefMap()
        self.key_runs = KeyRuns()  # what press_key calls typed, key by key (judged whole)
        self.routes = TabRoutes()
        self.tab_mirror = TabMirror()  # where each tab is, as last heard (page reads judge from it)
        self.guard = NavigationGuard(self.bridge, gatekeeper)
        self.queue = TabQueue()
        self.site_access = SiteAccess(lambda: self.bridge)
        self.takeover = Takeover()
        self.cdp = CdpManager(EndpointTransport(endpoint))
        self.deep_refs = DeepRefMap(self.cdp.epoch)
        self.l1_translations = L1Translations()
        self.attachments = Attachments()

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A user's message starts a turn: bind its tab (when `bound`), lift a manual-takeover
        pause, and let trusted tools attach again where the user had stopped the debugger."""
        if bound:
            self.routes.bind(thread_id, tab_id)
        self.takeover.resume(thread_id)
        self.cdp.allow_again()

    def end_turn(self, thread_id: str) -> None:
        """A turn ended: forget its driven tabs and any floating target; its tabs are no longer
        guarded for it."""
        self.routes.end_turn(thread_id)
        self.guard.release(thread_id)
