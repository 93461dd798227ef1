"""Chrome DevTools MCP (`chrome-devtools-mcp` from npm, pinned) for the benchmarks: started over
stdio with its own headless Chromium (the system's), spoken to over MCP as an agent would, stopped
after the piece of work."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator
from typing import Any, Awaitable, Callable, TypeVar

from bench.playwright_mcp import Unavailable

T = TypeVar("T")
PACKAGE = "chrome-devtools-mcp@1.11.0"
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


async def selected_page(session: Any) -> dict[str, int]:
    """The arguments that name the server's selected page (`pageId`), from its `list_pages`
    answer ("1: about:blank [selected]")."""
    from bench.playwright_mcp import answer_text

    listing = answer_text(await session.call("list_pages", {}))
    line = next(line for line in listing.split("\n") if line.endswith("[selected]"))
    return {"pageId": int(line.split(":", 1)[0])}


class DevToolsMcp:
    """An open session with the server: `call(tool, arguments)` returns the answer's JSON form."""

    def __init__(self, client: Any):
        self._client = client

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        answer = await self._client.call_tool(tool, arguments)
        return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


@contextlib.asynccontextmanager
async def devtools_mcp() -> AsyncIterator[DevToolsMcp]:
    """An open session with a fresh DevTools MCP server, stopped after; raises `Unavailable`
    when there is no npx or Chromium to start it with."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    npx = shutil.which("npx")
    browser = next((path for path in map(shutil.which, CHROMIUM) if path), None)
    if npx is None or browser is None:
        raise Unavailable("Chrome DevTools MCP could not be started: " + ("no npx" if npx is None else "no Chromium"))
    # --no-sandbox: Chromium refuses its sandbox as root (test containers).
    params = StdioServerParameters(command=npx, args=[
        "-y", PACKAGE, "--headless", "--isolated", "--executablePath", browser, "--usageStatistics=false",
        "--chromeArg=--no-sandbox"], env={**os.environ, "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"})
    async with Client(params) as client:
        yield DevToolsMcp(client)


def with_devtools_mcp(work: Callable[[DevToolsMcp], Awaitable[T]]) -> T | str:
    """`work(session)` against a fresh DevTools MCP server; or why it could not be done."""
    async def run() -> T:
        async with devtools_mcp() as session:
            return await work(session)

    try:
        return asyncio.run(run())
    except Unavailable as exc:
        return str(exc)
    except Exception as exc:  # the server answered oddly or did not start: report it, keep the rest
        return f"Chrome DevTools MCP failed: {type(exc).__name__}: {exc}"
