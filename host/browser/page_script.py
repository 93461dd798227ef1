"""`run_javascript`: the model's script in the top frame's main world, through the extension.

A write like any other (a default rule denies it until the user allows it for a site). The page's
own policy has the last word: a Content Security Policy without 'unsafe-eval' refuses the script,
and that is reported as such rather than worked around through the debugger. The script's own
exception, a syntax error and a timeout are results the model can act on, not host errors.
"""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.browser_params import RunJavascriptParams
from host.browser.results import dialog_lines
from host.tools.result import ToolResult, success
from host.browser.target import get_tab

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

BRIDGE_SLACK_S = 10.0  # patching dialogs, injecting and restoring, on top of the script's own time

_REFUSALS = {
    "csp": ("csp_blocked", "the page's Content Security Policy forbids running script text here (no 'unsafe-eval'); "
                           "use the page tools (read_page, click, type) instead"),
    "syntax": ("script_syntax_error", "the script does not parse"),
    "exception": ("script_exception", "the script threw"),
    "timeout": ("timeout", "the script did not finish in time"),
    "stuck": ("timeout", "the page is stuck in the script"),
    "no_answer": ("navigation_uncertain", "the page gave no answer"),
    "target_changed": ("target_changed", "the tab changed after the check; the script did not run"),
}
_NOT_RUN = frozenset({"csp", "syntax", "target_changed"})  # refused before any of the script ran
MAX_TEXT = 20_000  # the page side is not trusted to have clipped it


async def run_javascript(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Run the script, then report its value (or why it failed), dialogs it opened, and whether
    the tab navigated meanwhile."""
    params = call.params
    assert isinstance(params, RunJavascriptParams) and call.target is not None
    tab_id = call.target.tab_id
    before = call.target.url
    try:
        answer = await browser.bridge.api("page.runScript", tab_id, params.code, params.timeout_ms, call.target.origin,
                                       timeout=params.timeout_ms / 1000 + BRIDGE_SLACK_S)
    except ToolFailure as exc:
        if exc.code not in (ToolCode.TIMEOUT, ToolCode.ABORTED, "cancelled"):
            raise
        # The script was handed to the page: it may have run, whatever the link says.
        raise ToolFailure(exc.code, f"{exc.message}; the script may have run", phase="execute", retryable=False,
                          details={**exc.details, "dispatched": True, "effectMayHaveOccurred": True}) from None
    browser.routes.touch(call.thread_id, tab_id, wrote=True)
    answer = answer if isinstance(answer, dict) else {}
    dialogs = [d for d in answer.get("dialogs") or [] if isinstance(d, dict)]
    details: dict[str, Any] = {"dispatched": True}
    if dialogs:
        details["dialogs"] = dialogs
    if answer.get("dialogGuardRestored") is False and answer.get("kind") != "stuck":
        raise ToolFailure(ToolCode.SAFETY_BOUNDARY_UNAVAILABLE, "the script ran but the page's dialog functions could not be "
                          "restored; reload the page", phase="recover",
                          details={**details, "effectMayHaveOccurred": True, "dialogInterceptionMayRemain": True})
    try:
        after = (await get_tab(browser.bridge, tab_id)).url
    except ToolFailure:
        after = ""
    if after and after != before:
        browser.refs.forget(tab_id)
        details["navigatedTo"] = after
    if not answer.get("ok"):
        kind = str(answer.get("kind") or "no_answer")
        code, what = _REFUSALS.get(kind, _REFUSALS["no_answer"])
        message = str(answer.get("message") or "")[:1000]
        if answer.get("name") and kind in ("exception", "syntax"):
            message = f"{answer['name']}: {message}"
        details.update({"kind": kind, "effectMayHaveOccurred": kind not in _NOT_RUN})
        if kind == "target_changed":
            details["dispatched"] = False
        if kind == "stuck" and answer.get("dialogGuardRestored") is False:
            details["dialogInterceptionMayRemain"] = True
        if answer.get("stack"):
            details["stack"] = str(answer["stack"])[:1500]
        raise ToolFailure(code, f"{what}: {message}" if message else what, phase="execute", retryable=False, details=details)
    text = str(answer.get("text", ""))[:MAX_TEXT]
    kind_of_value = str(answer.get("type", ""))[:20]
    details.update({"type": kind_of_value, "length": answer.get("length"), "truncated": bool(answer.get("truncated"))})
    lines = [f"The script ran in the page's main world; it returned ({kind_of_value}):", text]
    if answer.get("truncated"):
        lines.append(f"[result cut at {len(text)} of {answer.get('length')} characters]")
    if dialogs:
        lines.append(dialog_lines(dialogs))
    if "navigatedTo" in details:
        lines.append(f"The tab navigated to {after}; every earlier ref is invalid.")
    else:
        lines.append("The page may have changed: read_page again before acting on earlier refs.")
    return success(call.tool, "\n".join(lines), tab_id=tab_id, details=details)
