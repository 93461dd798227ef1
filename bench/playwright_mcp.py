"""Playwright MCP (`@playwright/mcp` from npm, in its own headless Chromium) for the benchmarks:
started for one piece of work, spoken to over MCP as an agent would, stopped after it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, Awaitable, Callable, TypeVar

T = TypeVar("T")


def answer_text(answer: dict[str, Any]) -> str:
    """The text of a tool's answer, as a model reads it."""
    return "\n".join(block.get("text", "") for block in answer.get("content", []) if block.get("type") == "text")


class Unavailable(Exception):
    """A peer that could not be started here (offline machine, no npx or Chromium)."""


@contextlib.asynccontextmanager
async def playwright_mcp() -> AsyncIterator[Any]:
    """An open MCP connection to a fresh Playwright MCP server, stopped after; raises
    `Unavailable` when the server cannot be started."""
    from host.mcp.config import ServerConfig
    from host.mcp.connection import Connection
    from tests.support.playwright_mcp import EverythingUnavailable, PlaywrightMcpServer

    server = PlaywrightMcpServer()
    try:
        server.start()
    except EverythingUnavailable as exc:
        raise Unavailable(f"Playwright MCP could not be started: {exc}") from None
    try:
        connection = Connection(ServerConfig(id="playwright", url=server.url, timeout_seconds=300), None)
        await connection.open()
        try:
            yield connection
        finally:
            await connection.close()
    finally:
        server.stop()


def with_playwright_mcp(work: Callable[[Any], Awaitable[T]]) -> T | str:
    """`work(connection)` against a fresh Playwright MCP server (an open MCP connection to it);
    or why it could not be done (offline machine, no npx, an odd answer)."""
    async def run() -> T:
        async with playwright_mcp() as connection:
            return await work(connection)

    try:
        return asyncio.run(run())
    except Unavailable as exc:
        return str(exc)
    except Exception as exc:  # the server answered oddly: report it, keep the other figures
        return f"Playwright MCP failed: {type(exc).__name__}: {exc}"
