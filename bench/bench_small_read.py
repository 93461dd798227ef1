"""`read_page` on small pages against both MCP peers, each in its own headless Chromium: our
read (control socket -> host -> native messaging -> service worker -> page executor -> back),
Playwright MCP's `browser_snapshot` and Chrome DevTools MCP's `take_snapshot`, each called over
MCP as an agent calls it, median of N calls after two to warm up; each page is the browser's
active tab. Pages: a login form and a short article with its navigation. Also printed: the answers' sizes (what the model reads).
Ratio = ours / the peer.

    python -m bench.bench_small_read [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench.common import median, table
from bench.devtools_mcp import selected_page, with_devtools_mcp
from bench.playwright_mcp import answer_text, with_playwright_mcp
from bench.served_browser import served_browser
from tests.support.hosts import attach

PAGES = {
    "login.html": "<!doctype html><html><head><meta charset='utf-8'><title>Sign in</title></head><body><main>"
                  "<h1>Sign in</h1><form><label>Email <input type=email name=email autocomplete=username></label>"
                  "<label>Password <input type=password name=password autocomplete=current-password></label>"
                  "<label><input type=checkbox name=remember> Keep me signed in</label>"
                  "<button>Sign in</button></form><p><a href='#forgot'>Forgot your password?</a></p>"
                  "<p><a href='#new'>Create an account</a></p></main></body></html>",
    "article.html": "<!doctype html><html><head><meta charset='utf-8'><title>Release notes</title></head><body>"
                    "<nav><a href='#home'>Home</a> <a href='#docs'>Docs</a> <a href='#blog'>Blog</a></nav><main>"
                    "<h1>Release notes</h1>" + "".join(
                        f"<h2>Version 1.{n}</h2><p>Fixes and small changes in this release, described briefly "
                        f"for the readers of item {n}.</p><ul><li>Faster start</li><li>Fewer crashes</li></ul>"
                        for n in range(6)) + "<button>Subscribe</button></main></body></html>",
}


async def ours(urls: dict[str, str], runs: int) -> dict[str, tuple[list[float], int]]:
    control = await attach(client="bench")
    base = {"thread_id": "small-read", "policy": "auto"}
    out: dict[str, tuple[list[float], int]] = {}
    try:
        for name, url in urls.items():
            tab = (await control.call("tools.call", tool="tab_open", params={"url": url}, **base))["tabId"]
            # The page in front, as each peer's is (a background tab's renderer runs at a lower priority).
            focused = await control.call("tools.call", tool="tab_focus", params={"tabId": tab}, **base)
            assert focused["ok"], focused
            samples, size = [], 0
            for index in range(runs + 2):
                started = time.perf_counter()
                result = await control.call("tools.call", tool="read_page", params={"tabId": tab}, **base)
                if index >= 2:
                    samples.append(time.perf_counter() - started)
                assert result["ok"], result
                size = len(result["text"])
            out[name] = (samples, size)
    finally:
        await control.close()
    return out


def peer(start: Any, navigate: tuple[str, dict[str, Any]], snapshot: str, urls: dict[str, str], runs: int,
         page_ids: bool = False) -> dict[str, tuple[list[float], int]] | str:
    """The snapshot tool's time and answer size on each page; `page_ids`: the server's tools
    name their page (DevTools MCP's `pageId`)."""
    async def work(connection: Any) -> dict[str, tuple[list[float], int]]:
        out: dict[str, tuple[list[float], int]] = {}
        which = await selected_page(connection) if page_ids else {}
        for name, url in urls.items():
            loaded = await connection.call(navigate[0], {**navigate[1], **which, "url": url})
            assert not loaded.get("isError"), answer_text(loaded)[:300]
            samples, size = [], 0
            for index in range(runs + 2):
                started = time.perf_counter()
                answer = await connection.call(snapshot, which)
                if index >= 2:
                    samples.append(time.perf_counter() - started)
                assert not answer.get("isError"), answer_text(answer)[:300]
                size = len(answer_text(answer))
            out[name] = (samples, size)
        return out

    return start(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with served_browser(PAGES) as (server, _run):
        urls = {name: server.url(name) for name in PAGES}
        mine = asyncio.run(ours(urls, args.runs))
        playwright = peer(with_playwright_mcp, ("browser_navigate", {}), "browser_snapshot", urls, args.runs)
        devtools = peer(with_devtools_mcp, ("navigate_page", {"type": "url"}), "take_snapshot", urls, args.runs,
                        page_ids=True)
    rows = []
    for name in PAGES:
        ms = median(mine[name][0]) * 1000
        row: list[object] = [name, f"{ms:.2f}", mine[name][1]]
        for other in (playwright, devtools):
            if isinstance(other, str):
                row += ["-", "-", "-"]
            else:
                theirs = median(other[name][0]) * 1000
                row += [f"{theirs:.2f}", other[name][1], f"{ms / theirs:.2f}"]
        rows.append(row)
    print(f"read_page on small pages, median of {args.runs} calls, ms (and characters of the answer)")
    print(table(["page", "ours ms", "ours chars", "Playwright MCP ms", "chars", "x", "DevTools MCP ms", "chars", "x"],
                rows))
    for other in (playwright, devtools):
        if isinstance(other, str):
            print(other)


if __name__ == "__main__":
    main()
