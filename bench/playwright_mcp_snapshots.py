"""What Playwright MCP itself gives a model for a page: `@playwright/mcp` from npm, run by the
test suite's helper against its own headless Chromium (the system's), asked for
`browser_snapshot` after `browser_navigate` to each page. The size is the text of the answer,
as a model reads it (page state, snapshot, refs); our figure is read_page's whole answer too.
None when npx cannot fetch or start the server (offline machines): the benchmark then says so.
"""

from __future__ import annotations

from typing import Any

from bench.playwright_mcp import answer_text, with_playwright_mcp


def playwright_mcp_snapshots(urls: list[str]) -> dict[str, dict] | str:
    """Per URL, the characters (and text) of Playwright MCP's `browser_snapshot` answer; or why
    it could not be measured."""

    async def snapshots(connection: Any) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for url in urls:
            await connection.call("browser_navigate", {"url": url})
            text = answer_text(await connection.call("browser_snapshot", {}))
            out[url] = {"chars": len(text), "text": text}
        return out

    return with_playwright_mcp(snapshots)
