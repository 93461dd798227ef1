"""What browser events mean for the gateway: tabs closing, being replaced or loading a new
document, site access being revoked, a person using a page the agent drives, and what the
navigation guard hears (a blocked navigation, a tab a page opened)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from protocol.messages import BrowserEvent

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

log = logging.getLogger("tabwarden.browser")


def _int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def handle_event(gateway: "BrowserGateway", event: BrowserEvent) -> None:
    """Apply one `browser.event` to the gateway's state. Unknown or malformed events are ignored
    (and logged): they can only come from our own extension, and must never break the host."""
    data = event.data if isinstance(event.data, dict) else {}
    name = event.name
    if name == "tabs.removed":
        tab_id = _int(data, "tabId")
        if tab_id is not None:
            gateway.routes.tab_removed(tab_id)
            gateway.tab_mirror.forget(tab_id)
            gateway.guard.tab_removed(tab_id)
            gateway.refs.forget(tab_id)
            gateway.cdp.tab_removed(tab_id)
            gateway.deep_refs.forget(tab_id)
            gateway.l1_translations.forget(tab_id)
            gateway.key_runs.forget(tab_id)
    elif name == "tabs.replaced":
        added, removed = _int(data, "addedTabId"), _int(data, "removedTabId")
        if added is not None and removed is not None:
            gateway.routes.tab_replaced(removed, added)
            gateway.tab_mirror.forget(removed)
            gateway.tab_mirror.forget(added)
            gateway.guard.tab_replaced(removed, added)
            gateway.refs.move(removed, added)
            gateway.cdp.tab_replaced(removed, added)
            gateway.deep_refs.move(removed, added)
    elif name == "tabs.updated":
        tab_id = _int(data, "tabId")
        # A new document: every ref of the old one is gone with it.
        if tab_id is not None and data.get("status") == "loading":
            gateway.refs.forget(tab_id)
            gateway.key_runs.forget(tab_id)
            gateway.cdp.invalidate(tab_id, "the tab started loading")
        if tab_id is not None and isinstance(data.get("url"), str):
            gateway.tab_mirror.moved(tab_id, data["url"])
            gateway.guard.tab_updated(tab_id, data["url"])
    elif name == "tabs.created":
        tab_id = _int(data, "tabId")
        if tab_id is not None:
            gateway.guard.tab_created(tab_id, _int(data, "openerTabId"))
    elif name == "navigation.target":
        source, tab_id = _int(data, "sourceTabId"), _int(data, "tabId")
        if source is not None and tab_id is not None:
            gateway.guard.opened_by_page(source, tab_id, str(data.get("url") or ""))
    elif name == "navigation.blocked":
        tab_id, frame_id = _int(data, "tabId"), _int(data, "frameId")
        if tab_id is not None and frame_id is not None and isinstance(data.get("url"), str):
            gateway.guard.navigation_blocked(tab_id, frame_id, data["url"])
    elif name == "manual_input":
        tab_id = _int(data, "tabId")
        # Debugger input is trusted like a person's: the agent's own, just sent, is not a takeover.
        if tab_id is not None and not gateway.cdp.recent_agent_input(tab_id):
            kind = "keydown" if data.get("kind") == "keydown" else "mousedown"
            threads = gateway.routes.driving(tab_id)
            gateway.takeover.manual_input(tab_id, kind, threads, str(data.get("url") or ""))
    elif name == "permissions.removed":
        gateway.site_access.changed()
        origins = [o for o in data.get("origins") or [] if isinstance(o, str)]
        if origins:
            log.info("site access revoked for %s: dropping session grants", ", ".join(origins[:10]))
            try:
                gateway.gatekeeper.revoke_grants()
            except Exception:
                log.exception("could not drop session grants")
    elif name == "permissions.added":
        gateway.site_access.changed()
    else:
        log.debug("ignoring browser event %s", name)
