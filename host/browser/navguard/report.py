"""How the guard's findings read in a tool result: a call during which the guard blocked a
navigation fails with `navigation_blocked`, naming the destination's origin; what happened on a
tab after its previous result (a navigation the page made later, one the guard blocked, a tab
it opened) is told with the tab's next result. `Watch` collects them for the call that runs."""

from __future__ import annotations

import contextvars
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

from host.gatekeeper.origins import normalize_origin
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult, failure

MAX_NOTES = 8
URL_MAX = 2000  # where a page went is its choice: always quoted, like every outside value in our words


@dataclass
class Blocked:
    """One navigation the guard stopped before its request left the browser."""

    tab_id: int
    frame_id: int
    url: str
    origin: str
    code: str  # the gatekeeper's reason code: sensitive_origin, rule_deny, scope_lock...
    reason: str
    opened_by: int | None = None  # the tab whose page opened this one (a pop-up)
    closed: bool = False  # the pop-up was closed

    def wire(self) -> dict[str, Any]:
        """JSON-ready, for result details."""
        out = {"tabId": self.tab_id, "frameId": self.frame_id, "url": self.url, "origin": self.origin,
               "reasonCode": self.code, "reason": self.reason}
        if self.opened_by is not None:
            out.update(openedBy=self.opened_by, closed=self.closed)
        return out

    def line(self) -> str:
        """One line of a result."""
        if self.opened_by is not None:
            fate = "blocked, and the tab was closed" if self.closed else "blocked"
            return f"- a new tab {self.tab_id} the page opened, for {quoted(self.url, URL_MAX)}: {fate}"
        where = f"tab {self.tab_id}" if self.frame_id == 0 else f"a frame of tab {self.tab_id}"
        return f"- {where}, to {quoted(self.url, URL_MAX)}: blocked"


@dataclass
class Happening:
    """Something that happened on a driven tab while no call ran on it."""

    kind: str  # navigated | blocked | opened
    url: str
    tab_id: int
    blocked: Blocked | None = None

    def wire(self) -> dict[str, Any]:
        """JSON-ready, for result details."""
        if self.blocked is not None:
            return {"kind": self.kind, "code": ToolCode.NAVIGATION_BLOCKED, **self.blocked.wire()}
        return {"kind": self.kind, "url": self.url, "tabId": self.tab_id}

    def line(self) -> str:
        """One line of a result."""
        if self.blocked is not None:
            return (f"{self.blocked.line()} ({ToolCode.NAVIGATION_BLOCKED}: {quoted(self.blocked.origin)} is out of reach: "
                    f"{self.blocked.reason})")
        if self.kind == "opened":
            return f"- the page opened a new tab {self.tab_id} at {quoted(self.url, URL_MAX)}"
        return f"- the page navigated to {quoted(self.url, URL_MAX)}"


@dataclass
class Findings:
    """What the guard saw during one call (filled by its events)."""

    blocked: list[Blocked] = field(default_factory=list)
    opened: list[tuple[int, str]] = field(default_factory=list)  # new tabs the call's page opened
    held_hop: str = ""  # where a redirect of the call's own navigation tried to take it (another site)


def blocked_result(result: ToolResult, blocked: list[Blocked], tab_id: int | None, *,
                   loads_page: bool = False) -> ToolResult:
    """The call's result as a `navigation_blocked` failure: where the page tried to go, and, when
    the page itself is still there (only a frame or a pop-up was stopped), what the call did.

    A call whose job is to show a page (`loads_page`: navigate, tab_open, history moves) that did
    show it has done its job even though the page's own frames or pop-ups were stopped: it stays
    a success, and the blocked requests are listed after it."""
    first = blocked[0]
    left_page = any(b.frame_id == 0 and b.opened_by is None for b in blocked)
    if loads_page and result.ok and not left_page:
        note = (f"While the page loaded, the browser blocked what it tried to load from where this task may not "
                f"reach ({ToolCode.NAVIGATION_BLOCKED}; nothing was sent there):")
        return msgspec.structs.replace(result, text="\n".join([result.text, note, *(b.line() for b in blocked)]),
                                       details={**result.details, "blocked": [b.wire() for b in blocked]})
    message = (f"the page tried to go to {quoted(first.origin)}, which this task may not reach ({first.reason}); the browser "
               "blocked the request, so nothing was sent there.")
    if left_page:
        message += (" The tab now shows the browser's blocked-page notice instead of the page: earlier refs are invalid;"
                    " navigate to a page to go on.")
    details = {**result.details, "dispatched": True, "effectMayHaveOccurred": True, "blockedOrigin": first.origin,
               "blockedUrl": first.url, "blocked": [b.wire() for b in blocked]}
    for key in ("navigatedTo", "changed"):
        if left_page:
            details.pop(key, None)
    problem = ToolFailure(ToolCode.NAVIGATION_BLOCKED, message, phase="settle", details=details)
    out = failure(result.tool, problem, tab_id=tab_id)
    lines = [out.text, *(b.line() for b in blocked)]
    if not left_page and result.text:
        lines.append(f"What the call itself did:\n{result.text}")
    return msgspec.structs.replace(out, text="\n".join(lines), result_tab_id=result.result_tab_id if not left_page else None)


def held_result(result: ToolResult, hop: str, tab_id: int | None) -> ToolResult:
    """The call's result when its navigation redirected to another site and the guard held the
    hop: nothing was sent there. The call's path judges the hop like a URL of its own (see
    `host/calls/hops.py`)."""
    origin = normalize_origin(hop).text
    problem = ToolFailure(ToolCode.REDIRECT_HELD,
                          f"the page redirected to {quoted(origin)} (another site); the browser held that request, so "
                          "nothing was sent there yet", phase="settle",
                          details={**result.details, "dispatched": True, "hopUrl": hop, "hopOrigin": origin})
    out = failure(result.tool, problem, tab_id=tab_id)
    return msgspec.structs.replace(out, text=f"{out.text}\nRedirect to: {quoted(hop, URL_MAX)}")


def with_earlier(result: ToolResult, tab_id: int, earlier: list[Happening]) -> ToolResult:
    """The result with what happened on its tab since the previous result, first."""
    shown = earlier[-MAX_NOTES:]
    head = f"Since the previous result on tab {tab_id}:"
    if len(earlier) > len(shown):
        head += f" ({len(earlier) - len(shown)} earlier events left out)"
    note = "\n".join([head, *(h.line() for h in shown)])
    details = {**result.details, "sinceLastCall": [h.wire() for h in shown]}
    return msgspec.structs.replace(result, text=f"{note}\n{result.text}", details=details)


# The call running in this task (set by the browser service around its runner), so that a tab a
# runner creates and guards is watched for that call.
current_watch: contextvars.ContextVar["Watch | None"] = contextvars.ContextVar("tabwarden_guard_watch", default=None)


@dataclass
class Watch:
    """A call running on a tab: what the guard sees meanwhile is its to report."""

    thread_id: str
    tool: str
    tab_id: int | None
    tabs: set[int] = field(default_factory=set)  # every tab watched for this call
    findings: Findings = field(default_factory=Findings)
    earlier: list[Happening] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)
    spent_s: float = 0.0  # the guard's own time on this call (protect, begin, finish)
    loads_page: bool = False  # the call's job is to show a page (see `blocked_result`)
