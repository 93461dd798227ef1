"""Engine overhead per tool call, and the restore time of a 1,000-node thread.

    python -m bench.bench_engine [--calls N] [--quick]

Overhead per tool call: one turn in which the model asks for N tool calls, one after another.
The model is an in-process provider that answers at once, and the tool returns at once, so
what is timed between the end of one model answer and the start of the next model call is the
engine's own work: storing the answer, validating and resolving the call, two gatekeeper
checks (with their audit rows), the durable dispatch mark, the result node, events, and the
prompt rebuilt from the store. Time spent inside the tool is subtracted. Measured for an
allowed call and for a call that asks (answered by the UI as soon as it is asked).

Restore: a thread of 1,000 nodes (250 tool round trips with page-sized results) on disk, then a
fresh engine over the file: start-up (migrations, epoch, recovery scan), the UI snapshot of the
thread, and the prompt rebuilt from its branch.

Anchor: one committed SQLite write transaction (WAL) on the same disk, measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import median, percentile, table


class InstantModel:
    """A provider that answers from a script with no network and no delay, noting the time
    each answer ends and each call starts."""

    name = "instant"
    model = "instant-1"
    kind = "openai"

    def __init__(self, calls: int, tool: tuple[str, dict[str, Any]]):
        self.remaining = calls
        self.tool = tool
        self.answered: list[float] = []
        self.started: list[float] = []

    async def stream(self, request):
        from host.providers.model import Completion, ProviderCall, Usage

        self.started.append(time.perf_counter())
        if self.remaining > 0:
            self.remaining -= 1
            name, params = self.tool
            import json

            completion = Completion("", (ProviderCall(f"p{self.remaining}", name, json.dumps(params)),), "tool_use",
                                    Usage(10, 5))
        else:
            completion = Completion("done", (), "end", Usage(10, 5))
        self.answered.append(time.perf_counter())
        yield completion

    async def aclose(self) -> None:
        return None


class Providers:
    def __init__(self, model: InstantModel):
        self.model = model

    def get(self, connection_id=None):
        return self.model

    def settings(self):
        from host.providers.config import parse_config

        return parse_config({})

    def settings_file(self):
        return None  # settings given in code, as a loader's are

    async def close(self) -> None:
        return None


def timed_browser():
    """A stand-in browser service that answers at once, timing what happens inside the tool."""
    from host.calls.service import ToolService
    from host.tools.call import Target
    from host.tools.result import ToolResult

    class TimedBrowser(ToolService):
        def __init__(self):
            self.tool_time: list[float] = []

        def offers(self, spec):
            return spec.name in ("read_page", "click")

        async def resolve(self, call):
            ref = getattr(call.params, "ref", None)
            return call.resolved(Target(origin="https://shop.example", tab_id=7, site_access=True,
                                        line='- button "Buy" [ref=s1_1_2]' if ref else None))

        async def run(self, call, runner):
            entered = time.perf_counter()
            result = ToolResult(ok=True, tool=call.tool, text=f"[tabId=7] {call.tool} done\n- button \"Buy\" "
                                                              "[ref=s1_1_2]", tab_id=7)
            self.tool_time.append(time.perf_counter() - entered)
            return result

    return TimedBrowser()


async def _overhead(folder: Path, calls: int, *, ask: bool) -> list[float]:
    from host.calls.router import Router
    from host.engine.engine import Engine
    from host.gatekeeper.service import Gatekeeper
    from host.store import Store
    from host.ui.client import Client
    from host.ui.commands import Commands

    store = Store(folder / "overhead.sqlite3")
    gatekeeper = Gatekeeper(store, user_policy=folder / "none.json", managed_policy=folder / "none2.json",
                            burst_threshold=10 ** 6)
    tool = ("click", {"ref": "s1_1_2", "element": "Buy"}) if ask else ("read_page", {"maxTokens": 100})
    model = InstantModel(calls, tool)
    executor = timed_browser()
    engine = Engine(store, gatekeeper, Router({"browser": executor}), providers=Providers(model), coalesce_s=0.0)
    commands = Commands(engine)
    done = asyncio.Event()
    answers: list[Any] = []
    client = Client(answers.append, key="bench")

    def sink(event, thread_id):
        kind = type(event).__name__
        if kind == "ApprovalRequest":
            asyncio.get_running_loop().call_soon(lambda: asyncio.ensure_future(commands.handle(client, {
                "type": "approval.response", "submissionId": event.approval_id, "approvalId": event.approval_id,
                "decision": {"kind": "accept"}})))
        elif kind == "TurnComplete":
            done.set()

    engine.bus.add_sink(sink)
    await engine.start()
    await commands.handle(client, {"type": "thread.create", "submissionId": "t"})
    while not answers:
        await asyncio.sleep(0)
    thread = answers[0].thread_id
    await commands.handle(client, {"type": "turn.submit", "submissionId": "s", "threadId": thread,
                                   "input": {"text": "go"}})
    await asyncio.wait_for(done.wait(), 600)
    await commands.close()
    await engine.close()
    store.close()
    gaps = [start - end for end, start in zip(model.answered, model.started[1:])]
    return [gap - tool for gap, tool in zip(gaps, executor.tool_time)]


def _build_thread(path: Path, nodes: int) -> str:
    from host.engine.records import AssistantBody, CallRef, ToolCallBody, ToolResultBody, UserBody
    from host.engine.store import EngineStore
    from host.store import Store

    store = Store(path)
    engine_store = EngineStore(store)
    page = ("- button \"Add to cart\" [ref=s1ab_3_7]\n- text: \"A fairly ordinary product description line\"\n" * 8)
    with engine_store.transaction() as conn:
        thread = engine_store.create_thread(conn, title="big")
        engine_store.append_node(conn, thread.id, "user_message", UserBody(text="Compare prices"), turn_id="T")
        made = 1
        step = 0
        while made < nodes - 1:
            step += 1
            call = CallRef(id=f"call_{step}", name="read_page", arguments={"maxTokens": 1000})
            bodies = [
                ("assistant_message", AssistantBody(text=f"Step {step}", calls=[call], step=step)),
                ("tool_call", ToolCallBody(call_id=call.id, tool="read_page", params={"maxTokens": 1000}, step=step)),
                ("tool_result", ToolResultBody(call_id=call.id, tool="read_page", ok=True, text=page, outcome="ok",
                                               trust="untrusted", provenance="page", origin="https://shop.example")),
            ]
            for kind, body in bodies:
                if made >= nodes - 1:
                    break
                engine_store.append_node(conn, thread.id, kind, body, turn_id="T")
                made += 1
        engine_store.append_node(conn, thread.id, "assistant_message", AssistantBody(text="done", step=step + 1),
                                 turn_id="T")
    store.close()
    return thread.id


def _restore(path: Path, thread_id: str, repeats: int) -> dict[str, list[float]]:
    from host.calls.router import Router
    from host.engine.engine import Engine
    from host.engine.prompt import build_messages
    from host.gatekeeper.service import Gatekeeper
    from host.store import Store

    out: dict[str, list[float]] = {"start": [], "snapshot": [], "prompt": [], "total": []}

    async def once() -> None:
        began = time.perf_counter()
        store = Store(path)
        engine = Engine(store, Gatekeeper(store, user_policy=path.with_suffix(".u"), managed_policy=path.with_suffix(".m")),
                        Router({"browser": timed_browser()}), providers=Providers(InstantModel(0, ("read_page", {}))))
        await engine.start()
        started = time.perf_counter()
        snapshot = engine.thread_snapshot(thread_id)
        snapped = time.perf_counter()
        messages = build_messages(engine.store.path(thread_id), engine.fence_key)
        built = time.perf_counter()
        assert len(snapshot.nodes) == 1000 and messages
        out["start"].append(started - began)
        out["snapshot"].append(snapped - started)
        out["prompt"].append(built - snapped)
        out["total"].append(built - began)
        await engine.close()
        store.close()

    for _ in range(repeats):
        asyncio.run(once())
    return out


def _anchor(folder: Path, n: int) -> list[float]:
    from host.store import Store

    store = Store(folder / "anchor.sqlite3")
    store.execute("CREATE TABLE IF NOT EXISTS anchor (n INTEGER)")
    samples = []
    for i in range(n):
        started = time.perf_counter()
        with store.transaction() as conn:
            conn.execute("INSERT INTO anchor (n) VALUES (?)", (i,))
        samples.append(time.perf_counter() - started)
    store.close()
    return samples


def main(argv: list[str] | None = None) -> None:
    import logging
    import os
    import sys

    parser = argparse.ArgumentParser(prog="python -m bench.bench_engine")
    parser.add_argument("--calls", type=int, default=200, help="tool calls per measured turn (default 200)")
    parser.add_argument("--quick", action="store_true", help="fewer calls and repeats")
    if argv is None:  # `python -m bench` calls main() with its own command line
        argv = sys.argv[1:] if __name__ == "__main__" else []
    args = parser.parse_args(argv)
    calls = 40 if args.quick else args.calls
    repeats = 3 if args.quick else 10
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="tw-bench-engine-") as tmp:
        folder = Path(tmp)
        os.environ["TABWARDEN_HOME"] = str(folder / "home")
        anchor = median(_anchor(folder, 300))
        for name in ("allowed", "asked"):
            (folder / name).mkdir()
        allowed = asyncio.run(_overhead(folder / "allowed", calls, ask=False))
        asked = asyncio.run(_overhead(folder / "asked", calls, ask=True))
        big = folder / "big.sqlite3"
        thread_id = _build_thread(big, 1000)
        restore = _restore(big, thread_id, repeats)
    ms = 1000.0
    rows = [
        ("tool call overhead, allowed", len(allowed), median(allowed) * ms, percentile(allowed, 95) * ms,
         median(allowed) / anchor),
        ("tool call overhead, asked + accepted", len(asked), median(asked) * ms, percentile(asked, 95) * ms,
         median(asked) / anchor),
        ("restore 1,000 nodes: engine start", repeats, median(restore["start"]) * ms,
         percentile(restore["start"], 95) * ms, median(restore["start"]) / anchor),
        ("restore 1,000 nodes: UI snapshot", repeats, median(restore["snapshot"]) * ms,
         percentile(restore["snapshot"], 95) * ms, median(restore["snapshot"]) / anchor),
        ("restore 1,000 nodes: prompt rebuild", repeats, median(restore["prompt"]) * ms,
         percentile(restore["prompt"], 95) * ms, median(restore["prompt"]) / anchor),
        ("restore 1,000 nodes: total", repeats, median(restore["total"]) * ms, percentile(restore["total"], 95) * ms,
         median(restore["total"]) / anchor),
    ]
    print(table(("measure", "n", "median ms", "p95 ms", "x anchor"), rows))
    print(f"anchor: one committed SQLite WAL write transaction, median {anchor * ms:.3f} ms")


if __name__ == "__main__":
    main()
