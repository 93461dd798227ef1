"""The extension's site access: a yes kept per origin until the browser says its permissions
changed, a no asked again every time, an answer never kept when a change came during the asking,
and no question for a page that is not a web page's."""

from __future__ import annotations

import asyncio
from typing import Any

from host.browser.site_access import SiteAccess

SITE = "https://shop.example"


class Browser:
    def __init__(self) -> None:
        self.granted = {f"{SITE}/*"}
        self.asked = 0
        self.hold: asyncio.Event | None = None

    async def api(self, name: str, *args: Any, timeout: float = 10.0) -> Any:
        assert name == "permissions.contains"
        self.asked += 1
        answer = args[0]["origins"][0] in self.granted
        if self.hold is not None:
            await self.hold.wait()
        return answer


async def test_a_yes_is_kept_until_the_permissions_change():
    browser = Browser()
    access = SiteAccess(lambda: browser)
    assert await access.allows(SITE) and await access.allows(SITE) and browser.asked == 1
    browser.granted.clear()
    access.changed()  # the browser said: permissions removed
    assert not await access.allows(SITE) and browser.asked == 2


async def test_a_no_is_asked_again_every_time():
    # The user may grant it on the approval card, and the call comes back before the event does.
    browser = Browser()
    browser.granted.clear()
    access = SiteAccess(lambda: browser)
    assert not await access.allows(SITE) and not await access.allows(SITE) and browser.asked == 2
    browser.granted.add(f"{SITE}/*")
    assert await access.allows(SITE) and browser.asked == 3


async def test_an_answer_that_crossed_a_change_is_not_kept():
    browser = Browser()
    access = SiteAccess(lambda: browser)
    browser.hold = asyncio.Event()
    asking = asyncio.ensure_future(access.allows(SITE))
    await asyncio.sleep(0.01)
    access.changed()
    browser.hold.set()
    assert await asking  # the answer of its time...
    browser.hold = None
    browser.granted.clear()
    assert not await access.allows(SITE) and browser.asked == 2  # ...but asked again after the change


async def test_pages_that_are_not_web_pages_are_never_asked_about():
    browser = Browser()
    access = SiteAccess(lambda: browser)
    for origin in ("chrome://settings", "file://", "", "about:blank"):
        assert not await access.allows(origin)
    assert browser.asked == 0
