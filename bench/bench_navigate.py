"""`navigate` end to end against a direct CDP navigation of the same pages, alternated call by
call in one tab: the control socket, the gatekeeper, the navigation guard (the tab's rules and
the hold on a redirect to another site), `tabs.update`, the wait for the load in the service
worker and the new page's snapshot, against `Page.navigate` on the test's own DevTools
connection to the same tab waiting for `Page.loadEventFired` (no snapshot). One tab, the
browser's active one, serves both: the same renderer at the same priority loads every page (two
windows gave runs where one side's renderer ran markedly slower than the other's from one
launch to the next). The ratio is ours / direct; a `read_page` of the loaded page, measured in
the same run, says how much of ours is the snapshot. Then, apart, a `click` on a link of the
page (which loads the other page, answered with its snapshot): what a load a write causes costs.

While the agent works, every page loaded in the browser carries the dormant page executor (the
direct navigations too, in the same tab). Last, apart, the direct navigation is timed in pairs:
with the agent at work, and with its work ended in the service worker (no executor in the page).
What the executor costs a page load, and ours against that plainer anchor, are printed as well.
Then the direct navigation right after a change of the extension's session rules, paired with
one right after none: every install of the navigation guard is such a change (navigate makes
two), and the browser drops its back-forward cache at each, which the next page load pays for.

A second table sets ours beside the MCP peers doing the same job, each in its own headless
Chromium and called over MCP as an agent calls it, on the same two pages alternated: Playwright
MCP's `browser_navigate` (its answer carries the new page's snapshot) and Chrome DevTools MCP's
`navigate_page` followed by `take_snapshot` (its navigation answers without one).

    python -m bench.bench_navigate [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.common import median, percentile, table
from bench.devtools_mcp import selected_page, with_devtools_mcp
from bench.playwright_mcp import answer_text, with_playwright_mcp
from bench.served_browser import served_browser
from tests.support.cdp import PageSession, debugging_port, evaluate_in_worker
from tests.support.hosts import attach
from tests.support.waiting import until

AT_WORK_ANCHOR = "Page.navigate (direct CDP), agent at work, apart"
IDLE_ANCHOR = "Page.navigate (direct CDP), agent not at work, apart"
PAGES = {f"p{i}.html": f"<!doctype html><title>Page {i}</title><h1>Page {i}</h1>"
         + "".join(f"<p><a href='p{(i + 1) % 2}.html#{k}'>Link {k}</a></p>" for k in range(20)) for i in (0, 1)}


async def timed(awaitable: Awaitable[Any]) -> tuple[Any, float]:
    """What `awaitable` gives, and how many seconds it took."""
    started = time.perf_counter()
    result = await awaitable
    return result, time.perf_counter() - started


async def navigate_rounds(call: Callable[..., Awaitable[dict]], page: PageSession, server, runs: int,
                          samples: dict[str, list[float]]) -> None:
    """Ours and the direct navigation alternated, each followed by our read of the page."""
    for round_ in range(runs + 2):  # two rounds of warm-up
        result, ours = await timed(call("navigate", url=server.url(f"p{(round_ + 1) % 2}.html")))
        assert result["ok"], result
        _, direct = await timed(page.navigate(server.url(f"p{round_ % 2}.html?direct")))
        read, reading = await timed(call("read_page"))
        assert read["ok"], read
        if round_ >= 2:
            samples["navigate (ours)"].append(ours)
            samples["Page.navigate (direct CDP)"].append(direct)
            samples["read_page"].append(reading)


async def click_rounds(call: Callable[..., Awaitable[dict]], runs: int, samples: dict[str, list[float]]) -> None:
    """A click on a link that loads the other page. Apart, after the navigations: a write's load
    has the pages of the tab that commit soon after it given the executor, a direct one's too."""
    for round_ in range(runs + 2):
        read = await call("read_page")
        link = re.search(r'link "Link 3" \[ref=(\w+)\]', read["text"])
        assert read["ok"] and link, read
        clicked, took = await timed(call("click", ref=link.group(1), element="Link 3"))
        assert clicked["ok"] and "navigated to" in clicked["text"], clicked
        if round_ >= 2:
            samples["click on a link (ours)"].append(took)


async def anchor_pairs(call: Callable[..., Awaitable[dict]], page: PageSession, server, port: int, runs: int,
                       samples: dict[str, list[float]]) -> None:
    """The direct navigation with the agent at work (a read makes it so, and the browser has the
    executor registered again), then with its work ended in the worker: paired, round by round."""
    for round_ in range(runs + 2):
        assert (await call("read_page"))["ok"]
        await until(lambda: evaluate_in_worker(port, "tabwarden.executorAtWork.state().inForce.length > 0"), 5,
                    "the executor registered", interval=0.01)
        _, at_work = await timed(page.navigate(server.url(f"p{round_ % 2}.html?work")))
        await evaluate_in_worker(port, "tabwarden.executorAtWork.end()")
        _, idle = await timed(page.navigate(server.url(f"p{round_ % 2}.html?idle")))
        if round_ >= 2:
            samples[AT_WORK_ANCHOR].append(at_work)
            samples[IDLE_ANCHOR].append(idle)


# A rule id the guard never uses: removing it changes no rule, but is a change of the rules all the same.
UNUSED_RULE_ID = 2_000_000_000
RULES_CHANGED = "Page.navigate (direct CDP) after a rule change, apart"
RULES_KEPT = "Page.navigate (direct CDP) after none, apart"


async def rule_change_pairs(page: PageSession, server, port: int, runs: int, samples: dict[str, list[float]]) -> None:
    """The direct navigation right after the extension changed its session rules (a removal of
    a rule that is not there), then right after a look in the worker that changes nothing: what a
    change of the network rules costs the next page load, whoever loads it."""
    change = (f"chrome.declarativeNetRequest.updateSessionRules({{removeRuleIds: [{UNUSED_RULE_ID}]}})"
              ".then(() => true)")
    for round_ in range(runs + 2):
        assert await evaluate_in_worker(port, change)
        _, changed = await timed(page.navigate(server.url(f"p{round_ % 2}.html?rules")))
        assert await evaluate_in_worker(port, "Promise.resolve(true)")
        _, kept = await timed(page.navigate(server.url(f"p{(round_ + 1) % 2}.html?rules")))
        if round_ >= 2:
            samples[RULES_CHANGED].append(changed)
            samples[RULES_KEPT].append(kept)


async def measure(server, run, runs: int) -> dict[str, list[float]]:
    control = await attach(client="bench")
    samples: dict[str, list[float]] = {"navigate (ours)": [], "Page.navigate (direct CDP)": [], "read_page": [],
                                       "click on a link (ours)": [], AT_WORK_ANCHOR: [], IDLE_ANCHOR: [],
                                       RULES_CHANGED: [], RULES_KEPT: []}
    base = {"thread_id": "bench", "policy": "auto"}
    try:
        tab = (await control.call("tools.call", tool="tab_open", params={"url": server.url("p0.html")}, **base))["tabId"]

        def call(tool: str, **params: Any) -> Awaitable[dict]:
            return control.call("tools.call", tool=tool, params={"tabId": tab, **params}, **base)

        focused = await call("tab_focus")
        assert focused["ok"], focused
        port = debugging_port(run.profile)
        page = await PageSession.open(port, "p0.html")
        await page.send("Page.enable")
        try:
            await navigate_rounds(call, page, server, runs, samples)
            await click_rounds(call, runs, samples)
            await anchor_pairs(call, page, server, port, runs, samples)
            await rule_change_pairs(page, server, port, runs, samples)
        finally:
            await page.close()
    finally:
        await control.close()
    return samples


def peer(start: Any, navigate: tuple[str, dict[str, Any]], snapshot: str | None, urls: list[str], runs: int,
         page_ids: bool = False) -> list[float] | str:
    """A peer's navigation with the new page's snapshot (its navigate tool, then `snapshot` when
    its navigation answers without one), the two pages alternated, after two rounds of warm-up;
    or why it could not be measured. `page_ids`: the server's tools name their page."""
    async def work(connection: Any) -> list[float]:
        which = await selected_page(connection) if page_ids else {}
        samples = []
        for round_ in range(runs + 2):
            started = time.perf_counter()
            loaded = await connection.call(navigate[0], {**navigate[1], **which, "url": urls[(round_ + 1) % 2]})
            assert not loaded.get("isError"), answer_text(loaded)[:300]
            if snapshot is not None:
                read = await connection.call(snapshot, which)
                assert not read.get("isError"), answer_text(read)[:300]
            if round_ >= 2:
                samples.append(time.perf_counter() - started)
        return samples

    return start(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with served_browser(PAGES) as (server, run):
        samples = asyncio.run(measure(server, run, args.runs))
        urls = [server.url(name) for name in sorted(PAGES)]
        peers = {
            "Playwright MCP browser_navigate": peer(with_playwright_mcp, ("browser_navigate", {}), None, urls, args.runs),
            "DevTools MCP navigate_page + take_snapshot": peer(
                with_devtools_mcp, ("navigate_page", {"type": "url"}), "take_snapshot", urls, args.runs, page_ids=True),
        }
    anchor = median(samples["Page.navigate (direct CDP)"])
    rows = [(name, f"{median(s) * 1000:.1f}", f"{percentile(s, 95) * 1000:.1f}", f"{median(s) / anchor:.2f}")
            for name, s in samples.items()]
    print(f"navigate end to end, {args.runs} runs each, alternated call by call in one tab (the last five rows apart, after)")
    print(table(["call", "median ms", "p95 ms", "x direct CDP"], rows))
    idle, at_work = median(samples[IDLE_ANCHOR]), median(samples[AT_WORK_ANCHOR])
    print(f"the dormant executor costs a page load {(at_work - idle) * 1000:+.1f} ms while the agent works (paired rounds); "
          f"navigate (ours) is {median(samples['navigate (ours)']) / idle:.2f}x the direct navigation without it")
    changed, kept = median(samples[RULES_CHANGED]), median(samples[RULES_KEPT])
    print(f"a change of the extension's network rules costs the next page load {(changed - kept) * 1000:+.1f} ms "
          "(paired rounds; the browser drops its back-forward cache on every change): navigate makes two, the hold "
          "on its redirect hops before its load and that hold's release after it")
    ours = median(samples["navigate (ours)"])
    rows = [("navigate (ours)", f"{ours * 1000:.1f}", "-")]
    for name, measured in peers.items():
        if isinstance(measured, str):
            print(measured)
            continue
        rows.append((name, f"{median(measured) * 1000:.1f}", f"{ours / median(measured):.2f}"))
    print(f"\nnavigate with the new page's snapshot against the MCP peers (each in its own browser), {args.runs} runs each")
    print(table(["call", "median ms", "ours / peer"], rows))


if __name__ == "__main__":
    main()
