"""`ToolFailure`: the one exception a tool call fails with, on every route (validation, target
resolution, authorisation, the runner, the page executor, the debugger bridge, MCP servers).

Its wire form is `protocol.errors.ErrorInfo` (code, message, phase, retryable, details) and its
codes are `protocol.errors.ToolCode`. Layers below the tools (CDP, MCP, host fetches) raise
their own errors; each is turned into a ToolFailure once, where its service runs the call.
"""

from __future__ import annotations

from typing import Any

from protocol.errors import ErrorInfo, TabwardenError, ToolCode

from host.tools.quoting import quoted

__all__ = ["ToolCode", "ToolFailure"]


class ToolFailure(TabwardenError):
    """A tool call that did not succeed, with everything the model and the UI need to know.

    `details["dispatched"]` says whether the call may have reached its target (so it must never
    be replayed); `details["effectMayHaveOccurred"]` that it may have acted. `reported`: the
    message is the browser's (the extension or the page executor said it), not the host's.
    """

    def __init__(self, code: str, message: str, *, phase: str | None = None, retryable: bool = False,
                 details: dict[str, Any] | None = None, reported: bool = False):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.phase = phase
        self.retryable = retryable
        self.details = dict(details or {})
        self.reported = reported

    @property
    def dispatched(self) -> bool:
        """True when the call may have reached the page (so it must never be replayed)."""
        return bool(self.details.get("dispatched"))

    def info(self) -> ErrorInfo:
        """The wire form."""
        return ErrorInfo(code=self.code, message=self.message, retryable=self.retryable, phase=self.phase,
                         details=dict(self.details))

    def in_own_words(self) -> "ToolFailure":
        """This failure as a text outside a fence may say it: a message the browser reported may
        carry what a page chose (a URL, an element's text), so it is quoted as data (see
        `host.tools.quoting`); the host's own message is kept."""
        if not self.reported:
            return self
        return ToolFailure(self.code, f"the browser reported {quoted(self.message)}", phase=self.phase,
                           retryable=self.retryable, details=self.details)

    @classmethod
    def from_info(cls, info: ErrorInfo) -> "ToolFailure":
        """Rebuild a failure reported by the extension (`reported`: its message is the browser's)."""
        return cls(info.code, info.message, phase=info.phase, retryable=info.retryable, details=info.details,
                   reported=True)
