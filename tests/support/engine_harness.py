"""An in-process engine for tests: a real Store and Gatekeeper in a temp folder, a fake model
server over real HTTP, and a scripted browser service (`FakeExecutor`) standing in for the browser."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from host.engine.engine import Engine
from host.engine.provider_source import ProviderSource
from host.engine.views import to_wire
from host.gatekeeper.service import Gatekeeper
from host.providers.config import parse_config
from host.calls.router import Router
from host.calls.service import ToolService
from host.store import Store
from host.tools.call import Target, ToolCall
from host.tools.failure import ToolFailure
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec
from host.ui.client import Client
from host.ui.commands import Commands
from tests.support.fake_snapshot import ref_line
from tests.support.waiting import until

ORIGIN = "https://shop.example"
SCHEMA = {"type": "object"}


def outcome(*, ok: bool, text: str, code: str | None = None, tab_id: int | None = None,
            details: dict[str, Any] | None = None) -> ToolResult:
    """A scripted result (`code` is the failure's)."""
    error = ToolFailure(code, text).info() if code is not None else None
    return ToolResult(ok=ok, tool="scripted", text=text, tab_id=tab_id, error=error, details=details or {})


@dataclass
class FakeExecutor(ToolService):
    """The browser as a router service, running `read_page`, `click`, `type`, `navigate`,
    `extract` and `tabs_list` from a script.

    `results[tool]` is a text or a function(params) -> ToolResult; `gate` (when set) makes a
    run wait after it was authorised, so a test can interrupt a running tool."""

    origin: str = ORIGIN
    results: dict[str, Any] = field(default_factory=dict)
    executed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    prepared: list[str] = field(default_factory=list)
    gate: asyncio.Event | None = None
    running: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: int = 0
    site_access: bool | None = True
    bound: list[tuple[str, int | None, bool]] = field(default_factory=list)
    # Changes the origin seen at dispatch (target drift between approval and dispatch).
    dispatch_origin: str | None = None
    # Where the acted-on element leads ({"url", "method"?}), as the page executor would report it.
    destinations: list[dict[str, Any]] = field(default_factory=list)
    _holding: int = 0

    def offers(self, spec: ToolSpec) -> bool:
        return spec.name in TOOLS

    async def resolve(self, call: ToolCall) -> ToolCall:
        params = call.wire_params()
        dispatching = self._holding > 0
        if not dispatching:
            self.prepared.append(call.tool)
        if call.tool == "tabs_list":
            return call.resolved(Target())
        origin = self.dispatch_origin if dispatching and self.dispatch_origin is not None else self.origin
        ref = params.get("ref")
        return call.resolved(Target(
            origin=origin, tab_id=7, facts=self._facts(ref),
            line=ref_line("button", "Buy", ref) if ref else None, site_access=self.site_access))

    def _facts(self, ref: Any) -> dict[str, Any] | None:
        facts: dict[str, Any] = {"input_type": "password"} if ref == "s1_1_9" else {}
        if ref:  # the element its line shows, as the host's ref map describes one
            facts["hints"] = [{"ref": ref, "role": "button", "name": "Buy"}]
        if ref and self.destinations:
            facts["destinations"] = list(self.destinations)
        return facts or None

    @contextlib.asynccontextmanager
    async def hold(self, call: ToolCall):
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        params = call.wire_params()
        self.executed.append((call.tool, params))
        self.running.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        script = self.results.get(call.tool, f"{call.tool} done")
        if callable(script):
            return script(params)
        return ToolResult(ok=True, tool=call.tool, text=f"[tabId=7] {script}", tab_id=7)

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        self.bound.append((thread_id, tab_id, bound))


TOOLS = ("read_page", "click", "type", "navigate", "extract", "tabs_list")


def router(browser: FakeExecutor, **services: ToolService) -> Router:
    """A router over the fake browser (and any other services)."""
    return Router({"browser": browser, **services})


class Recorder:
    """Collects every engine event as wire JSON, and the direct answers to ops."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    def sink(self, event: Any, thread_id: str | None) -> None:
        self.events.append(to_wire(event))
        self.changed.set()

    def of(self, event_type: str, **match: Any) -> list[dict[str, Any]]:
        """The recorded events of `event_type` whose fields match `match`."""
        return [e for e in self.events if e["type"] == event_type and all(e.get(k) == v for k, v in match.items())]

    async def wait_for(self, event_type: str, count: int = 1, timeout: float = 20.0, **match: Any) -> dict[str, Any]:
        """The `count`-th event of `event_type` (matching fields), waiting for it."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = self.of(event_type, **match)
            if len(found) >= count:
                return found[count - 1]
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                kinds = [e["type"] for e in self.events[-30:]]
                raise AssertionError(f"no {event_type} #{count} {match or ''}; last events: {kinds}")
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass


class Harness:
    """One engine and its op server (built as the host wires them) over `folder`; `restart()`
    makes a new engine over the same files."""

    def __init__(self, folder: Path, model_url: str, *, kind: str = "openai", approval_timeout_s: float = 300.0,
                 executor: FakeExecutor | None = None, budget: int | None = None, clock: Callable[[], float] | None = None,
                 services: dict[str, ToolService] | None = None, provider_options: dict[str, Any] | None = None):
        self.folder = folder
        self.provider_options = provider_options or {}  # more engine.json settings of the provider
        self.settings_extra: dict[str, Any] = {}  # more engine.json settings (userDetails...)
        self.model_url = model_url
        self.kind = kind
        self.approval_timeout_s = approval_timeout_s
        self.executor = executor or FakeExecutor()
        self.services = services or {}  # beside the fake browser (built-ins, MCP servers)
        self.budget = budget
        self.clock = clock
        self.engine: Engine | None = None
        self.commands: Commands | None = None
        self.recorder = Recorder()
        self.answers: list[dict[str, Any]] = []
        self._ids = 0

    def settings(self):
        data: dict[str, Any] = {"providers": {"fake": {"kind": self.kind, "baseUrl": self.model_url, "model": "m-1",
                                                      "maxRetries": 0, **self.provider_options}}}
        if self.budget is not None:
            data["turnTokenBudget"] = self.budget
        return parse_config({**data, **self.settings_extra})

    async def start(self) -> Engine:
        """Build the store, gatekeeper, engine and op server over the folder; start the engine."""
        import time

        self.store = Store(self.folder / "db.sqlite3")
        self.gatekeeper = Gatekeeper(self.store, user_policy=self.folder / "user.json",
                                     managed_policy=self.folder / "managed.json",
                                     on_alert=lambda alert: self.engine.on_alert(alert) if self.engine else None)
        self.gatekeeper.bind_browser_session("session-test")
        self.engine = Engine(self.store, self.gatekeeper, self.router(), providers=ProviderSource(self.settings),
                             approval_timeout_s=self.approval_timeout_s, clock=self.clock or time.time,
                             coalesce_s=0.005)
        self.commands = Commands(self.engine)
        self.recorder = Recorder()
        self.engine.bus.add_sink(self.recorder.sink)
        self.client = Client(self.answers.append, key="test", everything=True)
        self.connect(self.engine)
        await self.engine.start()
        return self.engine

    def router(self) -> Router:
        """The engine's tools: the fake browser (subclasses add services)."""
        return router(self.executor, **self.services)

    def connect(self, engine: Engine) -> None:
        """Link services to the engine before it starts (subclasses with built-ins do)."""

    async def stop(self) -> None:
        """Close the op server, the engine and the store."""
        if self.commands is not None:
            await self.commands.close()
            self.commands = None
        if self.engine is not None:
            await self.engine.close()
            self.engine = None
        self.store.close()

    async def restart(self) -> Engine:
        """Stop, then start a new engine over the same files."""
        await self.stop()
        return await self.start()

    def sid(self) -> str:
        self._ids += 1
        return f"s{self._ids}"

    async def op(self, op: dict[str, Any]) -> dict[str, Any]:
        """Send an op; return its direct answer (ack, rejection, snapshot...)."""
        op = {"submissionId": self.sid(), **op}
        before = len(self.answers)
        await self.commands.handle(self.client, op)
        await until(lambda: len(self.answers) > before, 10, f"an answer to {op['type']}", interval=0.005)
        return to_wire(self.answers[before])

    async def new_thread(self, **fields: Any) -> str:
        """Create a thread (extra op fields as given); returns its id."""
        ack = await self.op({"type": "thread.create", **fields})
        assert ack["type"] == "command.ack", ack
        return ack["threadId"]

    async def submit(self, thread_id: str, text: str, **fields: Any) -> dict[str, Any]:
        """Submit a user message to a thread; returns the acknowledgement."""
        ack = await self.op({"type": "turn.submit", "threadId": thread_id, "input": {"text": text}, **fields})
        assert ack["type"] == "command.ack", ack
        return ack

    async def answer(self, approval_id: str, kind: str, note: str | None = None) -> dict[str, Any]:
        """Answer an approval with `kind` (allow, deny...) and an optional note."""
        decision: dict[str, Any] = {"kind": kind}
        if note is not None:
            decision["note"] = note
        return await self.op({"type": "approval.response", "approvalId": approval_id, "decision": decision})

    async def model_text(self, count: int = 1) -> dict[str, Any]:
        """The first streamed text of the `count`-th model answer (the model call is under way)."""
        start = await self.recorder.wait_for("item.start", count, kind="assistant_message")
        return await self.recorder.wait_for("item.delta", itemId=start["itemId"])

    async def turn_done(self, count: int = 1) -> dict[str, Any]:
        """The `count`-th turn.complete event, waiting for it."""
        return await self.recorder.wait_for("turn.complete", count)

    async def turn_to_its_end(self, text: str) -> None:
        """A new thread under the `auto` policy, one message, and its turn run to a normal end."""
        thread = await self.new_thread(permissionPolicy="auto")
        await self.submit(thread, text)
        done = await self.turn_done()
        assert done["stopReason"] == "end", done

