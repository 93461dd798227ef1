"""`ToolResult`: what every tool call returns, whichever service ran it.

The text is what the model reads (prefixed `[tabId=N] ` when a tab is involved); the details
are for the UI, the audit log and tests. A failed call carries its `ToolFailure` as the wire
`error` (see `host.tools.failure`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from protocol.errors import ErrorInfo

from host.tools.failure import ToolFailure


class ToolResult(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """The outcome of one tool call."""

    ok: bool
    tool: str
    text: str
    tab_id: int | None = None
    # The tab the result came from when it is not `tab_id` (an adopted child tab).
    result_tab_id: int | None = None
    error: ErrorInfo | None = None
    details: dict[str, Any] = {}
    # How far the text may be trusted and where it came from, when not what the declaration says
    # (an answer the user typed, say).
    trust: str | None = None
    provenance: str | None = None

    @property
    def code(self) -> str | None:
        """The failure code (None when the call succeeded)."""
        return self.error.code if self.error is not None else None

    @property
    def dispatched(self) -> bool:
        """Whether the call reached its target (a success always did)."""
        return bool(self.details.get("dispatched", self.ok))

    @property
    def effect_may_have_occurred(self) -> bool:
        """Whether a failed call may still have acted (so it is never replayed blindly)."""
        return bool(self.details.get("effectMayHaveOccurred"))

    def to_builtins(self) -> dict[str, Any]:
        """JSON-ready form (camelCase)."""
        return msgspec.to_builtins(self)


def tab_prefix(tab_id: int | None) -> str:
    """`[tabId=N] ` or nothing."""
    return f"[tabId={tab_id}] " if tab_id is not None else ""


def success(tool: str, text: str, *, tab_id: int | None = None, result_tab_id: int | None = None,
            details: dict[str, Any] | None = None) -> ToolResult:
    """A successful result; the tab prefix is added here."""
    return ToolResult(ok=True, tool=tool, text=tab_prefix(tab_id) + text,
                      tab_id=tab_id, result_tab_id=result_tab_id, details=details or {})


def failure(tool: str, problem: ToolFailure, *, tab_id: int | None = None) -> ToolResult:
    """A failed result: the model reads the code, the phase and whether retrying can help."""
    flags = []
    if problem.phase:
        flags.append(f"phase {problem.phase}")
    flags.append("retryable" if problem.retryable else "not retryable")
    if problem.details.get("effectMayHaveOccurred"):
        flags.append("the action may have taken effect; do not repeat it blindly")
    text = f"{tab_prefix(tab_id)}Error {problem.code} ({', '.join(flags)}): {problem.message}"
    return ToolResult(ok=False, tool=tool, text=text, tab_id=tab_id, error=problem.info(),
                      details=dict(problem.details))


def plain_failure(tool: str, problem: ToolFailure) -> ToolResult:
    """A failed result whose text is `Error <code>: <message>`, for services whose failures need
    no phase or retry hint (host-side tools, MCP servers)."""
    return ToolResult(ok=False, tool=tool, text=f"Error {problem.code}: {problem.message}", error=problem.info(),
                      details=dict(problem.details))
