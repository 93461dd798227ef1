"""Stand-ins for the browser side of the built-ins: a fake extension bridge (tabs, site access,
downloads, the indicator, and a page whose text a test changes) and an engine harness whose
router has the real built-ins beside the engine tests' scripted browser."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from host.browser.gateway import BrowserGateway
from host.browser.service import BrowserTools
from host.builtins.memory_state import broadcast_memory
from host.builtins.service import BuiltinTools
from host.calls.router import Router
from host.engine.engine import Engine
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec
from tests.support.engine_harness import FakeExecutor, Harness, router

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
            raise ToolFailure(ToolCode.NOT_CONNECTED, "no browser is connected to the host", phase="dispatch")
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
        raise ToolFailure(ToolCode.TIMEOUT, "not yet", phase="settle", retryable=True)

    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


class ScriptedBrowser(BrowserTools):
    """The real browser service over the fake bridge (watched tabs, the page indicator, the tab
    queue), running the page tools from the engine tests' script."""

    def __init__(self, bridge: FakeBridge, script: FakeExecutor):
        gateway = BrowserGateway(lambda: None, None)
        gateway.bridge = bridge  # type: ignore[assignment]
        super().__init__(gateway)
        self.script = script

    def offers(self, spec: ToolSpec) -> bool:
        return self.script.offers(spec)

    async def resolve(self, call: ToolCall) -> ToolCall:
        if call.spec.target == "watched":
            return await super().resolve(call)
        return await self.script.resolve(call)

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        return await self.script.run(call, runner)


class BuiltinHarness(Harness):
    """The engine tests' harness with the built-ins beside the scripted browser."""

    def __init__(self, folder, model_url, *, bridge: FakeBridge | None = None, resolver=None,
                 settings=None, **kw):
        super().__init__(folder, model_url, **kw)
        self.bridge = bridge
        self.resolver = resolver
        self.builtin_settings = settings
        self.inner = self.executor
        self.browser: ScriptedBrowser | None = None

    def router(self) -> Router:
        from host.builtins.settings import defaults

        settings = self.builtin_settings
        self.builtins = BuiltinTools(bridge=self.bridge, resolver=self.resolver,
                                     settings=(lambda: settings) if settings else defaults)
        self.browser = ScriptedBrowser(self.bridge, self.inner) if self.bridge else None
        return router(self.browser or self.inner, builtins=self.builtins)

    def connect(self, engine: Engine) -> None:
        self.builtins.attach(engine)
        self.builtins.on_memory_change = lambda: broadcast_memory(engine)

    async def stop(self) -> None:
        if self.browser is not None:
            await self.browser.indicator.close()
        await super().stop()


__all__ = ["BuiltinHarness", "FakeBridge", "FakeExecutor", "tool_results", "PAGE"]
