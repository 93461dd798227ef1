"""Input latency on a quiet page: our trusted `press_key` and `click_trusted` (L2, through the
debugger bridge) and L1 `click` and `type` (the page executor), each one whole tool call from the
control socket to its result, against Playwright's `keyboard.press`, `click` and `fill` on the
same page in the same browser and run. Playwright is the anchor: ratio = ours / it.

The page makes no request and changes nothing but a counter's text and the fields' values, so
what each call waits after its input is the whole cost of waiting for effects that never come.
Both tabs are in front when measured (Playwright's click waits for rendered frames, which a
hidden tab does not draw); ours are also measured in a background tab, where the agent mostly
works, without an anchor. Playwright runs from a scratch venv against Debian's Chromium through
connect_over_cdp, as in bench_snapshot. Playwright MCP's own tools for the same inputs
(`@playwright/mcp` from npm, in its own headless browser) are timed too, when npx can start it:
a whole tool call each, as ours are.

    python -m bench.bench_input [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
from pathlib import Path
from typing import Any

from bench.common import median, percentile, ref_on_line, table
from bench.playwright_mcp_input import playwright_mcp_input
from bench.playwright_venv import ensure_playwright
from bench.served_browser import served_browser
from tests.support.cdp import debugging_port
from tests.support.hosts import attach

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Input bench</title></head><body>
<h1>Quiet page</h1><p id="out">0</p>
<button id="add" onclick="document.getElementById('out').textContent = String(Number(document.getElementById('out').textContent) + 1)">Add one</button>
<label for="name">Name</label><input id="name">
<label for="level">Level</label><input id="level" type="range" min="0" max="100000" value="0">
</body></html>"""

PLAYWRIGHT_WORKER = r"""
import asyncio, json, sys, time
from playwright.async_api import async_playwright

async def main(port, url, runs):
    async with async_playwright() as p:
        browser = await p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        page = next(pg for ctx in browser.contexts for pg in ctx.pages if pg.url == url)
        await page.bring_to_front()
        await page.focus("#level")
        actions = {
            "keyboard.press": lambda: page.keyboard.press("ArrowRight"),
            "click": lambda: page.click("#add"),
            "fill": lambda: page.fill("#name", "Grace Hopper"),
        }
        out = {name: [] for name in actions}
        for _ in range(3):
            for act in actions.values():
                await act()
        await page.focus("#level")
        for _ in range(runs):
            for name, act in actions.items():
                if name == "keyboard.press":
                    await page.focus("#level")
                started = time.perf_counter()
                await act()
                out[name].append(time.perf_counter() - started)
        print(json.dumps(out))

asyncio.run(main(int(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""

REF = re.compile(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]")


def ref_of(text: str, part: str) -> str:
    return ref_on_line(text, part, REF)


async def ours(url: str, runs: int, *, front: bool) -> dict[str, list[float]]:
    """Seconds of each of our calls, interleaved tool by tool, in a front tab or (as the agent
    mostly works) a background one."""
    control = await attach(client="bench-input", timeout=30)
    base = {"thread_id": f"bench-input-{'front' if front else 'background'}", "policy": "auto"}
    loop = asyncio.get_running_loop()
    samples: dict[str, list[float]] = {"press_key": [], "click_trusted": [], "click": [], "type": []}

    async def call(tool: str, **params: Any) -> dict:
        result = await control.call("tools.call", tool=tool, params=params, timeout=60, **base)
        assert result["ok"], result
        return result

    async def timed(name: str, tool: str, **params: Any) -> dict:
        started = loop.time()
        result = await call(tool, **params)
        samples[name].append(loop.time() - started)
        return result

    try:
        tab = (await call("tab_open", url=url))["tabId"]
        await control.call("browser.bind_target", thread_id=base["thread_id"], tab_id=tab)
        if front:
            await call("tab_focus", tabId=tab)
        for run in range(runs + 2):  # the first two warm up the debugger and the executor
            page = (await call("read_page"))["text"]
            await call("press_key", key="ArrowLeft", ref=ref_of(page, 'slider "Level"'))  # the slider takes the focus
            await timed("press_key", "press_key", key="ArrowRight")
            page = (await call("read_page"))["text"]
            await timed("click_trusted", "click_trusted", element="Add one", ref=ref_of(page, 'button "Add one"'))
            page = (await call("read_page"))["text"]
            await timed("click", "click", element="Add one", ref=ref_of(page, 'button "Add one"'))
            page = (await call("read_page"))["text"]
            await timed("type", "type", element="Name", ref=ref_of(page, 'textbox "Name"'), text=f"Grace Hopper {run}")
    finally:
        await control.close()
    return {name: values[2:] for name, values in samples.items()}


def theirs(python: Path, port: int, url: str, runs: int) -> dict[str, list[float]] | None:
    done = subprocess.run([str(python), "-c", PLAYWRIGHT_WORKER, str(port), url, str(runs)], capture_output=True,
                          text=True, timeout=600)
    if done.returncode != 0:
        print(f"playwright run failed: {done.stderr[-600:]}")
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    python = ensure_playwright()
    with served_browser({"input.html": PAGE}) as (pages, run):
        mine = asyncio.run(ours(pages.url("input.html?for=tabwarden"), args.runs, front=True))
        hidden = asyncio.run(ours(pages.url("input.html?for=tabwarden-background"), args.runs, front=False))
        anchor_url = pages.url("input.html?for=playwright")
        asyncio.run(_open(anchor_url))
        pw = theirs(python, debugging_port(run.profile), anchor_url, args.runs) if python else None
        mcp = playwright_mcp_input(pages.url("input.html?for=playwright-mcp"), args.runs)
    if isinstance(mcp, str):
        print(f"({mcp}: its columns are missing)")
        mcp = {}
    pairs = [("press_key (trusted)", "press_key", "keyboard.press", "browser_press_key"),
             ("click_trusted", "click_trusted", "click", "browser_click"), ("click (L1)", "click", "click", "browser_click"),
             ("type (L1)", "type", "fill", "browser_type")]
    rows = []
    for label, name, anchor, peer in pairs:
        ms = [s * 1000 for s in mine[name]]
        row: list[object] = [label, median(ms), percentile(ms, 95)]
        if pw:
            theirs_ms = [s * 1000 for s in pw[anchor]]
            row += [f"page.{anchor}", median(theirs_ms), percentile(theirs_ms, 95), median(ms) / median(theirs_ms)]
        else:
            row += ["-", "-", "-", "-"]
        if peer in mcp:
            peer_ms = [s * 1000 for s in mcp[peer]]
            row += [peer, median(peer_ms), median(ms) / median(peer_ms)]
        else:
            row += ["-", "-", "-"]
        row.append(median([s * 1000 for s in hidden[name]]))
        rows.append(row)
    print(f"input on a quiet page, front tab, {args.runs} runs each, ms; anchor Playwright (ratio = ours / it, goal <= 2); "
          "mcp: Playwright MCP's own tool for it, a whole tool call as ours is; last column: ours in a background tab")
    print(table(["call", "ours med", "ours p95", "playwright", "pw med", "pw p95", "ours/pw", "mcp tool", "mcp med",
                 "ours/mcp", "ours bg med"], rows))


async def _open(url: str) -> None:
    """Open Playwright's own tab (through the host, like every tab here)."""
    control = await attach(client="bench-input-open", timeout=30)
    try:
        opened = await control.call("tools.call", tool="tab_open", params={"url": url}, thread_id="bench-input",
                                    policy="auto")
        assert opened["ok"], opened
    finally:
        await control.close()


if __name__ == "__main__":
    main()
