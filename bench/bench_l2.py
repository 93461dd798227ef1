"""L2 through the debugger bridge: `read_page_deep` of the 5,000-element fixture page end to end
(control socket -> host -> extension -> chrome.debugger -> result), and CDP round trips through
the bridge against a direct websocket CDP connection to the same browser and tab
(`--remote-debugging-port`), interleaved in the same run.

Bridge figures are taken from the control socket, so they include its round trip; the
`browser.debugger` row (answered by the host alone) measures that part, and the last column
subtracts it. The anchor of the ratio column is the direct websocket.

    python -m bench.bench_l2 [--runs N] [--reads N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Awaitable, Callable

import websockets

from bench.common import median, percentile, table
from tests.support.browser import BrowserRun
from tests.support.browser_tools import hooks_enabled
from tests.support.cdp import debugging_port
from tests.support.hosts import attach, tabwarden_home
from tests.support.pages import FIXTURES, PageServer


CALL_TIMEOUT = 60.0


class Direct:
    """A plain websocket CDP client on one page target."""

    def __init__(self, ws: Any):
        self.ws = ws
        self.ids = itertools.count(1)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        msg_id = next(self.ids)
        await self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        while True:
            reply = json.loads(await self.ws.recv())
            if reply.get("id") == msg_id:
                return reply.get("result")


async def _timed(samples: list[float], call: Callable[[], Awaitable[Any]]) -> Any:
    loop = asyncio.get_running_loop()
    started = loop.time()
    # A stuck call fails the benchmark loudly instead of hanging it.
    result = await asyncio.wait_for(call(), CALL_TIMEOUT)
    samples.append(loop.time() - started)
    return result


async def measure(url: str, profile: Path, runs: int, reads: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    control = await attach(client="bench", timeout=30)
    samples: dict[str, list[float]] = {k: [] for k in ("deep", "read_page", "bridge_rt", "direct_rt", "control_rt",
                                                       "bridge_shot", "direct_shot", "direct_ax")}
    facts: dict[str, Any] = {}
    base = {"thread_id": "bench", "policy": "auto"}
    try:
        tab = (await control.call("tools.call", tool="tab_open", params={"url": url}, **base))["tabId"]
        port = debugging_port(profile)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as response:
            target = next(t for t in json.load(response) if t.get("type") == "page" and t.get("url") == url)
        async with websockets.connect(target["webSocketDebuggerUrl"], max_size=256 * 1024 * 1024) as ws:
            direct = Direct(ws)
            # The tab was opened in the background, and a hidden tab draws no frame for a capture
            # to wait for: bring it to the front so the direct capture works as is.
            await direct.send("Page.bringToFront")
            for _ in range(reads + 1):
                deep = await _timed(samples["deep"], lambda: control.call("tools.call", tool="read_page_deep",
                                                                           params={"tabId": tab}, **base))
                assert deep["ok"], deep
                await _timed(samples["read_page"], lambda: control.call("tools.call", tool="read_page",
                                                                        params={"tabId": tab}, **base))
                await _timed(samples["direct_ax"], lambda: direct.send("Accessibility.getFullAXTree"))
                facts = {"refs": deep["details"]["refCount"], "listenerCandidates": deep["details"]["listenerCandidates"],
                         "chars": len(deep["text"])}
            evaluate = {"expression": "1 + 1", "returnByValue": True}
            for _ in range(runs + 3):  # interleaved: both paths see the same machine state
                await _timed(samples["bridge_rt"], lambda: control.call("test.cdp", tab_id=tab, command="Runtime.evaluate",
                                                                        params=evaluate))
                await _timed(samples["direct_rt"], lambda: direct.send("Runtime.evaluate", evaluate))
                await _timed(samples["control_rt"], lambda: control.call("browser.debugger", tab_id=tab))
            for _ in range(reads + 1):
                shot = await _timed(samples["bridge_shot"], lambda: control.call(
                    "tools.call", tool="screenshot", params={"tabId": tab, "target": "viewport"}, **base))
                assert shot["ok"], shot
                await _timed(samples["direct_shot"], lambda: direct.send("Page.captureScreenshot", {"format": "png"}))
    finally:
        await control.close()
    warm = {"bridge_rt": 3, "direct_rt": 3, "control_rt": 3}
    return {k: v[warm.get(k, 1):] for k, v in samples.items()}, facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="round trips per path")
    parser.add_argument("--reads", type=int, default=10, help="deep reads and screenshots")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, PageServer(FIXTURES) as pages, hooks_enabled():
        run = BrowserRun(Path(tmp) / "run", host_permissions=["http://127.0.0.1/*"])
        run.prepare()
        run.start()
        try:
            with tabwarden_home(run.tw_home):
                samples, facts = asyncio.run(measure(pages.url("l2/big.html"), run.profile, args.runs, args.reads))
        finally:
            run.stop()
    ms = {k: [s * 1000 for s in v] for k, v in samples.items()}
    control = median(ms["control_rt"])
    direct = median(ms["direct_rt"])
    print(f"read_page_deep of l2/big.html (5,000 elements: {facts['refs']} refs, {facts['listenerCandidates']} "
          f"listener candidates, {facts['chars']} characters shown), {args.reads} runs, ms; anchor read_page (L1)")
    anchor = median(ms["read_page"])
    print(table(["call", "median", "p95", "x read_page"], [
        ("read_page_deep", median(ms["deep"]), percentile(ms["deep"], 95), median(ms["deep"]) / anchor),
        ("read_page", anchor, percentile(ms["read_page"], 95), 1.0),
        ("getFullAXTree alone (direct websocket)", median(ms["direct_ax"]), percentile(ms["direct_ax"], 95),
         median(ms["direct_ax"]) / anchor),
    ]))
    print()
    print(f"CDP Runtime.evaluate round trip, {args.runs} interleaved runs per path, ms; anchor the direct websocket")
    rows = [
        ("direct websocket", direct, percentile(ms["direct_rt"], 95), 1.0, direct),
        ("bridge (via control socket)", median(ms["bridge_rt"]), percentile(ms["bridge_rt"], 95),
         median(ms["bridge_rt"]) / direct, median(ms["bridge_rt"]) - control),
        ("control socket alone", control, percentile(ms["control_rt"], 95), control / direct, 0.0),
    ]
    print(table(["path", "median", "p95", "x direct", "minus control"], rows))
    print()
    print(f"viewport screenshot (PNG), {args.reads} runs, ms: the screenshot tool through the bridge vs "
          "Page.captureScreenshot on the direct websocket")
    print(table(["path", "median", "p95", "x direct"], [
        ("direct websocket", median(ms["direct_shot"]), percentile(ms["direct_shot"], 95), 1.0),
        ("screenshot tool (bridge)", median(ms["bridge_shot"]), percentile(ms["bridge_shot"], 95),
         median(ms["bridge_shot"]) / median(ms["direct_shot"])),
    ]))


if __name__ == "__main__":
    main()
