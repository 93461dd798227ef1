"""Snapshot time, size and agreement: our read_page against Playwright's aria_snapshot(mode="ai")
on the same pages in the same headless Chromium, and against Chromium's own accessibility tree.

Playwright MCP's own answer (`browser_snapshot` of `@playwright/mcp` from npm, on the same pages
in its own browser) is measured too, when npx can start it: its size is what the model of a
Playwright MCP user reads.

Pages: generated documents of 1k, 5k and 20k elements, a large real document from Debian's
python3-doc package (installed with apt when it is missing and we are root), the pages of the
widget tasks (tests/fixtures/pages/apg, sizes only), and the widget fixtures of the agreement
test (tests/fixtures/pages/a11y), on which read_page's roles, names
and states are also compared with `Accessibility.getFullAXTree`. Our figure is one
read_page end to end (control socket -> host -> native messaging -> service worker -> page
executor -> back), default budget; Playwright's is one aria_snapshot() call over CDP from a Python
client, measured in a scratch venv (Python `playwright` pointed at Debian's Chromium through
connect_over_cdp, so no browser download is needed). Playwright is the anchor: ratio = ours / it.

`--pages DIR` adds every page under DIR (for instance the example pages of a checkout of the ARIA
Authoring Practices, real widget pages with their prose, which this repository does not carry),
sizes only, and prints their ratio against Playwright MCP as a group of its own.

    python -m bench.bench_snapshot [--runs N] [--pages DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.common import median, percentile, table
from bench.playwright_mcp_snapshots import playwright_mcp_snapshots
from bench.playwright_venv import ensure_playwright
from tests.support.browser import BrowserRun
from tests.support.cdp import debugging_port
from tests.support.hosts import attach, tabwarden_home
from tests.support.ax_agreement import Tally, agreement
from tests.support.pages import FIXTURES, PageServer

SIZES = (1000, 5000, 20000)
WIDGET_PAGES = ("landmarks.html", "tree.html", "grid.html", "feed.html", "svg.html", "labels.html", "widgets.html",
                "patterns.html")
# The pages of the widget tasks (tests/fixtures/pages/apg): widgets with some prose, as an
# example page has them; sizes only.
TASK_PAGES = ("combobox.html", "menubar.html", "datepicker.html", "carousel.html", "slider.html", "treeview.html",
              "sortable.html", "dialog.html", "editgrid.html", "accordion.html", "listbox.html", "menubutton.html",
              "tabs.html", "tristate.html", "radiogroup.html", "spinbutton.html", "switch.html", "disclosure.html",
              "toolbar.html", "feed.html", "spanlink.html", "alertdialog.html", "breadcrumb.html", "landmarks.html")
DOCS = Path("/usr/share/doc/python3-doc/html")
REAL_PAGE = "library/stdtypes.html"


def generated_page(elements: int) -> str:
    """A document of exactly `elements` elements inside <body>: sections of headings, prose with
    links, lists, form rows and buttons, in roughly the mix of a content page."""
    parts: list[str] = []
    count = 0
    block = 0
    while count < elements:
        block += 1
        # 20 elements per block
        parts.append(
            f'<section><h3>Section {block}</h3>'
            f'<p>Paragraph {block} with <a href="#a{block}">a link</a> and <strong>bold</strong> text.</p>'
            f'<ul><li><a href="#l{block}a">Item {block}.1</a></li><li><a href="#l{block}b">Item {block}.2</a></li>'
            f'<li>Plain item {block}.3</li></ul>'
            f'<div class="row"><label for="f{block}">Field {block}</label><input id="f{block}" placeholder="value {block}">'
            f'<button type="button">Save {block}</button></div>'
            f'<div class="card" style="cursor:pointer"><span>Card {block}</span></div></section>'
        )
        count += 20
    return "<!doctype html><html><head><meta charset='utf-8'><title>Generated</title></head><body>" + "".join(parts) + "</body></html>"


def ensure_docs() -> Path | None:
    """Debian's Python documentation, installed when missing (root and apt needed)."""
    if (DOCS / REAL_PAGE).is_file():
        return DOCS
    if shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "python3-doc"], env=env, capture_output=True)
    return DOCS if (DOCS / REAL_PAGE).is_file() else None


PLAYWRIGHT_WORKER = r"""
import asyncio, json, sys, time
from playwright.async_api import async_playwright

async def main(port, urls, runs, shown):
    out = {}
    async with async_playwright() as p:
        browser = await p.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        pages = [pg for ctx in browser.contexts for pg in ctx.pages]
        for url in urls:
            page = next((pg for pg in pages if pg.url == url), None)
            if page is None:  # a page that went elsewhere on its own (a redirect, a hash): not measured
                continue
            for _ in range(2):
                await page.aria_snapshot(mode="ai")
            samples, size = [], 0
            for _ in range(runs):
                started = time.perf_counter()
                text = await page.aria_snapshot(mode="ai")
                samples.append(time.perf_counter() - started)
                size = len(text)
            out[url] = {"samples": samples, "chars": size}
            if url in shown:
                out[url]["text"] = text
        await browser.close()
    print(json.dumps(out))

asyncio.run(main(int(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), set(json.loads(sys.argv[4]))))
"""


async def ours(urls: list[str], runs: int) -> dict[str, dict]:
    control = await attach(client="bench")
    out: dict[str, dict] = {}
    try:
        for url in urls:
            opened = await control.call("tools.call", tool="tab_open", params={"url": url}, thread_id="bench",
                                        policy="auto")
            assert opened["ok"], opened
            tab = opened["tabId"]
            await control.call("tools.call", tool="tab_focus", params={"tabId": tab}, thread_id="bench", policy="auto")
            call = {"tool": "read_page", "params": {"tabId": tab}, "thread_id": "bench"}
            for _ in range(2):
                await control.call("tools.call", **call)
            samples, result = [], None
            loop = asyncio.get_running_loop()
            for _ in range(runs):
                started = loop.time()
                result = await control.call("tools.call", timeout=120, **call)
                samples.append(loop.time() - started)
            assert result and result["ok"], result
            out[url] = {"samples": samples, "chars": len(result["text"]), "refs": result["details"]["refCount"],
                        "truncated": result["details"]["truncatedNodes"], "text": result["text"]}
    finally:
        await control.close()
    return out


async def agreement_on(port: int, widgets: list[tuple[str, str]], mine: dict[str, dict]) -> Tally:
    """read_page's agreement with Chromium's own tree over the widget pages (their last read)."""
    total = Tally()
    for label, url in widgets:
        total.add(await agreement(port, url, label, mine[url]["text"]))
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--show", metavar="PAGE", help="also print both snapshots of the pages whose label ends with PAGE")
    parser.add_argument("--pages", metavar="DIR", type=Path, help="also measure the size of every *.html page under DIR")
    args = parser.parse_args()
    extra_root = args.pages.resolve() if args.pages else None
    if extra_root is not None and not extra_root.is_dir():
        parser.error(f"--pages: {args.pages} is not a folder")
    python = ensure_playwright()
    docs = ensure_docs()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pages"
        root.mkdir()
        for size in SIZES:
            (root / f"gen-{size}.html").write_text(generated_page(size))
        with PageServer(root) as generated, PageServer(docs or root) as real, PageServer(FIXTURES) as fixtures, \
                PageServer(extra_root or root) as given:
            pages = [(f"generated {n}", generated.url(f"gen-{n}.html")) for n in SIZES]
            if docs:
                pages.append((f"python3-doc {REAL_PAGE}", real.url(REAL_PAGE)))
            widgets = [(f"widgets {name}", fixtures.url(f"a11y/{name}")) for name in WIDGET_PAGES]
            tasks = [(f"tasks {name}", fixtures.url(f"apg/{name}")) for name in TASK_PAGES]
            extra = [(f"pages {path.relative_to(extra_root)}", given.url(str(path.relative_to(extra_root))))
                     for path in sorted(extra_root.rglob("*.html"))] if extra_root else []
            pages += widgets + tasks + extra
            run = BrowserRun(Path(tmp) / "run", host_permissions=["http://127.0.0.1/*"])
            run.prepare()
            run.start()
            try:
                with tabwarden_home(run.tw_home):
                    mine = asyncio.run(ours([u for _, u in pages], args.runs))
                agreed = asyncio.run(agreement_on(debugging_port(run.profile), widgets, mine))
                theirs: dict[str, dict] = {}
                if python is not None:
                    port = debugging_port(run.profile)
                    shown = [u for label, u in pages if args.show and label.endswith(args.show)]
                    done = subprocess.run([str(python), "-c", PLAYWRIGHT_WORKER, str(port), json.dumps([u for _, u in pages]),
                                           str(args.runs), json.dumps(shown)], capture_output=True, text=True, timeout=1800)
                    if done.returncode == 0:
                        theirs = json.loads(done.stdout.strip().splitlines()[-1])
                    else:
                        print(f"playwright run failed: {done.stderr[-600:]}")
            finally:
                run.stop()
            mcp = playwright_mcp_snapshots([u for _, u in pages])
    if isinstance(mcp, str):
        print(f"({mcp}: its column is missing)")
        mcp = {}
    rows = []
    for label, url in pages:
        m = mine[url]
        t = theirs.get(url)
        ours_median = median(m["samples"]) * 1000
        row = [label, ours_median, percentile(m["samples"], 95) * 1000, m["chars"], m["refs"], m["truncated"]]
        if t:
            theirs_median = median(t["samples"]) * 1000
            row += [theirs_median, percentile(t["samples"], 95) * 1000, t["chars"], ours_median / theirs_median,
                    m["chars"] / t["chars"]]
        else:
            row += ["-", "-", "-", "-", "-"]
        row += [mcp[url]["chars"], m["chars"] / mcp[url]["chars"]] if url in mcp else ["-", "-"]
        rows.append(row)
    print(f"read_page (default budget, 3000 tokens) vs Playwright aria_snapshot(mode='ai'); {args.runs} runs each, ms; "
          "mcp: the whole answer of Playwright MCP's browser_snapshot")
    print(table(["page", "ours med", "ours p95", "ours chars", "refs", "dropped", "pw med", "pw p95", "pw chars",
                 "time ours/pw", "size ours/pw", "mcp chars", "size ours/mcp"], rows))
    print(f"agreement with Chromium's accessibility tree on the {len(widgets)} widget pages: {agreed.summary()}")
    sized = [(mine[url]["chars"], theirs[url]["chars"]) for _, url in widgets if url in theirs]
    if sized:
        print(f"size on the widget pages, ours/pw: {sum(a for a, _ in sized) / sum(b for _, b in sized):.2f} "
              f"({sum(a for a, _ in sized)} vs {sum(b for _, b in sized)} chars)")
    for group, listed in (("widget", widgets), ("task", tasks), ("given", extra)):
        sized = [(mine[url]["chars"], mcp[url]["chars"]) for _, url in listed if url in mcp]
        if sized:
            print(f"size on the {group} pages, ours/Playwright MCP: {sum(a for a, _ in sized) / sum(b for _, b in sized):.2f} "
                  f"({sum(a for a, _ in sized)} vs {sum(b for _, b in sized)} chars)")
    if docs and pages[len(SIZES)][1] in theirs:
        url = pages[len(SIZES)][1]
        print(f"size on {REAL_PAGE}, ours/pw: {mine[url]['chars'] / theirs[url]['chars']:.2f}")
    if docs and pages[len(SIZES)][1] in mcp:
        url = pages[len(SIZES)][1]
        print(f"size on {REAL_PAGE}, ours/Playwright MCP: {mine[url]['chars'] / mcp[url]['chars']:.2f}")
    for label, url in pages if args.show else ():
        if label.endswith(args.show):
            print(f"\n--- ours: {label} ---\n{mine[url]['text']}")
            print(f"\n--- playwright: {label} ---\n{theirs.get(url, {}).get('text', '(not measured)')}")
            print(f"\n--- Playwright MCP: {label} ---\n{mcp.get(url, {}).get('text', '(not measured)')}")
    if not docs:
        print("(python3-doc is not installed and could not be: the real-document row is missing)")


if __name__ == "__main__":
    main()
