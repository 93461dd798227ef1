"""A page's session with the engine: the handshake, liveness, and the generic answers to any op
(acknowledged, rejected with a code, or an error)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from protocol.ui.common import Id, StreamCursor, SubmissionId, UiMessage
from protocol.ui.threads import EngineSnapshot

ENGINE_PROTOCOL = "tabwarden/engine-v1"

# Every code a page can get in `command.rejected` or `error`.
UiErrorCode = Literal[
    "protocol_mismatch",
    "thread_not_found",
    "turn_mismatch",
    "turn_not_steerable",
    "no_active_turn",
    "queue_full",
    "overloaded",
    "interrupted",
    "provider_error",
    "not_configured",
    "invalid_command",
    "internal",
    "not_connected",  # sent by the extension's service worker while the host is not connected
    # added by the engine: each names one refusal the UI can explain precisely
    "not_initialized",
    "thread_busy",
    "run_not_found",
    "invalid_state",
    "approval_not_found",
    "already_decided",
    "node_not_found",
    "storage_unavailable",
    # settings refusals (the gatekeeper's and the provider settings' own codes)
    "gatekeeper_unavailable",
    "invalid_rule",
    "invalid_pattern",
    "unknown_rule",
    "rule_not_removable",
    "no_store",
    "invalid_list",
    "rule_not_allowed",
    "builtin_pattern",
    "unknown_pattern",
    "pattern_not_removable",
    "unknown_tool",
    "policy_locked",
    "invalid_policy",
    "invalid_case",  # a what-if case whose target facts do not fit
    "invalid_provider",
    "provider_not_found",
    # built-ins
    "invalid_key",
    "value_too_long",
    "memory_full",
    "artifact_not_found",
    "browser_unavailable",
    # MCP servers
    "invalid_mcp_server",
    "invalid_mcp_config",
    "mcp_server_exists",
    "mcp_server_not_found",
    "mcp_origin_change_refused",
    "mcp_unavailable",
    # skills and plugins (host/skills, host/plugins)
    "not_a_skill",
    "missing_front_matter",
    "invalid_front_matter",
    "invalid_name",
    "body_too_large",
    "unsafe_path",
    "symlink",
    "archive_too_large",
    "too_many_files",
    "file_too_large",
    "bad_archive",
    "not_text",
    "skill_exists",
    "skill_not_found",
    "skill_of_plugin",
    "skill_disabled",
    "skill_changed",
    "skill_broken",
    "hash_mismatch",
    "not_a_plugin",
    "invalid_manifest",
    "missing_file",
    "plugin_exists",
    "plugin_not_found",
    "server_exists",
    "review_not_found",
    "unreadable_source",
]
ERROR_CODES: tuple[str, ...] = get_args(UiErrorCode)


# ---------------------------------------------------------------- ops (page → engine)


class Initialize(UiMessage, tag="initialize", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    # The page's own id (kept across reconnects): command receipts are keyed on it.
    client_id: Id
    subscribe_thread_id: Id | None = None


class PingOp(UiMessage, tag="ping", kw_only=True):
    submission_id: SubmissionId


# ---------------------------------------------------------------- events (engine → page)


class Initialized(UiMessage, tag="initialized", kw_only=True):
    submission_id: SubmissionId
    protocol: str
    schema_hash: str
    snapshot: EngineSnapshot | None = None


class ReloadRequired(UiMessage, tag="fatal.reload_required", kw_only=True):
    submission_id: SubmissionId | None = None
    protocol: str
    schema_hash: str
    message: str


class CommandAck(UiMessage, tag="command.ack", kw_only=True):
    """The command is durable (not: its continuation has finished)."""

    submission_id: SubmissionId
    thread_id: Id | None = None
    run_id: Id | None = None
    turn_id: Id | None = None
    node_id: Id | None = None
    revision: int | None = None
    replayed: bool = False


class CommandRejected(UiMessage, tag="command.rejected", kw_only=True):
    """The command changed nothing; `code` says why."""

    submission_id: SubmissionId
    code: str
    message: str
    thread_id: Id | None = None
    revision: int | None = None
    replayed: bool = False


class PongEvent(UiMessage, tag="pong", kw_only=True):
    submission_id: SubmissionId


class ErrorEvent(UiMessage, tag="error", kw_only=True):
    submission_id: SubmissionId | None = None
    thread_id: Id | None = None
    code: str
    message: str
    retryable: bool = False
    # For provider errors: auth | rate_limit | network | bad_model | bad_request | server | protocol.
    error_kind: str | None = None
    provider_details: dict[str, Any] | None = None
    stream: StreamCursor | None = None
