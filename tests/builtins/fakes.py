"""Stand-ins for the browser side of the built-ins: a fake extension bridge (tabs, site access,
downloads, the indicator, and a page whose text a test changes) and an engine harness whose
executor is the real BuiltinExecutor in front of the engine tests' scripted FakeExecutor."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from host.browser.errors import Code, ToolFailure
from host.browser.routing import TabRoutes
from host.builtins.executor import BuiltinExecutor
from host.engine.engine import Engine
from host.engine.provider_source import ProviderSource
from host.gatekeeper.service import Gatekeeper
from host.store import Store
from host.ui.client import Client
from host.ui.commands import Commands
from tests.engine.harness import FakeExecutor, Harness, Recorder

PAGE = "https://shop.example/orders/1"


@dataclass
class FakeBridge:
    """The extension as the built-ins see it (`api` and `content`)."""

    tabs: dict[int, dict[str, Any]] = field(default_factory=lambda: {7: {"id": 7, "url": PAGE, "title": "Order",
                                                                        "status": "complete", "windowId": 1}})
    text: dict[int, str] = field(default_factory=lambda: {7: "Order 1: preparing"})
    site_access: bool = True
    calls: list[tuple[str, tuple]] = field(default_factory=list)
    downloads: dict[int, dict[str, Any]] = field(default_factory=dict)
    connected: bool = True

    async def api(self, name: str, *args: Any, timeout: float = 10.0) -> Any:
        self.calls.append((name, args))
        if not self.connected:
            raise ToolFailure(Code.NOT_CONNECTED, "no browser is connected to the host", phase="dispatch")
        if name == "tabs.get":
            tab = self.tabs.get(args[0])
            if tab is None:
                raise ToolFailure("not_found", f"No tab with id: {args[0]}")
            return dict(tab)
        if name == "tabs.query":
            return [dict(t) for t in self.tabs.values()]
        if name == "permissions.contains":
            return self.site_access
        if name in ("indicator.show", "indicator.hide"):
            return True
        if name == "downloads.download":
            download_id = len(self.downloads) + 1
            self.downloads[download_id] = {"id": download_id, "url": args[0]["url"], "state": "complete",
                                           "filename": f"/home/u/Downloads/{args[0].get('filename') or 'file.bin'}",
                                           "fileSize": 12, "bytesReceived": 12, "totalBytes": 12}
            return download_id
        if name == "downloads.search":
            found = self.downloads.get(args[0].get("id"))
            return [found] if found else []
        raise ToolFailure("unsupported", f"extension API {name} is not available to the host")

    async def content(self, tab_id: int, tool: str, params: dict[str, Any], *, write: bool,
                      deadline_ms: int = 15_000, frame_id: int = 0) -> Any:
        self.calls.append((f"content:{tool}", (tab_id, params)))
        if not self.site_access:
            raise ToolFailure("host_permission_required", f"cannot run in tab {tab_id}", phase="precheck")
        assert tool == "wait_for" and params.get("timeMs") == 0
        page = self.text.get(tab_id, "")
        wanted = params.get("text") or params.get("textGone")
        present = wanted in page
        if present == ("text" in params):
            return {"resultText": "held"}
        raise ToolFailure(Code.TIMEOUT, "not yet", phase="settle", retryable=True)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


class FakeGateway:
    def __init__(self, bridge: FakeBridge):
        self.bridge = bridge
        self.routes = TabRoutes()


class BuiltinHarness(Harness):
    """The engine tests' harness with the built-ins in front of the scripted executor."""

    def __init__(self, folder, model_url, *, bridge: FakeBridge | None = None, resolver=None,
                 settings=None, **kw):
        super().__init__(folder, model_url, **kw)
        self.bridge = bridge
        self.resolver = resolver
        self.builtin_settings = settings
        self.inner = self.executor

    async def start(self) -> Engine:
        from host.builtins.settings import defaults

        self.store = Store(self.folder / "db.sqlite3")
        self.gatekeeper = Gatekeeper(self.store, user_policy=self.folder / "user.json",
                                     managed_policy=self.folder / "managed.json")
        self.gatekeeper.bind_browser_session("session-test")
        settings = self.builtin_settings
        self.builtins = BuiltinExecutor(self.inner, gateway=FakeGateway(self.bridge) if self.bridge else None,
                                        resolver=self.resolver, settings=(lambda: settings) if settings else defaults)
        self.executor = self.builtins
        self.engine = Engine(self.store, self.gatekeeper, self.builtins, providers=ProviderSource(self.settings),
                             approval_timeout_s=self.approval_timeout_s, clock=self.clock or time.time,
                             coalesce_s=0.005)
        self.commands = Commands(self.engine)
        self.builtins.attach(self.engine)
        self.recorder = Recorder()
        self.engine.bus.add_sink(self.recorder.sink)
        self.client = Client(self.answers.append, key="test", everything=True)
        await self.engine.start()
        return self.engine

    async def stop(self) -> None:
        if getattr(self, "builtins", None) is not None and self.builtins.indicator is not None:
            await self.builtins.indicator.close()
        await super().stop()


async def until(condition, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.01)


__all__ = ["BuiltinHarness", "FakeBridge", "FakeExecutor", "tool_results", "until", "PAGE"]
