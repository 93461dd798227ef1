"""The engine harness with the real built-ins beside a browser service that runs the fake
executor's script over a fake bridge (watched tabs, the page indicator and the tab queue are
the real browser service's)."""

from __future__ import annotations

from typing import Any

from host.browser.gateway import BrowserGateway
from host.browser.navguard.guard import NavigationGuard
from host.browser.service import BrowserTools
from host.builtins.memory_state import broadcast_memory
from host.builtins.service import BuiltinTools
from host.calls.router import Router
from host.engine.engine import Engine
from host.tools.call import ToolCall
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec
from tests.support.engine_harness import FakeExecutor, Harness, router
from tests.support.fake_bridge import FakeBridge


class ScriptedBrowser(BrowserTools):
    """The real browser service over the fake bridge (watched tabs, the page indicator, the tab
    queue), running the page tools from the fake executor's script."""

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
    """The engine harness with the built-ins beside the scripted browser (or the bare fake executor
    when there is no bridge)."""

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
        guard = NavigationGuard(self.bridge, self.gatekeeper) if self.bridge else None
        self.builtins = BuiltinTools(bridge=self.bridge, guard=guard, resolver=self.resolver,
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
