"""The host's record of where each tab is: kept from the browser's word and its tab events, a
title only for the page it was read on, forgotten when the tab goes, bounded."""

from __future__ import annotations

from host.browser import tab_mirror
from host.browser.events import handle_event
from host.browser.gateway import BrowserGateway
from host.browser.tab_mirror import TabMirror
from host.browser.target import target_from_tab
from protocol.messages import BrowserEvent


def tab(tab_id: int, url: str, title: str = "") -> object:
    return target_from_tab({"id": tab_id, "url": url, "title": title})


def test_a_tab_is_known_as_the_browser_last_described_it():
    mirror = TabMirror()
    assert mirror.get(3) is None
    mirror.seen(tab(3, "https://shop.example/cart", "Cart"))
    known = mirror.get(3)
    assert known.url == "https://shop.example/cart" and known.origin == "https://shop.example" and known.title == "Cart"


def test_a_move_keeps_the_title_only_for_the_same_page():
    mirror = TabMirror()
    mirror.seen(tab(3, "https://shop.example/cart", "Cart"))
    mirror.moved(3, "https://shop.example/cart")
    assert mirror.get(3).title == "Cart"
    mirror.moved(3, "https://bank.example/login")
    assert mirror.get(3).origin == "https://bank.example" and mirror.get(3).title == ""


def test_the_record_is_bounded_and_drops_the_oldest(monkeypatch):
    monkeypatch.setattr(tab_mirror, "MAX_TABS", 2)
    mirror = TabMirror()
    for tab_id in (1, 2, 1, 3):  # 1 seen again: 2 is now the oldest
        mirror.seen(tab(tab_id, f"https://s{tab_id}.example/"))
    assert mirror.get(2) is None and mirror.get(1) is not None and mirror.get(3) is not None


def test_tab_events_keep_the_record():
    gateway = BrowserGateway(lambda: None, gatekeeper=None)
    gateway.tab_mirror.seen(tab(5, "https://a.example/"))
    gateway.tab_mirror.seen(tab(6, "https://b.example/"))

    def event(name: str, **data: object) -> None:
        handle_event(gateway, BrowserEvent(name=name, data=data))

    event("tabs.updated", tabId=5, url="https://c.example/next", status="loading")
    assert gateway.tab_mirror.get(5).url == "https://c.example/next"
    event("tabs.removed", tabId=5, windowClosing=False)
    assert gateway.tab_mirror.get(5) is None
    event("tabs.replaced", addedTabId=7, removedTabId=6)
    assert gateway.tab_mirror.get(6) is None and gateway.tab_mirror.get(7) is None
