"""The page executor's read tools (see their declarations for which runner each has).

Reads never install the dialog patch and are retry-safe: when the page stops answering (it
reloaded, or the executor was lost) the call is sent once more, to a freshly injected executor.
"""

from __future__ import annotations

from typing import Any, TYPE_CHECKING

from host.browser import snapshots
from host.tools.call import ToolCall
from host.tools.params import content_params
from host.tools.failure import ToolCode, ToolFailure
from host.tools.browser_params import ExtractParams, WaitForParams
from host.tools.result import ToolResult, success
from host.browser.wire import ExecuteResult

if TYPE_CHECKING:
    from host.browser.gateway import BrowserGateway

DEFAULT_DEADLINE_MS = 15_000
EXTRACT_WINDOW = 8000


def deadline_ms(call: ToolCall) -> int:
    """15 s per call; wait_for gets its wait plus a second, and never less than 31 s."""
    if isinstance(call.params, WaitForParams):
        wanted = min(call.params.time_ms if call.params.time_ms is not None else 30_000, 30_000)
        return max(wanted + 1000, 31_000)
    return DEFAULT_DEADLINE_MS


async def run_read(call: ToolCall, browser: "BrowserGateway") -> ExecuteResult:
    """Send a read to the page executor; one resend when the page did not answer. The read runs
    only while the tab shows the URL it was judged for (`target_changed` otherwise; see
    `BrowserTools.run` for the host's record of the tab)."""
    assert call.tab_id is not None
    params = content_params(call.params)
    judged = call.target.url if call.target is not None and call.target.url else None

    async def send() -> ExecuteResult:
        return await browser.bridge.content(call.tab_id, call.tool, params, write=False,  # type: ignore[arg-type]
                                            deadline_ms=deadline_ms(call), expect_url=judged)

    try:
        return await send()
    except ToolFailure as exc:
        if exc.code != ToolCode.NO_REPLY:
            raise
    result = await send()
    call.details["retriedAfterNoReply"] = True
    return result


async def read_tool(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """A read whose answer is the page executor's text. A snapshot that finds an empty tree falls
    back to the accessibility tree (through CDP)."""
    try:
        result = await run_read(call, browser)
    except ToolFailure as exc:
        if exc.code != ToolCode.EMPTY_TREE or call.tool != "read_page":
            raise
        return await _empty_tree_fallback(call, browser, exc)
    details = dict(call.details)
    full = getattr(call.params, "mode", None) == "full"
    summary = snapshots.record(browser.refs, call.tab_id, result.snapshot, baseline=not full)  # type: ignore[arg-type]
    if summary:
        details.update(summary)
    if result.scroll is not None:
        details["scroll"] = result.scroll
    browser.routes.touch(call.thread_id, call.tab_id, wrote=False)  # type: ignore[arg-type]
    return success(call.tool, result.result_text, tab_id=call.tab_id, details=details)


def window(text: str, start: int) -> tuple[str, dict[str, Any]]:
    """The 8000-character window of an extracted text from `start`, with the paging note."""
    total = len(text)
    if start >= total and total:
        raise ToolFailure(ToolCode.INVALID_PARAMS, f"fromChar={start} is past the end of the text ({total} characters)",
                          phase="validate", details={"dispatched": True, "totalChars": total})
    end = min(start + EXTRACT_WINDOW, total)
    piece = text[start:end]
    info = {"fromChar": start, "toChar": end, "totalChars": total}
    if end < total:
        piece += f"\n\n[more content ({total} characters in total); continue with fromChar={end}]"
        info["nextFromChar"] = end
    elif start > 0:
        piece += "\n\n[end of text reached]"
    return piece, info


async def extract(call: ToolCall, browser: "BrowserGateway") -> ToolResult:
    """Markdown of the page (or of the `scope` ref's subtree), served in windows of 8000 chars."""
    assert isinstance(call.params, ExtractParams)
    result = await run_read(call, browser)
    piece, info = window(result.result_text, call.params.from_char)
    details = {**call.details, **info, "truncatedAtSource": bool((result.extracted or {}).get("truncated"))}
    browser.routes.touch(call.thread_id, call.tab_id, wrote=False)  # type: ignore[arg-type]
    return success(call.tool, piece, tab_id=call.tab_id, details=details)


async def _empty_tree_fallback(call: ToolCall, browser: "BrowserGateway", empty: ToolFailure) -> ToolResult:
    """The snapshot found nothing: outline the accessibility tree instead, or say that it is empty too."""
    from host.browser.l2.fallback import ax_outline

    try:
        outline = await ax_outline(call, browser)
    except ToolFailure as exc:
        raise ToolFailure(ToolCode.EMPTY_TREE, f"{empty.message}; the accessibility-tree fallback failed too ({exc.code}: "
                          f"{exc.message})", phase=empty.phase, retryable=empty.retryable,
                          details={**empty.details, "fallback": "ax_tree", "fallbackError": exc.code}) from None
    if outline is None:
        raise ToolFailure(ToolCode.EMPTY_TREE, f"{empty.message}; the accessibility tree is empty too: take a screenshot "
                          "and use click_xy", phase=empty.phase, retryable=False,
                          details={**empty.details, "fallback": "ax_tree"})
    browser.routes.touch(call.thread_id, call.tab_id, wrote=False)  # type: ignore[arg-type]
    return success(call.tool, outline, tab_id=call.tab_id, details={**call.details, "fallback": "ax_tree", "emptyTree": True})
