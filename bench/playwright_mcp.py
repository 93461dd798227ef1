"""Playwright MCP (`@playwright/mcp` from npm, in its own headless Chromium) for the benchmarks:
started for one piece of work, spoken to over MCP as an agent would, stopped after it."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")


def answer_text(answer: dict[str, Any]) -> str:
    """The text of a tool's answer, as a model reads it."""
    return "\n".join(block.get("text", "") for block in answer.get("content", []) if block.get("type") == "text")


def with_playwright_mcp(work: Callable[[Any], Awaitable[T]]) -> T | str:
    """`work(connection)` against a fresh Playwright MCP server (an open MCP connection to it);
    or why it could not be done (offline machine, no npx, an odd answer)."""
    from host.mcp.config import ServerConfig
    from host.mcp.connection import Connection
    from tests.support.playwright_mcp import EverythingUnavailable, PlaywrightMcpServer

    server = PlaywrightMcpServer()
    try:
        server.start()
    except EverythingUnavailable as exc:
        return f"Playwright MCP could not be started: {exc}"

    async def run() -> T:
        connection = Connection(ServerConfig(id="playwright", url=server.url, timeout_seconds=300), None)
        await connection.open()
        try:
            return await work(connection)
        finally:
            await connection.close()

    try:
        return asyncio.run(run())
    except Exception as exc:  # the server answered oddly: report it, keep the other figures
        return f"Playwright MCP failed: {type(exc).__name__}: {exc}"
    finally:
        server.stop()
