"""UI ops for MCP servers (the settings page), merged into the engine's handler table
(commands.HANDLERS):

    mcp.get           → mcp.state (mcp.json read again; nothing connects)
    mcp.saveServer    → ack, then mcp.state to every page; an enabled server then connects
    mcp.removeServer  → ack, then mcp.state to every page (its stored token is forgotten)
    mcp.setToken      → ack, then mcp.state to every page; the server reconnects with it
    mcp.refresh       → mcp.state once the server(s) connected and listed their tools

Changes to mcp.json are validated like the file itself (host.mcp.config_edit): a refusal names
the bad field's path and writes nothing. Tokens go to the key store and never come back: pages
learn only whether one is stored. Connecting runs beside the op queue (a slow server must not
hold up other settings ops); its outcome reaches every page as a new `mcp.state`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from protocol import ui

from host.mcp.config_edit import McpEditRefused

if TYPE_CHECKING:
    from host.ui.commands import Client, Commands
    from host.mcp.manager import McpManager, ServerState

def mcp_manager(engine: Any) -> "McpManager | None":
    """The engine's MCP servers (None when its executor chain has no MCP executor)."""
    return getattr(engine.executor, "mcp_manager", None)


# -- the state pages see ----------------------------------------------------------------------


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
    return ui.McpServerEntry(
        id=config.id, url=config.url, origin=destination(config.url).origin.text, enabled=config.enabled,
        state=state.state, timeout_seconds=config.timeout_seconds,  # type: ignore[arg-type]
        allow_list=list(config.tools) if config.tools is not None else None, header_names=sorted(config.headers),
        bearer_token_env=config.bearer_token_env, token=_token(manager, state),  # type: ignore[arg-type]
        last_error=ui.McpError(code=state.error.code, message=state.error.message) if state.error else None,
        tools=[ui.McpToolEntry(name=t.name, tool=t.tool, label=t.label) for t in state.tools],
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


def _connect_soon(engine: Any, server_ids: list[str], done: Callable[[], None] | None = None) -> None:
    def finished() -> None:
        broadcast_mcp(engine)
        if done is not None:
            done()

    mcp_manager(engine).connect_later(server_ids, finished)


# -- handlers ---------------------------------------------------------------------------------


def _unavailable(op: Any) -> ui.CommandRejected:
    return ui.CommandRejected(submission_id=op.submission_id, code="mcp_unavailable",
                              message="this engine has no MCP support")


async def _changed(cmd: "Commands", client: "Client", op: Any, mark: str,
                   action: Callable[["McpManager"], Awaitable[list[str]]]) -> Any:
    """Run a change; acknowledge it (with its receipt) and send every page the new state, then
    connect the servers `action` names. A refusal is answered with its code and changes nothing."""
    manager = mcp_manager(cmd.engine)
    if manager is None:
        return _unavailable(op)
    try:
        connect = await action(manager)
    except McpEditRefused as exc:
        return cmd.reject(client, op, mark, exc.code, exc.message)
    response = cmd.commit(client, op, mark, lambda conn: cmd.ack(op))
    broadcast_mcp(cmd.engine)
    if connect:
        _connect_soon(cmd.engine, connect)
    return response


async def mcp_get(cmd: "Commands", client: "Client", op: ui.McpGet, mark: str) -> Any:
    """mcp.get: the configured servers (mcp.json is read again; nothing connects)."""
    manager = mcp_manager(cmd.engine)
    if manager is None:
        return _unavailable(op)
    await manager.reload()
    return mcp_state(cmd.engine, op.submission_id)


def _enabled(manager: "McpManager", server_id: str) -> list[str]:
    state = manager.servers.get(server_id)
    return [server_id] if state is not None and state.config.enabled else []


async def mcp_save_server(cmd: "Commands", client: "Client", op: ui.McpSaveServer, mark: str) -> Any:
    """mcp.saveServer: add or edit a server in mcp.json (its other fields kept). An edit that
    moves the server to another origin forgets its stored token: it was given for the old one."""
    from host.mcp.config_edit import save_server

    async def save(manager: "McpManager") -> list[str]:
        save_server(manager.config_file(), op.server, url=op.url.strip(), enabled=op.enabled,
                    tools=[t.strip() for t in op.tools] if op.tools is not None else None,
                    timeout_seconds=op.timeout_seconds, new=op.new,
                    on_origin_change=lambda: _forget_token(manager, op.server, "moved"))
        await manager.reload()
        return _enabled(manager, op.server)

    return await _changed(cmd, client, op, mark, save)


async def mcp_remove_server(cmd: "Commands", client: "Client", op: ui.McpRemoveServer, mark: str) -> Any:
    """mcp.removeServer: remove a server from mcp.json and forget its stored token (a server
    added later under the same id, maybe elsewhere, must not inherit it)."""
    from host.mcp.config_edit import remove_server

    async def remove(manager: "McpManager") -> list[str]:
        remove_server(manager.config_file(), op.server, before_write=lambda: _forget_token(manager, op.server, "kept"))
        await manager.reload()
        return []

    return await _changed(cmd, client, op, mark, remove)


def _forget_token(manager: "McpManager", server_id: str, outcome: str) -> None:
    """Delete a server's stored token before its entry changes; refuse the change if that fails
    (a token must never outlive the server or follow it elsewhere)."""
    from host.mcp.auth import store_token

    try:
        store_token(manager.key_store(), server_id, "", None)
    except Exception as exc:  # SecretError
        raise McpEditRefused("mcp_unavailable", f"the stored token could not be forgotten, so the server was {outcome} "
                                                f"as it was: {exc}") from None


async def mcp_set_token(cmd: "Commands", client: "Client", op: ui.McpSetToken, mark: str) -> Any:
    """mcp.setToken: store (or with null, forget) a server's bearer token in the key store."""
    from host.mcp.auth import store_token
    from host.mcp.config import server_id_problem

    async def store(manager: "McpManager") -> list[str]:
        problem = server_id_problem(op.server)
        if problem is not None:
            raise McpEditRefused("invalid_mcp_server", f"server id {op.server!r} {problem} - at `$.server`")
        await manager.reload()
        if op.token is not None and op.server not in manager.servers:
            raise McpEditRefused("mcp_server_not_found", f"there is no server {op.server!r} in mcp.json - at `$.server`")
        state = manager.servers.get(op.server)
        try:
            store_token(manager.key_store(), op.server, state.config.url if state is not None else "", op.token)
        except Exception as exc:  # SecretError: nothing stored
            raise McpEditRefused("mcp_unavailable", f"the key store refused it: {exc}") from None
        await manager.reconnect(op.server)
        return _enabled(manager, op.server)

    return await _changed(cmd, client, op, mark, store)


async def mcp_refresh(cmd: "Commands", client: "Client", op: ui.McpRefresh, mark: str) -> Any:
    """mcp.refresh: connect one server (or every enabled one) afresh and list its tools; the
    answer (and every page's new state) comes when that is done."""
    engine = cmd.engine
    manager = mcp_manager(engine)
    if manager is None:
        return _unavailable(op)
    await manager.reload()
    if op.server is not None and op.server not in manager.servers:
        return ui.CommandRejected(submission_id=op.submission_id, code="mcp_server_not_found",
                                  message=f"there is no server {op.server!r} in mcp.json - at `$.server`")
    ids = [op.server] if op.server is not None else [s for s in manager.servers if manager.servers[s].config.enabled]
    _connect_soon(engine, ids, done=lambda: client.send(mcp_state(engine, op.submission_id)))
    return None


HANDLERS = {
    "mcp.get": mcp_get,
    "mcp.saveServer": mcp_save_server,
    "mcp.removeServer": mcp_remove_server,
    "mcp.setToken": mcp_set_token,
    "mcp.refresh": mcp_refresh,
}
