"""The widget task tests' two moves: open an APG-style fixture (tests/fixtures/pages/apg) as the
thread's tab and read it, and look at that page independently of the tools."""

from __future__ import annotations

from typing import Any


async def open_page(driver: Any, page: str) -> str:
    """Open `apg/<page>.html` in a new tab of the driver's thread; its read_page text."""
    await driver.open_fixture(f"apg/{page}.html")
    return (await driver.read())["text"]


async def in_page(driver: Any, page: str, expression: str) -> Any:
    """The JSON value of `expression` in the page `apg/<page>.html`, over the test's own CDP."""
    return await driver.evaluate(f"apg/{page}.html", expression)
