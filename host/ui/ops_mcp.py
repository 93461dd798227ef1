"""MCP server ops from the settings page:

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

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from protocol import ui

from host.config_files import EditRefused
from host.mcp.page_state import broadcast_mcp, connect_soon, mcp_manager, mcp_state
from host.ui.client import Client
from host.ui.op_context import OpContext

if TYPE_CHECKING:
    from host.mcp.manager import McpManager


def _unavailable(op: Any) -> ui.CommandRejected:
    return ui.CommandRejected(submission_id=op.submission_id, code="mcp_unavailable",
                              message="this engine has no MCP support")


async def _changed(ctx: OpContext, client: Client, op: Any, mark: str,
                   action: Callable[["McpManager"], Awaitable[list[str]]]) -> Any:
    """Run a change; acknowledge it (with its receipt) and send every page the new state, then
    connect the servers `action` names. A refusal is answered with its code and changes nothing."""
    manager = mcp_manager(ctx.engine)
    if manager is None:
        return _unavailable(op)
    try:
        connect = await action(manager)
    except EditRefused as exc:
        return ctx.reject(client, op, mark, exc.code, exc.message)
    response = ctx.commit(client, op, mark, lambda conn: ctx.ack(op))
    broadcast_mcp(ctx.engine)
    if connect:
        connect_soon(ctx.engine, connect)
    return response


async def mcp_get(ctx: OpContext, client: Client, op: ui.McpGet, mark: str) -> Any:
    """mcp.get: the configured servers (mcp.json is read again; nothing connects)."""
    manager = mcp_manager(ctx.engine)
    if manager is None:
        return _unavailable(op)
    await manager.reload()
    return mcp_state(ctx.engine, op.submission_id)


def _enabled(manager: "McpManager", server_id: str) -> list[str]:
    state = manager.servers.get(server_id)
    return [server_id] if state is not None and state.config.enabled else []


async def mcp_save_server(ctx: OpContext, client: Client, op: ui.McpSaveServer, mark: str) -> Any:
    """mcp.saveServer: add or edit a server in mcp.json (its other fields kept). An edit that
    moves the server to another origin forgets its stored token: it was given for the old one."""
    from host.mcp.config_edit import save_server

    async def save(manager: "McpManager") -> list[str]:
        save_server(manager.config_file(), op.server, url=op.url.strip(), enabled=op.enabled,
                    tools=[t.strip() for t in op.tools] if op.tools is not None else None,
                    timeout_seconds=op.timeout_seconds, new=op.new, elicitation=op.elicitation, sampling=op.sampling,
                    on_origin_change=lambda: _forget_token(manager, op.server, "moved"))
        await manager.reload()
        return _enabled(manager, op.server)

    return await _changed(ctx, client, op, mark, save)


async def mcp_remove_server(ctx: OpContext, client: Client, op: ui.McpRemoveServer, mark: str) -> Any:
    """mcp.removeServer: remove a server from mcp.json and forget its stored token (a server
    added later under the same id, maybe elsewhere, must not inherit it)."""
    from host.mcp.config_edit import remove_server

    async def remove(manager: "McpManager") -> list[str]:
        remove_server(manager.config_file(), op.server, before_write=lambda: _forget_token(manager, op.server, "kept"))
        await manager.reload()
        return []

    return await _changed(ctx, client, op, mark, remove)


def _forget_token(manager: "McpManager", server_id: str, outcome: str) -> None:
    """Delete a server's stored token before its entry changes; refuse the change if that fails
    (a token must never outlive the server or follow it elsewhere)."""
    from host.mcp.auth import store_token

    try:
        store_token(manager.key_store(), server_id, "", None)
    except Exception as exc:  # SecretError
        raise EditRefused("mcp_unavailable", f"the stored token could not be forgotten, so the server was {outcome} "
                                                f"as it was: {exc}") from None


async def mcp_set_token(ctx: OpContext, client: Client, op: ui.McpSetToken, mark: str) -> Any:
    """mcp.setToken: store (or with null, forget) a server's bearer token in the key store."""
    from host.mcp.auth import store_token
    from host.mcp.config import server_id_problem

    async def store(manager: "McpManager") -> list[str]:
        problem = server_id_problem(op.server)
        if problem is not None:
            raise EditRefused("invalid_mcp_server", f"server id {op.server!r} {problem} - at `$.server`")
        await manager.reload()
        if op.token is not None and op.server not in manager.servers:
            raise EditRefused("mcp_server_not_found", f"there is no server {op.server!r} in mcp.json - at `$.server`")
        state = manager.servers.get(op.server)
        try:
            store_token(manager.key_store(), op.server, state.config.url if state is not None else "", op.token)
        except Exception as exc:  # SecretError: nothing stored
            raise EditRefused("mcp_unavailable", f"the key store refused it: {exc}") from None
        await manager.reconnect(op.server)
        return _enabled(manager, op.server)

    return await _changed(ctx, client, op, mark, store)


async def mcp_refresh(ctx: OpContext, client: Client, op: ui.McpRefresh, mark: str) -> Any:
    """mcp.refresh: connect one server (or every enabled one) afresh and list its tools; the
    answer (and every page's new state) comes when that is done."""
    engine = ctx.engine
    manager = mcp_manager(engine)
    if manager is None:
        return _unavailable(op)
    await manager.reload()
    if op.server is not None and op.server not in manager.servers:
        return ui.CommandRejected(submission_id=op.submission_id, code="mcp_server_not_found",
                                  message=f"there is no server {op.server!r} in mcp.json - at `$.server`")
    ids = [op.server] if op.server is not None else [s for s in manager.servers if manager.servers[s].config.enabled]
    connect_soon(engine, ids, done=lambda: client.send(mcp_state(engine, op.submission_id)))
    return None

