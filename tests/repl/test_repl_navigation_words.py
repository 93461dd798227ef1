"""In a real browser, a navigation that does not load its page is reported as failed, with the
reason, and never beside an ALLOW: Chrome's own error page (nothing listens at the address) and a
server's HTTP error page; a page that loads is still `ok`."""

from __future__ import annotations

import socket

import pytest

from host.repl.style import Style
from host.repl.tw import Tabwarden
from tests.support.browser_tools import l1_site, module_fixtures, new_driver

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l1_site, new_driver, "repl-navigation-words")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_an_error_page_is_a_failed_navigation_with_its_reason(driver):
    tw = Tabwarden(driver.control, Style(False), thread=driver.thread_id)
    tw.policy = "auto"
    tw.last_tab = await driver.open("form.html")

    nowhere = f"http://127.0.0.1:{closed_port()}/"
    shown = repr(await tw.run("navigate", tab=tw.last_tab, url=nowhere))
    assert shown.startswith(f"failed navigate [tab {tw.last_tab}]: the navigation failed: Chrome showed its error "
                            f"page instead of {nowhere}: the site could not be reached"), shown
    assert "ALLOW" not in shown

    missing = driver.site.url("no-such-page.html")
    shown = repr(await tw.run("navigate", tab=tw.last_tab, url=missing))
    assert shown.startswith(f"failed navigate [tab {tw.last_tab}]: the navigation failed: the server answered with "
                            "HTTP error 404"), shown

    page = driver.site.url("form.html")
    shown = repr(await tw.run("navigate", tab=tw.last_tab, url=page))
    assert shown.startswith(f"ok navigate [tab {tw.last_tab}]\n"), shown
