"""Browser-tool failures: a stable code, readable text, the phase it happened in, and whether a
retry (after a fresh read_page) can help. The same shape comes back from the page executor."""

from __future__ import annotations

from typing import Any

from protocol.errors import ErrorInfo


class Code:
    """Failure codes a browser tool call can end with."""

    # refused before anything was sent
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_PARAMS = "invalid_params"
    UNSUPPORTED = "unsupported"
    DENIED = "denied"
    APPROVAL_REQUIRED = "approval_required"
    GATEKEEPER_UNAVAILABLE = "gatekeeper_unavailable"
    PAUSED = "paused"
    NO_TARGET = "no_target"
    TAB_CLOSED = "tab_closed"
    NOT_WEB_PAGE = "not_web_page"
    TARGET_CHANGED = "target_changed"
    NOT_CONNECTED = "not_connected"
    NO_HISTORY = "no_history"
    # from the page executor
    STALE_REF = "stale_ref"
    AMBIGUOUS_TARGET = "ambiguous_target"
    DETACHED = "detached"
    NOT_VISIBLE = "not_visible"
    DISABLED = "disabled"
    NOT_EDITABLE = "not_editable"
    NOT_STABLE = "not_stable"
    OCCLUDED = "occluded"
    UNSUPPORTED_FRAME = "unsupported_frame"
    L1_NOT_EFFECTIVE = "l1_not_effective"
    OPTION_NOT_FOUND = "option_not_found"
    EMPTY_TREE = "empty_tree"
    # the debugger bridge (L2)
    DEBUGGER_DETACHED = "debugger_detached"  # the debugger session ended while the call ran
    DEBUGGER_CANCELLED = "debugger_cancelled"  # the user stopped debugging this tab (the infobar)
    DEBUGGER_UNAVAILABLE = "debugger_unavailable"  # the debugger cannot attach to the tab
    CDP_ERROR = "cdp_error"  # the browser refused a CDP command
    ATTACHMENT_NOT_FOUND = "attachment_not_found"
    # after dispatch
    NAVIGATION_UNCERTAIN = "navigation_uncertain"
    SAFETY_BOUNDARY_UNAVAILABLE = "safety_boundary_unavailable"
    TIMEOUT = "timeout"
    ABORTED = "aborted"
    UNKNOWN = "unknown"


class ToolFailure(Exception):
    """A tool call that did not succeed, with everything the model and the UI need to know."""

    def __init__(self, code: str, message: str, *, phase: str | None = None, retryable: bool = False,
                 details: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.phase = phase
        self.retryable = retryable
        self.details = dict(details or {})

    @property
    def dispatched(self) -> bool:
        """True when the call may have reached the page (so it must never be replayed)."""
        return bool(self.details.get("dispatched"))

    def info(self) -> ErrorInfo:
        """The wire form."""
        return ErrorInfo(code=self.code, message=self.message, retryable=self.retryable, phase=self.phase,
                         details=self.details or None)

    @classmethod
    def from_info(cls, info: ErrorInfo) -> "ToolFailure":
        """Rebuild a failure reported by the extension."""
        return cls(info.code, info.message, phase=info.phase, retryable=info.retryable, details=info.details)
