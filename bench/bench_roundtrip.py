"""Round trips through a real headless Chromium: host -> service worker -> host, and
host -> service worker -> content script -> host, median and p95 of 200 each (measured inside
the host). The worker round trip is the anchor for the content-script one."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from bench.common import median, percentile, table
from tests.support.browser import BrowserRun
from tests.support.hosts import attach, tabwarden_home
from tests.support.pages import PageServer

N = 200


async def measure() -> list[tuple]:
    control = await attach(client="bench")
    try:
        tabs = await control.call("browser.tabs")
        tab = next(t for t in tabs if t.get("url", "").endswith("/hello.html"))
        await control.call("diag.roundtrip", n=20, tab_id=tab["id"])  # warm up: inject the content script
        worker = (await control.call("diag.roundtrip", n=N))["samples"]
        content = (await control.call("diag.roundtrip", n=N, tab_id=tab["id"]))["samples"]
        big = (await control.call("diag.payload", size=3 * 1024 * 1024))
    finally:
        await control.close()
    anchor = median(worker)
    rows = [
        ("host -> worker -> host", median(worker) * 1000, percentile(worker, 95) * 1000, 1.0),
        ("host -> worker -> content script -> host", median(content) * 1000, percentile(content, 95) * 1000,
         median(content) / anchor),
    ]
    return rows, big["seconds"], big["match"]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, PageServer() as pages:
        run = BrowserRun(Path(tmp), host_permissions=["http://127.0.0.1/*"], start_url=pages.url("hello.html"))
        run.prepare()
        run.start()
        try:
            with tabwarden_home(run.tw_home):
                rows, seconds, match = asyncio.run(measure())
        finally:
            run.stop()
    print(f"Native-messaging round trips in headless Chromium, {N} each (anchor: the worker round trip)")
    print(table(("path", "median ms", "p95 ms", "x anchor"), rows))
    print(f"3 MiB host -> extension in chunks, digest checked by the extension: {seconds * 1000:.1f} ms, match={match}")


if __name__ == "__main__":
    main()
