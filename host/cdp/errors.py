"""Why a CDP command did not produce a result: a stable code plus readable text."""

from __future__ import annotations

from typing import Any

from protocol.errors import TabwardenError


class CdpCode:
    """Failure codes of the CDP layer."""

    PROTOCOL_ERROR = "cdp_error"  # the browser answered with a protocol error
    DOMAIN_NOT_ALLOWED = "cdp_domain_not_allowed"  # chrome.debugger does not expose the domain
    ATTACH_FAILED = "cdp_attach_failed"  # the debugger could not attach to the tab
    DETACHED = "cdp_detached"  # the debugger session ended while (or before) the command ran
    SESSION_GONE = "cdp_session_gone"  # the child session (out-of-process frame) no longer exists
    EPOCH_CHANGED = "cdp_epoch_changed"  # the tab's document lifecycle moved on since preparation
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    NOT_CONNECTED = "not_connected"
    TAB_CLOSED = "tab_closed"
    INVALID_RESULT = "invalid_result"


class CdpError(TabwardenError):
    """A CDP command that failed; `code` is one of CdpCode (or a code the extension reported)."""

    def __init__(self, code: str, message: str, *, retryable: bool = False, dispatched: bool = False,
                 details: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable
        # True when the command may have reached the browser.
        self.dispatched = dispatched
        self.details = dict(details or {})

    @property
    def cdp_message(self) -> str:
        """The browser's own error text for protocol errors ("" otherwise)."""
        return str(self.details.get("cdpMessage") or "")
