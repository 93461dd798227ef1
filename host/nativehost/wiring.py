"""The one place the host's tools are put together: the router with its services (the browser's
tools, the host's own built-ins, the MCP servers'), and their links to the engine (memory and
artifacts in its store, the page indicator's pause and stop, settings pages told of changes).
The engine adds its own interaction tools when it is built on the router."""

from __future__ import annotations

import logging
from typing import Any

from host.browser.service import BrowserTools
from host.builtins.service import BuiltinTools
from host.calls.router import Router
from host.mcp.service import McpTools
from host.skills.service import SkillTools

log = logging.getLogger("tabwarden.services")

PAUSED = "Paused from the page indicator. Send a message to continue."
STOPPED = "Stopped from the page indicator."


def build_router(gateway: Any) -> Router:
    """The host's tools: the browser's (over `gateway`), the built-ins and the MCP servers'."""
    return Router({
        "browser": BrowserTools(gateway),
        "builtins": BuiltinTools(bridge=gateway.bridge, guard=gateway.guard),
        "mcp": McpTools(),
        "skills": SkillTools(),
    })


def connect_engine(services: Any, router: Router, engine: Any) -> None:
    """Link the services to the engine built on `router`."""
    from protocol.messages import BrowserEvent

    from host.builtins.memory_state import broadcast_memory
    from host.mcp.page_state import broadcast_mcp, reload_soon
    from host.plugins.installer import attach_plugins

    builtins: BuiltinTools = router.services["builtins"]  # type: ignore[assignment]
    builtins.attach(engine)
    builtins.on_memory_change = lambda: broadcast_memory(engine)
    browser: BrowserTools = router.services["browser"]  # type: ignore[assignment]
    browser.indicator.on_action = lambda thread_id, action: indicator_action(engine, thread_id, action)
    services.listen(BrowserEvent, browser.indicator.on_event)
    mcp: McpTools = router.services["mcp"]  # type: ignore[assignment]
    mcp.manager.on_change = lambda: broadcast_mcp(engine)
    skills: SkillTools = router.services["skills"]  # type: ignore[assignment]
    skills.attach(engine)
    attach_plugins(skills, engine, mcp.manager).on_servers = lambda: reload_soon(engine)


async def indicator_action(engine: Any, thread_id: str, action: str) -> None:
    """Pause or stop a thread's turn from the page: a notice in the thread, then an interrupt
    (the turn ends; its conversation stays, and a new message continues it)."""
    if not engine.store.has_thread(thread_id):
        return
    if action == "pause":
        engine.note(thread_id, "paused", PAUSED)
    else:
        engine.note(thread_id, "stopped", STOPPED)
    await engine.interrupt(thread_id, reason=f"indicator:{action}")
