"""`McpManager`: the configured servers, their sessions and their tool lists.

mcp.json is read again at each `refresh()` (a turn start), so edits apply without a restart: a
new server is connected, a changed one reconnected, a removed or disabled one closed. An
invalid file disables every server (nothing of it is applied) and its error is kept for
`mcp.servers`. Servers connect lazily (first refresh or first call), concurrently, each within
its connect timeout. One that failed is tried again at the next turn start once `RETRY_AFTER_S`
has passed: a refused connection fails at once, so it is retried after a short pause and its
tools come back as soon as the server does; one that timed out cost a whole connect timeout,
so it waits longer. The tool list is fetched at connect and again after the server sends
`notifications/tools/list_changed`.

A server that restarted forgets its sessions and refuses ours (404, or 400 "no valid
session"): the session is started again once and the call, which the server did not process,
is sent again, unless the tool's definition changed meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from host.config_files import ConfigFileError
from host.mcp.config import McpConfig, ServerConfig, load_mcp_config
from host.mcp.errors import McpFailure
from host.mcp.exposure import ExposedTool, Skipped, expose

log = logging.getLogger("tabwarden.mcp")

RETRY_AFTER_S = 2.0  # a failure that costs a turn start little: refused, reset, unauthorised
RETRY_SLOW_AFTER_S = 30.0  # a connect that timed out


@dataclass
class ServerState:
    """What the host knows about one configured server."""

    config: ServerConfig
    connection: Any = None  # host.mcp.connection.Connection while connected
    tools: list[ExposedTool] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    error: McpFailure | None = None
    failed_at: float | None = None
    listed: bool = False  # the tool list matches the server's latest
    retired: bool = False  # dropped from the settings: never connected again
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def live(self) -> bool:
        """True while the session is open."""
        return self.connection is not None and self.connection.live

    @property
    def last_error(self) -> McpFailure | None:
        """Why the server is not usable now: the kept failure, or why its session ended."""
        if self.error is not None:
            return self.error
        if self.connection is not None and not self.connection.live:
            if self.connection.session_refused:
                return McpFailure("mcp_session_expired", f"MCP server {self.config.id!r} no longer knows our session "
                                                         "(it restarted?); a new one starts at the next need")
            return self.connection.error or McpFailure("mcp_unreachable", f"the session with {self.config.id!r} ended")
        return None

    @property
    def state(self) -> str:
        """disabled | connected | failed | idle."""
        if not self.config.enabled:
            return "disabled"
        if self.live:
            return "connected"
        return "failed" if self.last_error is not None else "idle"


class McpManager:
    """All configured MCP servers. `load` reads the settings (by default the file at `path`,
    itself by default `<config dir>/mcp.json`); `key_store` returns the store holding bearer
    tokens (created on first use)."""

    def __init__(self, load: Callable[[], McpConfig] | None = None, key_store: Callable[[], Any] | None = None,
                 clock: Callable[[], float] = time.monotonic, path: Path | None = None):
        self.path = path
        self._load = load or (lambda: load_mcp_config(self.path))
        self._key_store = key_store
        self._store: Any = None
        self.clock = clock
        self.servers: dict[str, ServerState] = {}
        self.config_error: ConfigFileError | None = None
        self._loaded = False
        self._background: set[asyncio.Task[None]] = set()
        # (server, tool) -> the definition last called (or first listed) in this run, and the tools
        # whose listed definition differs from it: shown by `status()` until a call of the new
        # definition passes the gatekeeper (which asks about it again).
        self._definitions: dict[tuple[str, str], str] = {}
        self.changed: dict[str, set[str]] = {}
        # Called when a turn start's refresh changed what `status()` shows (the engine host
        # broadcasts the new state to open settings pages).
        self.on_change: Callable[[], None] | None = None
        # Servers plugins bring (`host.plugins`), beside mcp.json's; the user's own win a clash.
        self.more_servers: Callable[[], dict[str, ServerConfig]] | None = None

    # -- settings -------------------------------------------------------------------------------

    def config_file(self) -> Path:
        """The mcp.json the settings page writes (the one the default `load` reads)."""
        from host.mcp.config import config_path

        return self.path or config_path()

    def key_store(self) -> Any:
        """The key store for bearer tokens."""
        if self._store is None:
            if self._key_store is not None:
                self._store = self._key_store()
            else:
                from host.providers.secrets import default_key_store

                self._store = default_key_store()
        return self._store

    async def reload(self) -> None:
        """Read mcp.json again and apply it whole (or, when invalid, disable every server)."""
        try:
            config = self._load()
        except ConfigFileError as exc:
            if str(exc) != str(self.config_error):
                log.error("MCP is disabled, the settings are invalid: %s", exc)
            self.config_error = exc
            config = McpConfig()
        else:
            self.config_error = None
        if self.more_servers is not None:
            try:
                config = McpConfig({**self.more_servers(), **config.servers})
            except Exception:
                log.exception("reading the plugins' MCP servers failed")
        self._loaded = True
        closing = []
        for server_id, state in list(self.servers.items()):
            fresh = config.servers.get(server_id)
            if fresh is None or fresh.fingerprint() != state.config.fingerprint() or not fresh.enabled:
                closing.append(state)
                del self.servers[server_id]
        for server_id, server in config.servers.items():
            state = self.servers.get(server_id)
            if state is None:
                self.servers[server_id] = ServerState(server)
            elif server != state.config:  # same connection settings, another allow-list
                state.config = server
                state.listed = False
        for state in closing:
            state.retired = True  # a connect already under way must not revive it
            async with state.lock:
                await self._disconnect(state)

    # -- connecting -----------------------------------------------------------------------------

    async def refresh(self) -> None:
        """At a turn start: apply the settings, connect the servers that need it, refresh stale
        tool lists. Never raises (failures are kept per server)."""
        before = self.status()
        try:
            await self.reload()
        except Exception:  # a bug here must not stop the turn: MCP just offers nothing new
            log.exception("reading the MCP settings failed")
            return
        pending = [self._ready(s, retry=False) for s in self.servers.values() if s.config.enabled]
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        if self.on_change is not None and self.status() != before:
            self.on_change()  # open settings pages follow connections made by a turn

    async def _ready(self, state: ServerState, *, retry: bool) -> None:
        """Connect `state` and list its tools unless done (raises McpFailure). Without `retry`, a
        server that failed within RETRY_AFTER_S is left alone."""
        async with state.lock:
            if state.retired:
                raise McpFailure("mcp_not_configured", f"MCP server {state.config.id!r} was removed or changed in mcp.json")
            if state.live and state.listed:
                return
            if not retry and state.error is not None and state.failed_at is not None:
                wait = RETRY_SLOW_AFTER_S if state.error.code == "mcp_timeout" else RETRY_AFTER_S
                if self.clock() - state.failed_at < wait:
                    raise state.error
            try:
                if not state.live:
                    await self._disconnect(state, keep_error=True)  # a session that ended by itself
                    await self._connect(state)
                await self._list(state)
            except McpFailure as failure:
                state.error, state.failed_at = failure, self.clock()
                await self._disconnect(state, keep_error=True)
                raise
            state.error = state.failed_at = None

    async def _connect(self, state: ServerState) -> None:
        from host.mcp.auth import bearer_token
        from host.providers.secrets import SecretError

        try:
            from host.mcp.connection import Connection
        except ImportError as exc:
            raise McpFailure("mcp_unavailable", f"the MCP SDK cannot be loaded: {exc}") from None
        config = state.config
        try:
            token = bearer_token(config.id, config.url, config.bearer_token_env, self.key_store())
        except SecretError as exc:
            raise McpFailure("mcp_unavailable", f"the bearer token of {config.id!r} cannot be read: {exc}") from None
        connection = Connection(config, token, on_tools_changed=lambda: self._stale(state))
        await connection.open()
        state.connection = connection
        state.listed = False
        log.info("MCP server %s connected (%s)", config.id, config.url)

    def _stale(self, state: ServerState) -> None:
        state.listed = False  # listed again at the next refresh

    async def _list(self, state: ServerState) -> None:
        from host.tools.catalog import mcp_tool, remember_mcp_tool

        listed = await state.connection.list_tools()
        allowed = set(state.config.tools) if state.config.tools is not None else None
        tools: list[ExposedTool] = []
        skipped: list[Skipped] = []
        seen: set[str] = set()
        for entry in listed:
            found = expose(state.config.id, entry)
            if isinstance(found, ExposedTool):
                if allowed is not None and found.tool not in allowed:
                    found = Skipped(found.tool, "not in the server's tools allow-list")
                elif found.name in seen:
                    found = Skipped(found.tool, "listed twice")
            if isinstance(found, Skipped):
                log.info("MCP server %s: %r is not offered: %s", state.config.id, found.tool, found.reason)
                skipped.append(found)
                continue
            seen.add(found.name)
            tools.append(found)
            known = self._definitions.setdefault((found.server, found.tool), found.definition)
            if known != found.definition:
                if found.tool not in self.changed.setdefault(found.server, set()):
                    log.warning("MCP server %s changed the definition of %s; it will be asked about again",
                                found.server, found.tool)
                self.changed[found.server].add(found.tool)
            else:
                self.changed.get(found.server, set()).discard(found.tool)
            remember_mcp_tool(mcp_tool(found.server, found.tool, title=found.label, description=found.description,
                                       input_schema=found.schema))
        state.tools, state.skipped, state.listed = tools, skipped, True

    async def _disconnect(self, state: ServerState, *, keep_error: bool = False) -> None:
        connection, state.connection = state.connection, None
        state.tools, state.skipped, state.listed = [], [], False
        if not keep_error:
            state.error = state.failed_at = None
        if connection is not None:
            await connection.close()

    async def reconnect(self, server_id: str) -> None:
        """Close a server's session (its token or settings changed); the next need reconnects."""
        state = self.servers.get(server_id)
        if state is not None:
            async with state.lock:
                await self._disconnect(state)

    def connect_later(self, server_ids: list[str], done: Callable[[], None]) -> None:
        """Connect these servers afresh (new token, new tool list) in the background, then call
        `done()` (also when they failed: their state says how). For the settings page, whose
        ops must not wait on a slow server; `close()` cancels what is still running."""
        async def connect(server_id: str) -> None:
            await self.reconnect(server_id)
            try:
                await self.ensure(server_id)
            except McpFailure:
                pass  # kept on the server's state

        async def run() -> None:
            await asyncio.gather(*(connect(s) for s in server_ids), return_exceptions=True)

        task = asyncio.ensure_future(run())
        self._background.add(task)

        def finished(t: asyncio.Task[None]) -> None:
            self._background.discard(t)
            if not t.cancelled():
                done()

        task.add_done_callback(finished)

    # -- using ----------------------------------------------------------------------------------

    def tools(self) -> list[ExposedTool]:
        """The tools offered to the model: those of every connected, enabled server."""
        return [t for s in self.servers.values() if s.config.enabled and s.live for t in s.tools]

    def find(self, name: str) -> ExposedTool | None:
        """The exposed tool called `name`, if a server offers it now."""
        return next((t for t in self.tools() if t.name == name), None)

    def server(self, server_id: str) -> ServerState:
        """A configured server (raises McpFailure when it is not configured or is disabled)."""
        state = self.servers.get(server_id)
        if state is None:
            why = f" (mcp.json is invalid: {self.config_error})" if self.config_error else ""
            raise McpFailure("mcp_not_configured", f"there is no MCP server {server_id!r}{why}")
        if not state.config.enabled:
            raise McpFailure("mcp_disabled", f"MCP server {server_id!r} is disabled in mcp.json")
        return state

    async def ensure(self, server_id: str) -> None:
        """Connect one server and list its tools if not done yet (raises McpFailure)."""
        if not self._loaded:
            await self.reload()
        await self._ready(self.server(server_id), retry=True)

    async def call(self, server_id: str, tool: str, arguments: dict[str, Any],
                   definition: str | None = None) -> dict[str, Any]:
        """Call a server's tool (connecting first if needed); the answer in JSON form. With
        `definition` (the hash the call was judged with) a tool whose definition changed is not
        called. A session the server no longer knows is started again once and the call sent
        again (the server refused it unprocessed). Raises McpFailure; `sent` tells whether the
        request had gone out."""
        from host.tools.asking import model_sink, question_sink
        from host.tools.progress import progress_sink

        sink = progress_sink()  # captured here: the SDK reports progress from its own task
        ask = question_sink()  # likewise for the questions the server asks during the call
        model = model_sink()  # and the model answers it asks for
        if not self._loaded:
            await self.reload()
        for attempt in (1, 2):
            state = self.server(server_id)
            await self._ready(state, retry=True)
            current = next((t for t in state.tools if t.tool == tool), None)
            if current is None:
                # Checked at the call, not only when listing: the allow-list (or the server's list)
                # may have changed since the call was prepared or approved.
                raise McpFailure("mcp_not_configured", f"MCP server {server_id!r} does not offer {tool!r} now")
            if definition is not None and current.definition != definition:
                raise McpFailure("mcp_tool_changed", f"MCP server {server_id!r} changed the definition of {tool!r} "
                                                     "since the call was checked; it was not called")
            if definition is not None:  # it passed the gatekeeper: this definition is the allowed one
                self._definitions[(server_id, tool)] = definition
                self.changed.get(server_id, set()).discard(tool)
            connection = state.connection
            was_live = connection.live  # not live: the call fails before anything is sent
            try:
                return await connection.call(tool, arguments, on_progress=sink, ask=ask, model=model)
            except McpFailure as failure:
                if failure.code == "mcp_session_expired":
                    log.info("MCP server %s: %s; starting a new session", server_id, failure.message)
                    async with state.lock:
                        if state.connection is connection:
                            await self._disconnect(state)
                    if attempt == 1:
                        continue
                    failure = McpFailure("mcp_unreachable", f"MCP server {server_id!r} refused a new session too")
                    failure.sent = False
                    state.error, state.failed_at = failure, self.clock()
                    raise failure from None
                failure.sent = was_live
                if failure.code in ("mcp_unreachable", "mcp_auth_failed") or not connection.live:
                    async with state.lock:  # reconnect at the next need; the state says why until then
                        if state.connection is connection:
                            state.error, state.failed_at = failure, self.clock()
                            await self._disconnect(state, keep_error=True)
                raise
        raise AssertionError("unreachable")

    async def revive(self, server_id: str) -> None:
        """Connect a configured, enabled server that is down, unless it failed moments ago
        (RETRY_AFTER_S); failures are kept on its state, never raised."""
        state = self.servers.get(server_id)
        if state is None or not state.config.enabled or state.live:
            return
        before = self.status()
        try:
            await self._ready(state, retry=False)
        except McpFailure:
            pass
        if self.on_change is not None and self.status() != before:
            self.on_change()

    def unavailable(self, server_id: str) -> str | None:
        """Why a configured server's tools are not offered now (None: it is connected, or it is
        not configured). Our words only: the server's error text is not repeated."""
        state = self.servers.get(server_id)
        if state is None:
            return None
        if not state.config.enabled:
            return f"MCP server {server_id!r} is disabled in the settings"
        if state.live:
            return None
        failure = state.last_error
        why = f" ({failure.code})" if failure is not None else ""
        return f"MCP server {server_id!r} is unavailable{why}; its tools cannot be called now"

    def status(self) -> dict[str, Any]:
        """The servers as `mcp.servers` reports them."""
        return {
            "configError": str(self.config_error) if self.config_error else None,
            "servers": [{
                "id": s.config.id, "url": s.config.url, "enabled": s.config.enabled, "state": s.state,
                "toolCount": len(s.tools) if s.live else 0, "skipped": len(s.skipped),
                "changedTools": sorted(self.changed.get(s.config.id, ())),
                "lastError": {"code": s.last_error.code, "message": s.last_error.message} if s.last_error else None,
            } for s in self.servers.values()],
        }

    async def close(self) -> None:
        """Close every session (and stop background connects)."""
        pending = list(self._background)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        for state in list(self.servers.values()):
            await self._disconnect(state)
