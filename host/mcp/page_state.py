"""The MCP servers as pages see them (`mcp.state`), and sending it to every page after a change
(a page's, the REPL's, or a connection that finished). Tokens never appear: pages learn only
whether one is stored."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

from protocol import ui

if TYPE_CHECKING:
    from host.mcp.manager import McpManager, ServerState


def mcp_manager(engine: Any) -> "McpManager | None":
    """The engine's MCP servers (None when the host has no MCP service)."""
    service = engine.tools.services.get("mcp")
    return service.manager if service is not None else None


def _token(manager: "McpManager", state: "ServerState") -> str:
    from host.mcp.auth import has_stored_token

    try:
        if has_stored_token(manager.key_store(), state.config.id):
            return "stored"
    except Exception:  # SecretError, or a keyring backend failing: say so rather than guess
        return "unavailable"
    env = state.config.bearer_token_env
    return "env" if env and os.environ.get(env) else "none"


def _entry(manager: "McpManager", state: "ServerState") -> ui.McpServerEntry:
    from host.gatekeeper.origins import destination

    config = state.config
    changed = manager.changed.get(config.id, set())
    return ui.McpServerEntry(
        id=config.id, url=config.url, origin=destination(config.url).origin.text, enabled=config.enabled,
        state=state.state, timeout_seconds=config.timeout_seconds,  # type: ignore[arg-type]
        elicitation=config.elicitation, sampling=config.sampling,
        allow_list=list(config.tools) if config.tools is not None else None, header_names=sorted(config.headers),
        bearer_token_env=config.bearer_token_env, token=_token(manager, state),  # type: ignore[arg-type]
        last_error=ui.McpError(code=state.last_error.code, message=state.last_error.message)
        if state.last_error else None,
        tools=[ui.McpToolEntry(name=t.name, tool=t.tool, label=t.label, changed=t.tool in changed)
               for t in state.tools],
        skipped=[ui.McpSkippedTool(tool=s.tool, reason=s.reason) for s in state.skipped])


def mcp_state(engine: Any, submission_id: str | None = None) -> ui.McpState:
    """The servers as pages see them (as last loaded: call `manager.reload()` first to reread)."""
    manager = mcp_manager(engine)
    if manager is None:
        return ui.McpState(submission_id=submission_id, config_error="this engine has no MCP support")
    return ui.McpState(submission_id=submission_id, servers=[_entry(manager, s) for s in manager.servers.values()],
                       config_error=str(manager.config_error) if manager.config_error else None)


def broadcast_mcp(engine: Any) -> None:
    """Send every page the MCP servers as they are now (after a page's or the REPL's change)."""
    engine.bus.broadcast(mcp_state(engine))


def connect_soon(engine: Any, server_ids: list[str], done: Callable[[], None] | None = None) -> None:
    """Connect `server_ids` in the background; then send every page the new state and call `done`."""
    def finished() -> None:
        broadcast_mcp(engine)
        if done is not None:
            done()

    mcp_manager(engine).connect_later(server_ids, finished)


_RELOADS: set[Any] = set()


def reload_soon(engine: Any) -> None:
    """Apply the server settings again in the background (a plugin's server was turned on or
    off, or left with its plugin), then send every page the new state. Without a running loop
    the next turn start applies them."""
    import asyncio

    manager = mcp_manager(engine)
    if manager is None:
        return

    async def apply() -> None:
        await manager.reload()
        broadcast_mcp(engine)

    try:
        task = asyncio.get_running_loop().create_task(apply())
    except RuntimeError:
        return
    _RELOADS.add(task)
    task.add_done_callback(_RELOADS.discard)
