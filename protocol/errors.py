"""Structured errors: a stable machine-readable code plus readable text."""

from __future__ import annotations

from typing import Any

import msgspec


class ErrorCode:
    """Stable error codes used on the wire and in logs."""

    # framing and decoding
    BAD_FRAME = "bad_frame"  # not UTF-8 JSON, or not an object
    FRAME_TOO_LARGE = "frame_too_large"
    CORRUPT_STREAM = "corrupt_stream"  # length prefix cannot be trusted; the link closes
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"  # known type, bad field
    TOO_DEEP = "too_deep"
    STRING_TOO_LONG = "string_too_long"
    ARRAY_TOO_LONG = "array_too_long"
    TOO_MANY_KEYS = "too_many_keys"
    TOO_MANY_NODES = "too_many_nodes"
    CHUNK_ERROR = "chunk_error"
    # session
    PROTOCOL_MISMATCH = "protocol_mismatch"
    NOT_READY = "not_ready"  # a request before the handshake
    FORBIDDEN_ORIGIN = "forbidden_origin"
    # requests
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DISCONNECTED = "disconnected"
    UNSUPPORTED = "unsupported"
    NOT_FOUND = "not_found"
    INTERNAL = "internal"


class ToolCode:
    """Stable codes a tool call can end with, whoever reports it (the host, the page executor,
    the debugger bridge, an MCP server). Generated for the extension into `generated/tools.js`."""

    # refused before anything was sent
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_PARAMS = "invalid_params"
    UNSUPPORTED = "unsupported"
    UNAVAILABLE = "unavailable"  # the subsystem behind the tool is not there (no engine, no browser)
    DENIED = "denied"
    APPROVAL_REQUIRED = "approval_required"
    GATEKEEPER_UNAVAILABLE = "gatekeeper_unavailable"
    STORAGE_UNAVAILABLE = "storage_unavailable"  # the database does not answer: denied until it heals
    AUTHORIZATION_CHANGED = "authorization_changed"  # the final check no longer allows what was approved
    NO_SITE_ACCESS = "no_site_access"
    HOST_PERMISSION_REQUIRED = "host_permission_required"  # the extension may not script the page
    PAUSED = "paused"
    NO_TARGET = "no_target"
    TAB_CLOSED = "tab_closed"
    NOT_WEB_PAGE = "not_web_page"
    TARGET_CHANGED = "target_changed"
    NOT_CONNECTED = "not_connected"
    NO_HISTORY = "no_history"
    INVALID_MESSAGE = "invalid_message"
    INJECT_FAILED = "inject_failed"
    GUARD_UNAVAILABLE = "guard_unavailable"  # the navigation guard could not be put in place
    # from the extension's API bridge (browser.call)
    NOT_FOUND = "not_found"  # the tab, window or group named does not exist
    BROWSER_API_ERROR = "browser_api_error"  # any other refusal of an extension API
    # the user's answer to an approval
    DECLINED = "declined"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"
    # from the page executor
    STALE_REF = "stale_ref"
    AMBIGUOUS_TARGET = "ambiguous_target"
    DETACHED = "detached"
    NOT_VISIBLE = "not_visible"
    DISABLED = "disabled"
    NOT_EDITABLE = "not_editable"
    NOT_FOCUSABLE = "not_focusable"  # keys were asked for on an element that cannot take the focus
    NOT_STABLE = "not_stable"
    OCCLUDED = "occluded"
    UNSUPPORTED_FRAME = "unsupported_frame"
    L1_NOT_EFFECTIVE = "l1_not_effective"
    OPTION_NOT_FOUND = "option_not_found"
    EMPTY_TREE = "empty_tree"
    NO_REPLY = "no_reply"  # the page stopped answering (after a write: outcome unknown)
    # the debugger bridge
    DEBUGGER_DETACHED = "debugger_detached"  # the debugger session ended while the call ran
    DEBUGGER_CANCELLED = "debugger_cancelled"  # the user stopped debugging this tab (the infobar)
    DEBUGGER_UNAVAILABLE = "debugger_unavailable"  # the debugger cannot attach to the tab
    CDP_ERROR = "cdp_error"  # the browser refused a CDP command
    CDP_ATTACH_FAILED = "cdp_attach_failed"
    CDP_DETACHED = "cdp_detached"
    CDP_DOMAIN_NOT_ALLOWED = "cdp_domain_not_allowed"
    ATTACHMENT_NOT_FOUND = "attachment_not_found"
    # after dispatch
    NAVIGATION_UNCERTAIN = "navigation_uncertain"
    NAVIGATION_BLOCKED = "navigation_blocked"  # the guard stopped a navigation to a denied origin
    REDIRECT_HELD = "redirect_held"  # a redirect of the agent's own navigation to another site waits for a judgement
    SAFETY_BOUNDARY_UNAVAILABLE = "safety_boundary_unavailable"
    TIMEOUT = "timeout"
    ABORTED = "aborted"
    HTTP_ERROR = "http_error"
    DOWNLOAD_FAILED = "download_failed"
    MCP_TOOL_ERROR = "mcp_tool_error"  # the MCP server's tool answered with isError
    INTERNAL = "internal"
    UNKNOWN = "unknown"


def code_values(codes: type) -> dict[str, str]:
    """The NAME -> value table of a code class, for generated copies."""
    return {name: value for name, value in vars(codes).items() if name.isupper() and isinstance(value, str)}


class ErrorInfo(msgspec.Struct, rename="camel", forbid_unknown_fields=True, kw_only=True):
    """The one failure shape: carried by failure and protocol_error frames, by tool results and by
    the control link's refusals. Every field is always present on the wire."""

    code: str
    message: str
    retryable: bool = False
    # Where in a multi-step action the failure happened (resolve, precheck, execute, ...).
    phase: str | None = None
    details: dict[str, Any] | None = None


class TabwardenError(Exception):
    """The root of the errors Tabwarden raises on purpose. Each layer has one root below it (the
    protocol's `ProtocolError`, the tools' `ToolFailure`, the gatekeeper's, the store's, the
    providers', CDP's, MCP's, the control link's...), and every such error carries a stable
    `code` and a readable `message`, so the layer above maps it once, by code."""

    code: str = ErrorCode.INTERNAL
    message: str = ""


class ProtocolError(TabwardenError):
    """A frame or message that violates the contract; carries the request id when known."""

    def __init__(self, code: str, message: str, request_id: int | None = None, *, fatal: bool = False):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id
        # True when the byte stream can no longer be trusted and the link must close.
        self.fatal = fatal

    def info(self) -> ErrorInfo:
        """The wire form of this error."""
        return ErrorInfo(code=self.code, message=self.message)
