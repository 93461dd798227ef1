"""`read_page` on small pages against both MCP peers, each in its own headless Chromium: our
read (control socket -> host -> native messaging -> service worker -> page executor -> back),
Playwright MCP's `browser_snapshot` and Chrome DevTools MCP's `take_snapshot`, each called over
MCP as an agent calls it. The three are alternated call by call (their order turning each round),
so the machine's drift falls on all alike; median of N calls after two rounds to warm up; each
page is its browser's active tab. Pages: a login form and a short article with its navigation.
Also printed: the answers' sizes (what the model reads). Ratio = ours / the peer.

    python -m bench.bench_small_read [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.common import median, table
from bench.devtools_mcp import devtools_mcp, selected_page
from bench.playwright_mcp import Unavailable, answer_text, playwright_mcp
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


# A contender's read of one page: it returns the answer's size, and raises when the answer is an
# error. Each contender makes one ready per page (`ready(url)`), in its own browser.
Reader = Callable[[], Awaitable[int]]


async def our_reader(control: Any) -> Callable[[str], Awaitable[Reader]]:
    """Our `read_page` as a reader, the page opened in a tab of its own."""
    base = {"thread_id": "small-read", "policy": "auto"}

    async def ready(url: str) -> Reader:
        tab = (await control.call("tools.call", tool="tab_open", params={"url": url}, **base))["tabId"]
        # The page in front, as each peer's is (a background tab's renderer runs at a lower priority).
        focused = await control.call("tools.call", tool="tab_focus", params={"tabId": tab}, **base)
        assert focused["ok"], focused

        async def read() -> int:
            result = await control.call("tools.call", tool="read_page", params={"tabId": tab}, **base)
            assert result["ok"], result
            return len(result["text"])
        return read
    return ready


def peer_reader(connection: Any, navigate: tuple[str, dict[str, Any]], snapshot: str,
                which: dict[str, Any]) -> Callable[[str], Awaitable[Reader]]:
    """A peer's snapshot tool as a reader; `which` names its page where its tools want that
    (DevTools MCP's `pageId`)."""
    async def ready(url: str) -> Reader:
        loaded = await connection.call(navigate[0], {**navigate[1], **which, "url": url})
        assert not loaded.get("isError"), answer_text(loaded)[:300]

        async def read() -> int:
            answer = await connection.call(snapshot, which)
            assert not answer.get("isError"), answer_text(answer)[:300]
            return len(answer_text(answer))
        return read
    return ready


async def measure(urls: dict[str, str], runs: int) -> tuple[dict[str, dict[str, tuple[list[float], int]]], list[str]]:
    """{contender: {page: (samples, answer size)}}, and why a peer is missing when it is."""
    missing: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        control = await attach(client="bench")
        stack.push_async_callback(control.close)
        contenders = {"ours": await our_reader(control)}
        try:
            playwright = await stack.enter_async_context(playwright_mcp())
            contenders["Playwright MCP"] = peer_reader(playwright, ("browser_navigate", {}), "browser_snapshot", {})
        except Unavailable as exc:
            missing.append(str(exc))
        try:
            devtools = await stack.enter_async_context(devtools_mcp())
            contenders["DevTools MCP"] = peer_reader(devtools, ("navigate_page", {"type": "url"}), "take_snapshot",
                                                     await selected_page(devtools))
        except Unavailable as exc:
            missing.append(str(exc))
        out: dict[str, dict[str, tuple[list[float], int]]] = {name: {} for name in contenders}
        for page, url in urls.items():
            readers = [(name, await ready(url)) for name, ready in contenders.items()]
            samples: dict[str, list[float]] = {name: [] for name, _ in readers}
            sizes: dict[str, int] = {}
            for round_ in range(runs + 2):
                turn = round_ % len(readers)
                for name, read in readers[turn:] + readers[:turn]:
                    started = time.perf_counter()
                    sizes[name] = await read()
                    if round_ >= 2:
                        samples[name].append(time.perf_counter() - started)
            for name in samples:
                out[name][page] = (samples[name], sizes[name])
    return out, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with served_browser(PAGES) as (server, _run):
        urls = {name: server.url(name) for name in PAGES}
        measured, missing = asyncio.run(measure(urls, args.runs))
    peers = ("Playwright MCP", "DevTools MCP")
    rows = []
    for page in PAGES:
        ms = median(measured["ours"][page][0]) * 1000
        row: list[object] = [page, f"{ms:.2f}", measured["ours"][page][1]]
        for name in peers:
            if name not in measured:
                row += ["-", "-", "-"]
                continue
            theirs = median(measured[name][page][0]) * 1000
            row += [f"{theirs:.2f}", measured[name][page][1], f"{ms / theirs:.2f}"]
        rows.append(row)
    print(f"read_page on small pages, median of {args.runs} calls alternated with the peers', ms (and characters of the answer)")
    print(table(["page", "ours ms", "ours chars", "Playwright MCP ms", "chars", "x", "DevTools MCP ms", "chars", "x"],
                rows))
    for why in missing:
        print(why)


if __name__ == "__main__":
    main()
