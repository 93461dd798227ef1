"""One L1 action end to end: `click` from the control socket to the result with its snapshot diff
(gatekeeper, per-tab queue, navigation guard, dialog patch install and restore, page executor
with actionability checks and the settle wait, post-write snapshot, diff), median and p95, in a
background tab as the agent normally works. The anchor is a `read_page` of the same page,
measured in the same run. The settle wait lasts as long as what the click set off (its DOM
changes, then 50 ms without another).

The cost of destination facts, from the same run: a read and a click of the same page whose links
and form lead to another origin (computed in the read, carried and checked in the click, judged
by the gatekeeper), against the page whose do not.

The navigation guard's share, from the same run: the host's own time on the guard per click
(the check that the installed rules still cover the tab, and the look at what the browser
reported), against the click's median; the round trip of an install (paid when a thread starts
driving a tab, or a scope lock, the lists or the rules change); and clicks made right after such
a change, each of which may wait for that install.

    python -m bench.bench_l1_action [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import re

from bench.common import median, percentile, table
from bench.served_browser import served_browser
from tests.support.hosts import attach

PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Action bench</title></head><body>
<h1>Counter</h1><p id="out">0</p>
<button onclick="document.getElementById('out').textContent = String(Number(document.getElementById('out').textContent) + 1)">Add one</button>
<form><label for="name">Name</label><input id="name"><button type="button">Save</button></form>
<ul>""" + "".join(f"<li><a href='#i{i}'>Entry {i}</a></li>" for i in range(50)) + "</ul></body></html>"
# The same page whose elements lead elsewhere: links to another origin, and "Add one" a submit
# button of a form posting there (its submit handler counts and stays). The snapshot computes
# each destination, the click carries it in `expect` and the page checks it, the gatekeeper
# judges the write at the destination too: the cost of destination facts.
ELSEWHERE = "http://127.0.0.2:9"
DEST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Action bench</title></head><body>
<h1>Counter</h1><p id="out">0</p>
<form method="post" action='""" + ELSEWHERE + """/count' onsubmit="event.preventDefault();
 document.getElementById('out').textContent = String(Number(document.getElementById('out').textContent) + 1)">
<button>Add one</button></form>
<form><label for="name">Name</label><input id="name"><button type="button">Save</button></form>
<ul>""" + "".join(f"<li><a href='{ELSEWHERE}/e{i}'>Entry {i}</a></li>" for i in range(50)) + "</ul></body></html>"
CHANGED = "https://bench-change.invalid"  # a blocked pattern added and removed to change the rules


async def measure(url: str, dest_url: str, runs: int) -> tuple[dict[str, list[float]], dict]:
    control = await attach(client="bench")
    loop = asyncio.get_running_loop()
    samples: dict[str, list[float]] = {"read_page": [], "click": [], "type": [], "click after a rules change": [],
                                       "read_page, destinations": [], "click, destinations": []}
    try:
        opened = await control.call("tools.call", tool="tab_open", params={"url": url}, thread_id="bench", policy="auto")
        tab = opened["tabId"]
        dest_tab = (await control.call("tools.call", tool="tab_open", params={"url": dest_url}, thread_id="bench",
                                       policy="auto"))["tabId"]
        base = {"thread_id": "bench", "policy": "auto"}

        async def click(button: str, on: int | None = None) -> dict:
            return await control.call("tools.call", tool="click",
                                      params={"tabId": on or tab, "element": "Add one", "ref": button}, **base)

        async def destinations() -> None:
            """A read and a click of the page whose elements lead elsewhere."""
            started = loop.time()
            page = await control.call("tools.call", tool="read_page", params={"tabId": dest_tab}, **base)
            samples["read_page, destinations"].append(loop.time() - started)
            button = re.search(r'button "Add one" \[posts to http://127\.0\.0\.2:9/count\] \[ref=(\S+)\]',
                               page["text"]).group(1)
            started = loop.time()
            clicked = await click(button, dest_tab)
            samples["click, destinations"].append(loop.time() - started)
            assert clicked["ok"] and "Page Changes" in clicked["text"], clicked

        for round_ in range(runs + 2):
            started = loop.time()
            page = await control.call("tools.call", tool="read_page", params={"tabId": tab}, **base)
            samples["read_page"].append(loop.time() - started)
            button = re.search(r'button "Add one" \[ref=(\S+)\]', page["text"]).group(1)
            started = loop.time()
            clicked = await click(button)
            samples["click"].append(loop.time() - started)
            assert clicked["ok"] and "Page Changes" in clicked["text"], clicked
            # The click's answer names only what changed; the field's ref, from the read, still holds.
            field = re.search(r'textbox "Name"[^\n]*\[ref=(\S+)\]', page["text"]).group(1)
            started = loop.time()
            typed = await control.call("tools.call", tool="type",
                                       params={"tabId": tab, "element": "Name", "ref": field, "text": f"Ada, round {round_}"},
                                       **base)
            samples["type"].append(loop.time() - started)
            assert typed["ok"], typed
            change = "add_origin" if round_ % 2 == 0 else "remove_origin"
            await control.call(f"gatekeeper.{change}", pattern=CHANGED, list="blocked")
            started = loop.time()
            changed = await click(button)
            samples["click after a rules change"].append(loop.time() - started)
            assert changed["ok"], changed
            await destinations()
        guard = await control.call("browser.guard")
        if len(samples["read_page"]) % 2:  # leave the list as it was
            await control.call("gatekeeper.remove_origin", pattern=CHANGED, list="blocked")
    finally:
        await control.close()
    return {name: values[2:] for name, values in samples.items()}, guard  # drop the warm-up rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with served_browser({"action.html": PAGE, "dest.html": DEST_PAGE}) as (pages, _run):
        samples, guard = asyncio.run(measure(pages.url("action.html"), pages.url("dest.html"), args.runs))
    anchor = median(samples["read_page"])
    rows = [(name, median(values) * 1000, percentile(values, 95) * 1000, median(values) / anchor)
            for name, values in samples.items()]
    print(f"one L1 call end to end (control socket -> result), background tab, {args.runs} runs, ms; anchor read_page")
    print(table(["call", "median", "p95", "x read_page"], rows))
    click = median(samples["click"]) * 1000
    per_click = [ms for tool, ms in guard["spentMs"] if tool == "click"]
    installs = guard["installMs"]
    guard_rows = [("guard per click (host)", median(per_click), percentile(per_click, 95), median(per_click) / click * 100),
                  ("install round trip", median(installs), percentile(installs, 95), median(installs) / click * 100),
                  ("click after a change - click", median(samples["click after a rules change"]) * 1000 - click,
                   percentile(samples["click after a rules change"], 95) * 1000 - click,
                   (median(samples["click after a rules change"]) * 1000 - click) / click * 100)]
    reads = median(samples["read_page"]) * 1000
    dest_read, dest_click = median(samples["read_page, destinations"]) * 1000, median(samples["click, destinations"]) * 1000
    print("\ndestination facts, same run, ms: the page whose link and form lead to another origin against the same "
          "page whose do not")
    print(table(["call", "without", "with", "added", "% of call"],
                [("read_page", reads, dest_read, dest_read - reads, (dest_read - reads) / reads * 100),
                 ("click", click, dest_click, dest_click - click, (dest_click - click) / click * 100)]))
    print(f"\nthe navigation guard's added cost, same run, ms; against the click's median ({click:.1f} ms); "
          f"{len(installs)} installs")
    print(table(["part", "median", "p95", "% of click"], guard_rows))


if __name__ == "__main__":
    main()
