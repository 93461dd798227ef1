"""The demo's story, told through the host's control endpoint like any other client: point the
engine at the replay model, mark the bank as sensitive, run one turn from the shop tab, answer
its approval (by flag or by asking), then print and check the audit trail."""

from __future__ import annotations

import asyncio
import sys
import threading
from dataclasses import dataclass

from host.control.client import ControlClient
from host.demo.replay_model import MODEL_ID, ReplayModel
from host.demo.sites import LocalSite
from host.demo.trail import missing_steps
from host.repl import render
from host.repl.chat import EventPrinter, engine_op, follow
from host.repl.style import Style

PROVIDER = "demo-replay"
KEY_ENV = "TABWARDEN_DEMO_REPLAY_KEY"  # the replay server ignores it; the provider wants one
TASK = "Read the tea shop page, sign me up for its newsletter, then show me my bank balance."
ANSWERS = {"a": "accept", "accept": "accept", "y": "accept", "yes": "accept", "d": "decline", "decline": "decline",
           "n": "decline", "no": "decline", "": "decline"}


@dataclass
class Stage:
    shop: LocalSite
    bank: LocalSite
    model: ReplayModel
    approve: str  # accept | decline | ask


async def tell(pid: int, stage: Stage, style: Style) -> int:
    """Run the story against the host with `pid`; returns the exit code (0: the trail is complete)."""
    client = await ControlClient.connect(pid=pid, client="demo")
    try:
        await client.call("engine.set_provider", name=PROVIDER, kind="openai", base_url=stage.model.base_url,
                          model=MODEL_ID, api_key_env=KEY_ENV)
        await client.call("gatekeeper.add_origin", pattern=stage.bank.origin, list="blocked")
        print(f"marked the demo bank {stage.bank.origin} as a sensitive origin", flush=True)
        tab = await _tab_showing(client, stage.shop.url)
        created = await engine_op(client, {"type": "thread.create", "title": "Tabwarden demo",
                                           "permissionPolicy": "untrusted"})
        thread = created["threadId"]
        print(f"\nuser: {TASK}", flush=True)
        submit = engine_op(client, {"type": "turn.submit", "threadId": thread, "input": {
            "text": TASK, "browserContext": {"defaultTab": {"tabId": tab, "url": stage.shop.url}}}})
        printer = EventPrinter(thread, style, answer_hint=False)
        outcome = await follow(client, thread, style, start=submit, printer=printer)
        decisions = []
        while outcome.get("state") == "approval":
            kind = await _answer(stage.approve)
            decisions.append(kind)
            answer = client.call("engine.answer", approval_id=outcome["approvalId"], kind=kind)
            outcome = await follow(client, thread, style, start=answer, printer=printer)
        if outcome.get("state") != "complete":
            print(f"the turn did not complete: {outcome}", flush=True)
            return 1
        rows = await client.call("gatekeeper.audit", last=200, thread_id=thread)
        print("\naudit trail (every decision, approval and outcome of the demo thread):", flush=True)
        print(render.audit_rows(rows, style), flush=True)
        missing = missing_steps(rows, approved=decisions == ["accept"])
        if missing:
            print("\nthe trail is missing: " + "; ".join(missing), flush=True)
            return 1
        print("\ndemo complete: the page was read, the form "
              f"{'was filled after your approval' if decisions == ['accept'] else 'was left alone'}, "
              "and the sensitive bank origin was refused.", flush=True)
        return 0
    finally:
        await client.close()


async def _tab_showing(client: ControlClient, url: str) -> int:
    for _ in range(100):
        for tab in await client.call("browser.tabs"):
            if tab.get("url") == url and tab.get("status") == "complete":
                return int(tab["id"])
        await asyncio.sleep(0.1)
    raise RuntimeError(f"the browser never showed {url}")


async def _answer(mode: str) -> str:
    if mode != "ask":
        print(f"(answered by --approve {mode})", flush=True)
        return mode
    while True:
        reply = await _read_line("Allow it? [a]ccept / [d]ecline: ")
        kind = ANSWERS.get(reply.strip().lower())
        if kind is not None:
            return kind
        print("please answer a (accept) or d (decline)", file=sys.stderr, flush=True)


async def _read_line(prompt: str) -> str:
    # A daemon thread, not the loop's executor: after Ctrl-C the process must not wait for a
    # line nobody will type (executor threads are joined at exit).
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = input(prompt)
        except EOFError:
            line = ""
        loop.call_soon_threadsafe(lambda: answer.done() or answer.set_result(line))

    threading.Thread(target=read, name="demo-answer", daemon=True).start()
    return await answer


def run_story(pid: int, stage: Stage, style: Style) -> int:
    """Blocking wrapper for `launch`: it calls this where it would open the REPL."""
    return asyncio.run(tell(pid, stage, style))
