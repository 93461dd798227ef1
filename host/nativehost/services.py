"""The long-lived subsystems of one host process, created on first use and shared by the
browser link, the control server and the engine: one store, one gatekeeper, one browser
gateway, one tool router. Inbound browser frames that are not replies are routed from here."""

from __future__ import annotations

import asyncio
import logging
from functools import cached_property
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from protocol.messages import BrowserEvent, CdpDetached, CdpEvent, Message, UiConnect, UiDisconnect, UiOp

from host.nativehost.session import BrowserSession

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway
    from host.calls.router import Router
    from host.nativehost.engine_host import EngineHost
    from host.gatekeeper.service import Gatekeeper
    from host.store import Store

log = logging.getLogger("tabwarden.services")

Listener = Callable[[Message], Any]


class OwningProcess(Protocol):
    """What the services (and the engine they build) use of the host process that owns them
    (`HostProcess`): its browser session and endpoint, its control server once started, and
    its shutdown hooks."""

    extension_id: str
    session: BrowserSession | None
    endpoint: Any
    control: Any

    def on_shutdown(self, hook: Callable[[], Awaitable[None] | None]) -> None: ...


class HostServices:
    def __init__(self, host: OwningProcess):
        self.host = host
        self.store_error: Exception | None = None
        # Subsystems that want inbound frames register here (the engine takes the UI ones).
        self.listeners: dict[type, list[Listener]] = {}
        for kind in (UiConnect, UiOp, UiDisconnect):
            self.listen(kind, lambda message: self.engine.receive(message))

    def listen(self, message_type: type, listener: Listener) -> None:
        """Call `listener` for every inbound `message_type` frame after the handshake."""
        self.listeners.setdefault(message_type, []).append(listener)

    async def dispatch(self, message: Message) -> None:
        """Route one inbound frame to the listeners of its type."""
        kind = type(message)
        if kind is BrowserEvent:
            self.gateway  # noqa: B018 - the gateway must exist to track tabs from the first event
        listeners = self.listeners.get(kind, [])
        if not listeners and kind in (UiConnect, UiOp, UiDisconnect, CdpEvent, CdpDetached):
            log.debug("no subsystem takes %s yet", kind.__name__)
        for listener in listeners:
            try:
                outcome = listener(message)
                if hasattr(outcome, "__await__"):
                    await outcome
            except Exception:
                log.exception("listener for %s failed", kind.__name__)

    @cached_property
    def store(self) -> "Store | None":
        """The SQLite store, or None when it cannot be opened (everything then fails closed)."""
        from host.store import Store, StoreError

        try:
            return Store()
        except StoreError as exc:
            self.store_error = exc
            log.error("the store cannot be opened: %s; every permission check will deny", exc)
            return None

    @cached_property
    def gatekeeper(self) -> "Gatekeeper":
        """The host's gatekeeper, bound to the connected browser session."""
        from host.gatekeeper.service import Gatekeeper

        gatekeeper = Gatekeeper(self.store, on_alert=self._on_alert)
        if self.store is None:
            gatekeeper.mark_unavailable(self.store_error or RuntimeError("no store"))
        session = self.host.session
        if session is not None:
            gatekeeper.bind_browser_session(session.browser_session_id)
        self._watch_storage(gatekeeper)
        return gatekeeper

    def _watch_storage(self, gatekeeper: "Gatekeeper") -> None:
        """Heal the gatekeeper when storage answers again, and tell pages and clients."""
        from host.nativehost.storage_watch import StorageWatch

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # built outside the host's loop (a tool, a test): nothing to watch with
        watch = StorageWatch(gatekeeper, self._storage_changed, reopen=self.reopen_store)
        watch.start()
        self.host.on_shutdown(watch.stop)

    def reopen_store(self) -> bool:
        """Open the store the host could not open at start (a damaged file since moved aside or
        restored); the gatekeeper and the engine are then built over it. True when it opened."""
        if self.__dict__.get("store") is not None:
            return True
        from host.store import Store, StoreError

        try:
            store = Store()
        except StoreError as exc:
            self.store_error = exc
            return False
        self.__dict__["store"], self.store_error = store, None
        log.warning("the store opens now: the gatekeeper and the engine start over it")
        self.gatekeeper.adopt_store(store)
        hosted = self.__dict__.get("engine")
        if hosted is not None:
            hosted.start()
        return True

    def _storage_changed(self, available: bool, cause: str) -> None:
        hosted = self.__dict__.get("engine")
        if hosted is not None and hosted.engine is not None:
            from protocol import ui

            hosted.engine.bus.broadcast(ui.StorageStatus(available=available, cause=cause))
        control = getattr(self.host, "control", None)
        if control is not None:
            control.broadcast("storage", {"available": available, "cause": cause})
    @cached_property
    def gateway(self) -> "BrowserGateway":
        """The state the browser tools share (tab routes, ref maps, the extension bridge, debugger
        sessions)."""
        from host.browser.events import handle_event
        from host.browser.gateway import BrowserGateway

        gateway = BrowserGateway(lambda: self.host.endpoint, self.gatekeeper)
        self.listen(BrowserEvent, lambda event: handle_event(gateway, event))
        gateway.takeover.listen(self._on_takeover)
        return gateway

    @cached_property
    def tools(self) -> "Router":
        """The host's tools, by service (browser, built-ins, MCP servers); the engine adds its own."""
        from host.nativehost.wiring import build_router

        return build_router(self.gateway)

    def _on_takeover(self, thread_id: str, info: Any) -> None:
        control = getattr(self.host, "control", None)
        if control is not None:
            control.broadcast("browser.paused", info)

    @cached_property
    def engine(self) -> "EngineHost":
        """The engine (threads, turns, approvals), fed the UI frames; built at the first handshake
        so that approvals pending from a previous run are offered again at once."""
        from host.nativehost.engine_host import EngineHost

        return EngineHost(self)

    def browser_session_changed(self, browser_session_id: str) -> None:
        """A (re)connected extension reported its browser session: rebind session grants."""
        if "gatekeeper" in self.__dict__:
            self.gatekeeper.bind_browser_session(browser_session_id)
        if "engine" not in self.__dict__:
            # Built once the welcome is on its way (not before it): recovery re-offers approvals.
            asyncio.get_running_loop().call_soon(lambda: self.engine)

    def settings_changed(self) -> None:
        """Rules or origin lists changed outside the settings page (the REPL, the control socket):
        send open pages the new settings state."""
        hosted = self.__dict__.get("engine")
        if hosted is not None and hosted.engine is not None:
            from host.ui.settings_state import broadcast_settings

            broadcast_settings(hosted.engine)

    def _on_alert(self, alert: Any) -> None:
        log.warning("gatekeeper alert: %s", alert)
        if "engine" in self.__dict__:
            self.engine.on_alert(alert)  # pauses the thread and tells its pages
        control = getattr(self.host, "control", None)
        if control is not None:
            control.broadcast("alert", {"threadId": getattr(alert, "thread_id", None), "code": getattr(alert, "code", None),
                                        "message": getattr(alert, "message", str(alert))})

    async def close(self) -> None:
        """Flush and close what needs it (called on orderly shutdown)."""
        store = self.__dict__.get("store")
        if store is not None:
            store.close()
