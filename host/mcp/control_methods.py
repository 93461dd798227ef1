"""Control-socket methods for MCP (the REPL: `tw.mcp()`, `await tw.call("mcp.servers")`):

    mcp.servers    {}                      -> {configError, servers: [{id, url, enabled, state, toolCount, lastError}]}
    mcp.tools      {server?}               -> [{server, state, tools: [{name, tool, label, description}],
                                                skipped: [{tool, reason}], lastError}] (connects if needed)
    mcp.set_token  {server, token | null}  -> {server, stored}: the bearer token in the key store
                                              (null forgets it); the server reconnects at the next need,
                                              and every open settings page gets the new `mcp.state`

Calling MCP tools is not here: those calls go through the engine and its gatekeeper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import msgspec

from protocol.errors import ErrorCode
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

ServerId = Annotated[str, msgspec.Meta(min_length=1, max_length=32)]


class _Nothing(msgspec.Struct, forbid_unknown_fields=True):
    pass


class _MaybeServer(msgspec.Struct, forbid_unknown_fields=True):
    server: ServerId | None = None


class _Token(msgspec.Struct, forbid_unknown_fields=True):
    server: ServerId
    token: Annotated[str, msgspec.Meta(min_length=1, max_length=8192)] | None


def _error(code: str, message: str) -> Exception:
    from host.control.server import ControlError

    return ControlError(code, message, {})


def _manager(conn: "ControlConnection") -> Any:
    services = getattr(conn.server.host, "services", None)
    hosted = getattr(services, "engine", None) if services is not None else None
    manager = getattr(hosted, "mcp", None)
    if manager is None:
        raise _error(ErrorCode.NOT_READY, "this host has no engine, so no MCP servers")
    return manager


async def mcp_servers(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """The configured servers and their state (mcp.json is read again)."""
    _params(_Nothing, params)
    manager = _manager(conn)
    await manager.reload()
    return manager.status()


async def mcp_tools(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    """The tools each server offers (and those skipped, with why), connecting as needed."""
    p = _params(_MaybeServer, params)
    manager = _manager(conn)
    await manager.refresh()
    if p.server is not None and p.server not in manager.servers:
        raise _error(ErrorCode.INVALID_MESSAGE, f"there is no MCP server {p.server!r} in mcp.json")
    out = []
    for state in manager.servers.values():
        if p.server is not None and state.config.id != p.server:
            continue
        out.append({
            "server": state.config.id, "state": state.state,
            "tools": [{"name": t.name, "tool": t.tool, "label": t.label, "description": t.description,
                       "changed": t.tool in manager.changed.get(state.config.id, set())} for t in state.tools],
            "skipped": [{"tool": s.tool, "reason": s.reason} for s in state.skipped],
            "lastError": {"code": state.last_error.code, "message": state.last_error.message}
            if state.last_error else None,
        })
    return out


async def mcp_set_token(params: dict[str, Any], conn: "ControlConnection") -> dict[str, Any]:
    """Store (or forget) a server's bearer token in the key store; never in mcp.json."""
    from host.mcp.auth import store_token
    from host.mcp.config import server_id_problem
    from host.providers.secrets import SecretError

    p = _params(_Token, params)
    problem = server_id_problem(p.server)
    if problem is not None:
        raise _error(ErrorCode.INVALID_MESSAGE, f"server id {p.server!r} {problem}")
    manager = _manager(conn)
    await manager.reload()
    state = manager.servers.get(p.server)
    if p.token is not None and state is None:  # a token is bound to the server's origin: it must exist
        raise _error(ErrorCode.INVALID_MESSAGE, f"there is no server {p.server!r} in mcp.json; add it first")
    try:
        store = manager.key_store()
        store_token(store, p.server, state.config.url if state is not None else "", p.token)
    except SecretError as exc:
        raise _error(ErrorCode.INTERNAL, f"the key store refused it: {exc}") from None
    await manager.reconnect(p.server)
    _changed(conn)
    return {"server": p.server, "stored": p.token is not None, "backend": getattr(store, "backend", "")}


def _changed(conn: "ControlConnection") -> None:
    # An open settings page follows changes made from the REPL too.
    engine = getattr(conn.server.host.services.engine, "engine", None)
    if engine is not None:
        from host.mcp.page_state import broadcast_mcp

        broadcast_mcp(engine)


def register(server: "ControlServer") -> None:
    """Serve the MCP methods on `server`."""
    server.register("mcp.servers", mcp_servers)
    server.register("mcp.tools", mcp_tools)
    server.register("mcp.set_token", mcp_set_token)
