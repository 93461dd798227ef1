"""`navigate` end to end against a direct CDP navigation of the same pages, alternated call by
call in one browser: the control socket, the gatekeeper, the navigation guard (the tab's rules and
the hold on a redirect to another site), `tabs.update`, the wait for the load in the service
worker and the new page's snapshot, against `Page.navigate` on the test's own DevTools
connection waiting for `Page.loadEventFired` (no snapshot). Each page is the active tab of a
window of its own, so neither runs as a background tab. The direct navigations load the same
pages from another site (127.0.0.2), so that, as with a user's other tabs, they run in a renderer
of their own and the two do not wait on one main thread. The ratio is ours / direct; a
`read_page` of the loaded page, measured in the same run, says how much of ours is the snapshot.

    python -m bench.bench_navigate [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio

from bench.common import median, percentile, table
from bench.served_browser import served_browser
from tests.support.cdp import PageSession, debugging_port
from tests.support.hosts import attach
from tests.support.pages import PageServer

PAGES = {f"p{i}.html": f"<!doctype html><title>Page {i}</title><h1>Page {i}</h1>"
         + "".join(f"<p><a href='p{(i + 1) % 2}.html#{k}'>Link {k}</a></p>" for k in range(20)) for i in (0, 1)}
PAGES["direct.html"] = "<!doctype html><title>Direct</title><h1>Direct</h1>"


async def measure(server, other, run, runs: int) -> dict[str, list[float]]:
    control = await attach(client="bench")
    loop = asyncio.get_running_loop()
    samples: dict[str, list[float]] = {"navigate (ours)": [], "Page.navigate (direct CDP)": [], "read_page": []}
    base = {"thread_id": "bench", "policy": "auto"}
    try:
        tab = (await control.call("tools.call", tool="tab_open", params={"url": server.url("p0.html")}, **base))["tabId"]
        port = debugging_port(run.profile)
        # Both pages shown alike: each the active tab of a window of its own (a background tab's
        # renderer runs at a lower priority, which would favour whichever page is in front).
        opener = await PageSession.open(port, "p0.html")
        await opener.send("Target.createTarget", {"url": other.url("direct.html"), "newWindow": True})
        await opener.close()
        page = await PageSession.open(port, "direct.html")
        await page.send("Page.enable")
        focused = await control.call("tools.call", tool="tab_focus", params={"tabId": tab}, **base)
        assert focused["ok"], focused
        try:
            for round_ in range(runs + 2):  # two rounds of warm-up
                target = server.url(f"p{(round_ + 1) % 2}.html")
                started = loop.time()
                result = await control.call("tools.call", tool="navigate", params={"tabId": tab, "url": target}, **base)
                ours = loop.time() - started
                assert result["ok"], result
                started = loop.time()
                await page.navigate(other.url(f"p{round_ % 2}.html?direct"))
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
    with served_browser(PAGES) as (server, run), PageServer(server.root, host="127.0.0.2") as other:
        samples = asyncio.run(measure(server, other, run, args.runs))
    anchor = median(samples["Page.navigate (direct CDP)"])
    rows = [(name, f"{median(s) * 1000:.1f}", f"{percentile(s, 95) * 1000:.1f}", f"{median(s) / anchor:.2f}")
            for name, s in samples.items()]
    print(f"navigate end to end, {args.runs} runs each, alternated call by call in one browser")
    print(table(["call", "median ms", "p95 ms", "x direct CDP"], rows))


if __name__ == "__main__":
    main()
