"""The seam between the loop and whatever runs tools (the browser gateway today, MCP later).

The loop owns authorisation: it asks the gatekeeper, waits for an approval, and re-checks at
dispatch. An executor owns the rest: parameter validation, target resolution, per-tab
serialisation, and the call itself. `execute` re-resolves the target while holding the tab and
hands it to the loop's `authorize` callback before anything is sent, so the final check sees
the target exactly as it will be acted on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from host.providers.model import ToolSchema


class ToolError(Exception):
    """A tool call that did not succeed (validation, target, dispatch or the tool itself)."""

    def __init__(self, code: str, message: str, *, retryable: bool = False, dispatched: bool = False,
                 effect_may_have_occurred: bool = False, details: dict[str, Any] | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retryable = retryable
        self.dispatched = dispatched
        self.effect_may_have_occurred = effect_may_have_occurred
        self.details = dict(details or {})


@dataclass
class Prepared:
    """A validated call with its resolved target, as the gatekeeper and the approval card need it."""

    tool: str
    params: dict[str, Any]  # normalised (validated, defaults applied), shown in full for approval
    origin: str = ""  # the target's origin ("" when the call has none)
    tab_id: int | None = None
    # Element facts for the gatekeeper (e.g. {"input_type": "password"}).
    target: dict[str, Any] | None = None
    # The acted-on element's line from the latest snapshot.
    target_line: str | None = None
    # Whether the extension may script the target origin (None: not a page call).
    site_access: bool | None = None
    handle: Any = field(default=None, repr=False)  # the executor's own state


@dataclass
class Outcome:
    """What a dispatched call returned."""

    ok: bool
    text: str
    code: str | None = None
    tab_id: int | None = None
    dispatched: bool = True
    effect_may_have_occurred: bool = False
    details: dict[str, Any] = field(default_factory=dict)


Authorize = Callable[[Prepared], Awaitable[None]]
"""The loop's dispatch-phase check: raises ToolError to stop the call before it is sent."""


class ToolExecutor(Protocol):
    """Runs tools for the loop."""

    def tools(self) -> list[ToolSchema]:
        """The tools this executor can run, with their parameter schemas, for the provider."""
        ...

    async def prepare(self, thread_id: str, tool: str, params: dict[str, Any]) -> Prepared:
        """Validate and resolve a call (raises ToolError). Sends nothing that acts."""
        ...

    async def execute(self, thread_id: str, prepared: Prepared, authorize: Authorize) -> Outcome:
        """Re-resolve the target under the tab's lock, call `authorize` with it, then run the call.
        Failures after dispatch come back as an Outcome with ok=False, never as a replay."""
        ...

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A turn starts: bind the submission's tab (when `bound`) and lift a manual-takeover pause."""
        ...

    def end_turn(self, thread_id: str) -> None:
        """A turn ended: forget its driven tabs and any floating target."""
        ...


# Optional, found with getattr (the engine works without them):
#   hand_over(thread_id)                  the run waits on the user: drive no tab meanwhile
#   async watch(thread_id, request, recheck) -> {"kind": "submit"|"cancel", ...}
#                                         watch_page's condition, until it holds (recheck(origin)
#                                         returns why the watch may not go on at a new origin)
#   async refresh_tools(thread_id)        at each turn start, before the first model step: tools
#                                         that come from elsewhere are fetched (bounded; never raises)
#   async aclose()                        the engine closes: release connections
# host.builtins.executor.BuiltinExecutor implements hand_over and watch; host.mcp.executor.McpExecutor
# implements refresh_tools and aclose and forwards the others to its inner executor.
