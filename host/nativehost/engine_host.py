"""The engine inside a host process: built from the host's store, gatekeeper and browser
gateway, with its op server (`host.ui`) beside it; fed the UI frames; its events sent to pages
and to control clients subscribed to the `engine` topic; stopped (without touching its runs)
when the host shuts down."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from host.engine.views import to_wire

log = logging.getLogger("tabwarden.engine")

CONTROL_TOPIC = "engine"


class EngineHost:
    """What `HostServices.engine` holds."""

    def __init__(self, services: Any, **engine_options: Any):
        from host.ui.link import UiLink

        self.services = services
        self.host = services.host
        self.engine = None
        self.commands = None  # the op server (host.ui.commands.Commands), once the engine is built
        self.mcp = None  # host.mcp.manager.McpManager, once the engine is built
        self.error: Exception | None = None
        self.started: asyncio.Future[None] | None = None
        self._options = engine_options
        self.ui = UiLink(lambda: getattr(self.host, "endpoint", None), getattr(self.host, "extension_id", None), None)
        self.start()

    def start(self) -> bool:
        """Build and start the engine (again, after the store could not be opened at first);
        True when it runs. A failure leaves the pages told why, and everything fails closed."""
        from host.ui.commands import Commands

        if self.engine is not None:
            return True
        try:
            self.engine = self._build(self._options)
        except Exception as exc:  # StoreError above all: everything then fails closed
            log.error("the engine is unavailable: %s", exc)
            self.error = exc
            self.ui.unavailable_reason = f"the engine is unavailable: {exc}"
            return False
        self.error = None
        self.commands = Commands(self.engine)
        self.ui.serve(self.commands.handle)
        self.engine.bus.add_sink(self.ui.sink)
        self.engine.bus.add_sink(self._control_sink)
        self.services.gateway.takeover.listen(self.engine.on_takeover)
        self.host.on_shutdown(self.close)
        self.started = asyncio.ensure_future(self.engine.start())
        return True

    def _build(self, options: dict[str, Any]):
        from host.engine.engine import Engine
        from host.nativehost.wiring import connect_engine
        from host.store.db import StoreError

        store = self.services.store
        if store is None:
            raise StoreError(f"the store cannot be opened: {self.services.store_error}")
        router = self.services.tools
        engine = Engine(store, self.services.gatekeeper, router, **options)
        connect_engine(self.services, router, engine)
        self.mcp = router.services["mcp"].manager
        return engine

    async def receive(self, message: Any) -> None:
        """A `ui.connect`, `ui.op` or `ui.disconnect` frame from the browser."""
        await self.ui.receive(message)

    def on_alert(self, alert: Any) -> None:
        """A gatekeeper alert (denial burst): the engine pauses the thread."""
        if self.engine is not None:
            self.engine.on_alert(alert)

    def _control_sink(self, event: Any, thread_id: str | None) -> None:
        control = getattr(self.host, "control", None)
        if control is None or not any(CONTROL_TOPIC in c.topics for c in control.connections):
            return
        control.broadcast(CONTROL_TOPIC, to_wire(event))

    async def close(self) -> None:
        """Stop the op server, then the engine, at host shutdown (its runs stay for recovery)."""
        if self.commands is not None:
            await self.commands.close()
        if self.engine is not None:
            await self.engine.close()
