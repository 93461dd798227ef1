"""What a browser tool call returns: text for the model (always prefixed `[tabId=N] ` when a tab
is involved), plus structured details for the UI, the audit log and tests."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from host.browser.errors import ToolFailure

UNSTABLE_NOTICE = "[page may not have fully loaded]"
SNAPSHOT_DIVIDER = "--- incremental snapshot ---"
NEW_PAGE_DIVIDER = "--- new page snapshot ---"


class ToolError(msgspec.Struct, rename="camel", kw_only=True):
    """Why a call failed; every field is always present."""

    code: str
    message: str
    phase: str | None
    retryable: bool
    details: dict[str, Any]


class ToolResult(msgspec.Struct, rename="camel", omit_defaults=True, kw_only=True):
    """The outcome of one tool call."""

    ok: bool
    tool: str
    text: str
    tab_id: int | None = None
    # The tab the result came from when it is not `tab_id` (an adopted child tab).
    result_tab_id: int | None = None
    error: ToolError | None = None
    details: dict[str, Any] = {}

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
    error = ToolError(code=problem.code, message=problem.message, phase=problem.phase, retryable=problem.retryable,
                      details=dict(problem.details))
    return ToolResult(ok=False, tool=tool, text=text, tab_id=tab_id, error=error, details=dict(problem.details))


def dialog_lines(dialogs: list[dict[str, Any]] | None) -> str:
    """"The page opened N dialog(s): ..." for the dialogs the patch intercepted ("" if none)."""
    if not dialogs:
        return ""
    parts = []
    for dialog in dialogs[:20]:
        kind = str(dialog.get("kind", "dialog"))
        message = str(dialog.get("message", ""))[:200]
        if kind == "confirm":
            outcome = "auto-cancelled (returned false)"
        elif kind == "prompt":
            outcome = "auto-cancelled (returned null)"
        else:
            outcome = "closed"
        parts.append(f"- {kind}({json.dumps(message, ensure_ascii=False)}): {outcome}")
    return f"The page opened {len(dialogs)} dialog(s):\n" + "\n".join(parts)
