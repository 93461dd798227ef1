"""A thread held away from site B (by a scope lock on A, or by B on the blocked list), calling
tools through a real host as the agent would, and what the tests look at afterwards: B's request
log, the call's result and the audit."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.browser import BrowserRun
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.hosts import attach, tabwarden_home, write_settings
from tests.support.scripted_site import Site
from tests.support.waiting import until

MODES = ("lock", "blocked")


@dataclass
class Env:
    """A browser run with two sites: A, which a thread may reach, and B, which it may not."""

    run: BrowserRun
    a: Site
    b: Site
    model: FakeOpenAI  # the host's tools of its own (download) run only in a conversation
    a_host: str = "127.0.0.1"  # the names the browser reaches them by
    b_host: str = "127.0.0.1"

    @property
    def a_origin(self) -> str:
        return f"http://{self.a_host}:{self.a.port}"

    @property
    def b_origin(self) -> str:
        return f"http://{self.b_host}:{self.b.port}"


class Thread:
    """One engine thread denied B (by a scope lock on A, or by B on the blocked list), calling
    tools as the agent would."""

    def __init__(self, env: Env, control: Any, mode: str, b_origin: str):
        self.env, self.control, self.mode, self.b_origin = env, control, mode, b_origin
        self.thread_id = ""

    async def op(self, **op: Any) -> dict:
        return await self.control.call("engine.op", op={"submissionId": uuid.uuid4().hex, **op})

    async def start(self) -> "Thread":
        self.thread_id = (await self.op(type="thread.create", permissionPolicy="auto"))["threadId"]
        if self.mode == "lock":
            await self.op(type="scope.setLock", threadId=self.thread_id, patterns=[self.env.a_origin])
        else:
            await self.control.call("gatekeeper.add_origin", pattern=self.b_origin, list="blocked")
        self.env.b.requests.clear()
        return self

    async def stop(self) -> None:
        if self.mode == "blocked":
            await self.control.call("gatekeeper.remove_origin", pattern=self.b_origin, list="blocked")
        await self.control.call("browser.end_turn", thread_id=self.thread_id)

    async def call(self, tool: str, **params: Any) -> dict:
        return await self.control.call("tools.call", tool=tool, params=params, thread_id=self.thread_id, policy="auto")

    async def in_turn(self, tool: str, **params: Any) -> dict:
        """The result of one call the model makes in a turn of this thread (for the host's own
        tools, which run only in conversations)."""
        events: list[dict] = []
        self.control.listen(lambda event: events.append(event.data) if event.topic == "engine" else None)
        await self.control.call("host.subscribe", topics=["engine"])
        self.env.model.replies.clear()
        self.env.model.add(Reply(tool_calls=[(tool, params)]), Reply(text="Done."))
        # The user names the address: what is judged here is the guard, not where the URL came from.
        said = f"please {tool} {params.get('url', '')}".strip()
        await self.op(type="turn.submit", threadId=self.thread_id, input={"text": said})

        def result() -> dict | None:
            return next((e["result"] for e in events if e.get("type") == "item.complete"
                         and e.get("threadId") == self.thread_id and "tool-call:" in e.get("itemId", "")), None)

        found = await until(result, 60, f"the result of {tool} in a turn", interval=0.05)
        await until(lambda: any(e.get("type") == "turn.complete" and e.get("threadId") == self.thread_id
                                for e in events), 30, "the turn to end", interval=0.05)
        return found

    async def open(self, path: str) -> tuple[int, str]:
        """Open one of A's pages in a new tab, make it the thread's, and read it."""
        opened = await self.call("tab_open", url=f"{self.env.a_origin}{path}?v={uuid.uuid4().hex[:8]}")
        assert opened["ok"], opened
        await self.control.call("browser.bind_target", thread_id=self.thread_id, tab_id=opened["tabId"])
        page = await self.call("read_page")
        assert page["ok"], page
        return opened["tabId"], page["text"]

    async def outcomes(self) -> list[dict]:
        rows = await self.control.call("gatekeeper.audit", thread_id=self.thread_id, last=200)
        return [r for r in rows if r.get("kind") == "outcome"]

    async def wait_blocked(self) -> None:
        """Until the audit has the guard's block (for what a page does after a result)."""
        async def audited() -> bool:
            return any(r["tool_outcome"] == "navigation_blocked" for r in await self.outcomes())

        await until(audited, 10, "the navigation to be blocked", interval=0.05)

    def assert_denied_unsent(self, result: dict) -> None:
        """The call was refused before anything was sent: the read showed where the element leads,
        and the gatekeeper judged that destination (B's origin), not only the tab's."""
        assert self.env.b.requests == [], self.env.b.requests
        assert not result["ok"] and result["error"]["code"] == "denied", result
        details = result["error"]["details"]
        assert details["dispatched"] is False and details["reasonCode"] in ("scope_lock", "sensitive_origin"), details
        assert self.b_origin in result["error"]["message"], result["error"]["message"]

    async def assert_blocked(self, *results: dict, where: str = "") -> None:
        """B got no request; one of `results` is the `navigation_blocked` report naming B; the
        audit names B's origin."""
        assert self.env.b.requests == [], self.env.b.requests
        assert results, "no result to look at"
        named = [r for r in results if "navigation_blocked" in r["text"] and self.b_origin in r["text"]]
        assert named, [r["text"] for r in results]
        if where:
            assert any(where in r["text"] for r in named), [r["text"] for r in named]

        async def audited() -> list[dict]:
            return [r for r in await self.outcomes()
                    if r["tool_outcome"] == "navigation_blocked" and r["target_origin"] == self.b_origin]

        assert await until(audited, 5, lambda: f"an audit outcome naming {self.b_origin}", interval=0.1)


@contextmanager
def running(run: BrowserRun, a: Site, b: Site, model: FakeOpenAI, **names: str) -> Iterator[Env]:
    """Start `run` (its host talking to `model`) and yield the Env of sites A and B (`names`:
    `a_host`, `b_host`, when the browser reaches them by name); the browser's and the host's
    logs are printed when the module fails."""
    run.prepare()
    write_settings(run.tw_home, model.url)
    run.start()
    with tabwarden_home(run.tw_home):
        try:
            yield Env(run, a, b, model, **names)
        except BaseException:
            print(run.diagnostics())
            raise
        finally:
            run.stop()


@asynccontextmanager
async def held_thread(env: Env, mode: str, b_origin: str | None = None) -> AsyncIterator[Thread]:
    """A new thread held away from B (`mode`: "lock" or "blocked"), released afterwards."""
    control = await attach(timeout=30)
    made = await Thread(env, control, mode, b_origin or env.b_origin).start()
    try:
        yield made
    finally:
        await made.stop()
        await control.close()
