"""One engine with its op server whose gatekeeper and provider settings live under TABWARDEN_HOME
(set by the caller to a throw-away folder), so the settings ops read and write the same files the
real host would (policy.json, engine.json, the key store) without touching the user's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from host.engine.engine import Engine
from host.engine.provider_source import ProviderSource
from host.engine.views import to_wire
from host.gatekeeper.service import Gatekeeper
from host.store import Store
from host.ui.client import Client
from host.ui.commands import Commands
from tests.support.engine_harness import FakeExecutor, Recorder, router
from tests.support.waiting import until


class Settings:
    """One engine with its op server plus a page-like client; `op()` returns the op's direct answer."""

    def __init__(self, home: Path, services: dict[str, Any] | None = None):
        self.home = home
        self.services = services or {}  # beside the fake executor
        self.answers: list[Any] = []
        self.recorder = Recorder()
        self.engine: Engine | None = None
        self.commands: Commands | None = None
        self.client = Client(self.answers.append, key="ui:settings-page")
        self._ids = 0

    async def start(self) -> "Settings":
        """Open the store and gatekeeper at their default paths under TABWARDEN_HOME and start
        the engine."""
        self.store = Store()  # the default file under TABWARDEN_HOME, as the host (and the CLI) open it
        self.gatekeeper = Gatekeeper(self.store)  # default paths: under TABWARDEN_HOME
        self.gatekeeper.bind_browser_session("session-test")
        self.engine = Engine(self.store, self.gatekeeper, router(FakeExecutor(), **self.services),
                             providers=ProviderSource(), coalesce_s=0.005)
        self.commands = Commands(self.engine)
        self.engine.bus.add_sink(self.recorder.sink)
        await self.engine.start()
        return self

    async def stop(self) -> None:
        """Close the op server, the engine and the store."""
        if self.commands is not None:
            await self.commands.close()
        if self.engine is not None:
            await self.engine.close()
        self.store.close()

    @property
    def config(self) -> Path:
        return self.home / "config"

    def write_managed(self, document: dict[str, Any]) -> None:
        """Write the managed policy file and reload the gatekeeper (which must accept it)."""
        path = self.home / "managed" / "policy.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document))
        assert self.gatekeeper.reload() == []

    async def op(self, op: dict[str, Any], *, submission: str | None = None, client: Client | None = None,
                 timeout: float = 10.0) -> dict[str, Any]:
        """Send an op as `client` (the settings page by default); returns the direct answer the
        settings page gets."""
        self._ids += 1
        op = {"submissionId": submission or f"s{self._ids}", **op}
        client = client or self.client
        sink = self.answers if client is self.client else None
        before = len(self.answers) if sink is not None else 0
        await self.commands.handle(client, op)
        await until(lambda: sink is not None and len(sink) > before, timeout, f"an answer to {op['type']}",
                    interval=0.005)
        return to_wire(sink[before])

    async def state(self, thread_id: str | None = None) -> dict[str, Any]:
        """The settings state the page would show (for a thread, if given)."""
        answer = await self.op({"type": "settings.get", **({"threadId": thread_id} if thread_id else {})})
        assert answer["type"] == "settings.state", answer
        return answer["state"]
