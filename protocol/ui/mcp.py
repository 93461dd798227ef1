"""MCP servers (settings page): mcp.json entries, their bearer tokens in the key store, and the
servers' state (connection, tools offered and skipped).

The host checks ids and fields as it checks mcp.json (with the path of the bad field); the
limits here only bound what a page may send.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from protocol.ui.common import Shape, SubmissionId, UiMessage

McpServerId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


# ---------------------------------------------------------------- ops (page → engine)


class McpGet(UiMessage, tag="mcp.get", kw_only=True):
    """The configured MCP servers as they are now (answered with `mcp.state`; connects nothing)."""

    submission_id: SubmissionId


class McpSaveServer(UiMessage, tag="mcp.saveServer", kw_only=True):
    """Add or edit a server in mcp.json, validated like the file; its other fields (headers,
    bearerTokenEnv, connectTimeoutSeconds) stay. `tools: null` offers every tool of the server,
    `timeoutSeconds: null` the default. `elicitation` / `sampling`: whether the server may ask
    the user questions / ask for a model answer, each on a card (off unless true). With `new`,
    an id already in use is refused (`mcp_server_exists`) instead of replaced."""

    submission_id: SubmissionId
    server: McpServerId
    url: Annotated[str, msgspec.Meta(max_length=4096)]
    enabled: bool = True
    tools: Annotated[list[Annotated[str, msgspec.Meta(max_length=256)]], msgspec.Meta(max_length=1000)] | None = None
    timeout_seconds: float | None = None
    elicitation: bool = False
    sampling: bool = False
    new: bool = False


class McpRemoveServer(UiMessage, tag="mcp.removeServer", kw_only=True):
    """Remove a server from mcp.json; its stored bearer token is forgotten with it."""

    submission_id: SubmissionId
    server: McpServerId


class McpSetToken(UiMessage, tag="mcp.setToken", kw_only=True):
    """Store a server's bearer token in the key store (`null` forgets it). Never sent back: pages
    only learn whether one is stored."""

    submission_id: SubmissionId
    server: McpServerId
    token: Annotated[str, msgspec.Meta(min_length=1, max_length=8192)] | None = None


class McpRefresh(UiMessage, tag="mcp.refresh", kw_only=True):
    """Connect one server (or every enabled one) now and list its tools; answered with
    `mcp.state` once done, which every page gets too."""

    submission_id: SubmissionId
    server: McpServerId | None = None


# ---------------------------------------------------------------- state (engine → page)


class McpError(Shape, kw_only=True):
    code: str
    message: str


class McpToolEntry(Shape, kw_only=True):
    name: str  # as offered to the model: mcp__<server>__<tool>
    tool: str  # the server's own name
    label: str = ""
    # The server changed its description or parameters since it was last allowed: its grants and
    # approval-made rules are gone and the next call asks again.
    changed: bool = False


class McpSkippedTool(Shape, kw_only=True):
    tool: str
    reason: str


class McpServerEntry(Shape, kw_only=True):
    id: str
    url: str
    origin: str  # what rules, blocked origins and grants key on
    enabled: bool
    state: Literal["disabled", "connected", "failed", "idle"]
    timeout_seconds: float
    elicitation: bool = False  # it may ask the user questions (each on a card)
    sampling: bool = False  # it may ask for a model answer (each allowed on a card)
    allow_list: list[str] | None = None
    header_names: list[str] = []  # never their values
    bearer_token_env: str | None = None
    token: Literal["stored", "env", "none", "unavailable"]
    last_error: McpError | None = None
    tools: list[McpToolEntry] = []
    skipped: list[McpSkippedTool] = []


class McpState(UiMessage, tag="mcp.state", kw_only=True):
    """The answer to `mcp.get` and `mcp.refresh`, and sent to every page after any MCP change."""

    submission_id: SubmissionId | None = None
    servers: list[McpServerEntry] = []
    # mcp.json cannot be used (MCP is off as a whole): the problems, with their paths.
    config_error: str | None = None
