"""`navigate` end to end against a direct CDP navigation of the same pages, alternated call by
call in one tab: the control socket, the gatekeeper, the navigation guard (the tab's rules and
the hold on a redirect to another site), `tabs.update`, the wait for the load in the service
worker and the new page's snapshot, against `Page.navigate` on the test's own DevTools
connection to the same tab waiting for `Page.loadEventFired` (no snapshot). One tab, the
browser's active one, serves both: the same renderer at the same priority loads every page (two
windows gave runs where one side's renderer ran markedly slower than the other's from one
launch to the next). The ratio is ours / direct; a `read_page` of the loaded page, measured in
the same run, says how much of ours is the snapshot.

    python -m bench.bench_navigate [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio

from bench.common import median, percentile, table
from bench.served_browser import served_browser
from tests.support.cdp import PageSession, debugging_port
from tests.support.hosts import attach

PAGES = {f"p{i}.html": f"<!doctype html><title>Page {i}</title><h1>Page {i}</h1>"
         + "".join(f"<p><a href='p{(i + 1) % 2}.html#{k}'>Link {k}</a></p>" for k in range(20)) for i in (0, 1)}


async def measure(server, run, runs: int) -> dict[str, list[float]]:
    control = await attach(client="bench")
    loop = asyncio.get_running_loop()
    samples: dict[str, list[float]] = {"navigate (ours)": [], "Page.navigate (direct CDP)": [], "read_page": []}
    base = {"thread_id": "bench", "policy": "auto"}
    try:
        tab = (await control.call("tools.call", tool="tab_open", params={"url": server.url("p0.html")}, **base))["tabId"]
        focused = await control.call("tools.call", tool="tab_focus", params={"tabId": tab}, **base)
        assert focused["ok"], focused
        page = await PageSession.open(debugging_port(run.profile), "p0.html")
        await page.send("Page.enable")
        try:
            for round_ in range(runs + 2):  # two rounds of warm-up
                target = server.url(f"p{(round_ + 1) % 2}.html")
                started = loop.time()
                result = await control.call("tools.call", tool="navigate", params={"tabId": tab, "url": target}, **base)
                ours = loop.time() - started
                assert result["ok"], result
                started = loop.time()
                await page.navigate(server.url(f"p{round_ % 2}.html?direct"))
                direct = loop.time() - started
                started = loop.time()
                read = await control.call("tools.call", tool="read_page", params={"tabId": tab}, **base)
                assert read["ok"], read
                if round_ >= 2:
                    samples["navigate (ours)"].append(ours)
                    samples["Page.navigate (direct CDP)"].append(direct)
                    samples["read_page"].append(loop.time() - started)
        finally:
            await page.close()
    finally:
        await control.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with served_browser(PAGES) as (server, run):
        samples = asyncio.run(measure(server, run, args.runs))
    anchor = median(samples["Page.navigate (direct CDP)"])
    rows = [(name, f"{median(s) * 1000:.1f}", f"{percentile(s, 95) * 1000:.1f}", f"{median(s) / anchor:.2f}")
            for name, s in samples.items()]
    print(f"navigate end to end, {args.runs} runs each, alternated call by call in one tab")
    print(table(["call", "median ms", "p95 ms", "x direct CDP"], rows))


if __name__ == "__main__":
    main()
