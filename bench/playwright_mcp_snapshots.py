"""What Playwright MCP itself gives a model for a page: `@playwright/mcp` from npm, run by the
test suite's helper against its own headless Chromium (the system's), asked for
`browser_snapshot` after `browser_navigate` to each page. The size is the text of the answer,
as a model reads it (page state, snapshot, refs); our figure is read_page's whole answer too.
None when npx cannot fetch or start the server (offline machines): the benchmark then says so.
"""

from __future__ import annotations

import asyncio


async def _snapshots(url_of_server: str, urls: list[str]) -> dict[str, dict]:
    from host.mcp.config import ServerConfig
    from host.mcp.connection import Connection

    connection = Connection(ServerConfig(id="playwright", url=url_of_server, timeout_seconds=300), None)
    await connection.open()
    out: dict[str, dict] = {}
    try:
        for url in urls:
            await connection.call("browser_navigate", {"url": url})
            answer = await connection.call("browser_snapshot", {})
            text = "\n".join(block.get("text", "") for block in answer.get("content", []) if block.get("type") == "text")
            out[url] = {"chars": len(text), "text": text}
    finally:
        await connection.close()
    return out


def playwright_mcp_snapshots(urls: list[str]) -> dict[str, dict] | str:
    """Per URL, the characters (and text) of Playwright MCP's `browser_snapshot` answer; or why
    it could not be measured."""
    from tests.support.playwright_mcp import EverythingUnavailable, PlaywrightMcpServer

    server = PlaywrightMcpServer()
    try:
        server.start()
    except EverythingUnavailable as exc:
        return f"Playwright MCP could not be started: {exc}"
    try:
        return asyncio.run(_snapshots(server.url, urls))
    except Exception as exc:  # the server answered oddly: report it, keep the other figures
        return f"Playwright MCP failed: {type(exc).__name__}: {exc}"
    finally:
        server.stop()
