"""`ToolService`: what the router needs from each family of tools (the browser's, the host's own
built-ins, MCP servers', the engine's interactions). The wiring registers one per family under
the name the declarations use (`Runner.service`).
"""

from __future__ import annotations

import contextlib
from typing import Any, AsyncContextManager

from host.tools.call import ToolCall
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec


class ToolService:
    """Base of every service; the defaults suit a service whose calls need no target and no hold."""

    def offers(self, spec: ToolSpec) -> bool:
        """Whether this host can run `spec` now (e.g. a download needs a connected browser)."""
        return True

    def listed(self) -> list[ToolSpec]:
        """Tools this service declares at run time (an MCP server's), beside the catalog's."""
        return []

    def instructions(self) -> str:
        """What this service adds to the model's instructions (the installed skills' listing);
        empty for nothing."""
        return ""

    def unavailable(self, name: str) -> str | None:
        """Why `name`, a tool of this service that is not offered now, cannot be called (a server
        that is down, say); None when the service does not know the name."""
        return None

    async def revive(self, name: str) -> None:
        """Try once more to offer `name`, a tool `unavailable` explained (its server may be back
        since the turn started); bounded, never raises."""

    async def resolve(self, call: ToolCall) -> ToolCall:
        """The call on its target, as it is now; sends nothing that acts. Raises ToolFailure."""
        from host.tools.call import Target

        return call.resolved(Target())

    async def locate(self, call: ToolCall) -> ToolCall:
        """The call placed where `hold` needs it, found more cheaply than by `resolve` and never
        judged (services without a place to hold return it as it is). Raises ToolFailure."""
        return call

    def holds_quietly(self, call: ToolCall) -> bool:
        """Whether holding the located call before it is judged shows nothing new to the user
        (no indicator, no guard put on a tab), so that a call may be judged under its hold."""
        return True

    def hold(self, call: ToolCall) -> AsyncContextManager[Any]:
        """What the final resolution, the final check and the run happen under (the tab's queue
        for page tools)."""
        return contextlib.nullcontext()

    async def run(self, call: ToolCall, runner: Any) -> ToolResult:
        """Run `call` with its declared runner; failures come back as a ToolResult, never raised."""
        raise NotImplementedError

    def begin_turn(self, thread_id: str, tab_id: int | None, *, bound: bool) -> None:
        """A turn starts: bind the submission's tab (when `bound`), lift a manual-takeover pause."""

    def end_turn(self, thread_id: str) -> None:
        """A turn ended: forget what it drove."""

    def hand_over(self, thread_id: str) -> None:
        """The run waits on the user: drive nothing meanwhile."""

    async def refresh(self, thread_id: str) -> None:
        """A turn starts: fetch tools that come from elsewhere (bounded; never raises)."""

    async def aclose(self) -> None:
        """The host closes: release connections."""
