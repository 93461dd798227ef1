"""`InteractionTools`: the engine's own tools (questions to the user, hand-overs, page watches,
scheduled resumes; their declarations name `interactions`) as a router service.

Such a call does not act: once authorised, the loop persists its request with the call and the
run's `waiting_interaction` state (`CallProcessor`, at dispatch), and running it means waiting
for the answer: from the user, the deadline, or (a page watch) the page watcher. The runners are
the `Kind`s of interaction_kinds.py. After a restart the loop waits on the stored request again
(`wait`), with the time it has left.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from host.calls.service import ToolService
from host.engine.interaction_kinds import Kind
from host.engine.records import WaitRow
from host.tools.call import Target, ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult
from host.tools.spec import ToolSpec

if TYPE_CHECKING:
    from host.engine.parts import EngineParts

log = logging.getLogger("tabwarden.engine")

NO_WATCHER = "this host cannot watch pages (no browser is connected)"


class InteractionTools(ToolService):
    """The interaction tools of one engine."""

    def __init__(self, engine: "EngineParts"):
        self.engine = engine

    def _browser(self) -> Any:
        return self.engine.tools.services.get("browser")

    def offers(self, spec: ToolSpec) -> bool:
        """Questions are always possible; watching a page needs the browser."""
        return spec.target == "none" or self._browser() is not None

    async def resolve(self, call: ToolCall) -> ToolCall:
        """A watch acts on a tab (judged at its origin; site access only to read its text)."""
        if call.spec.target == "none":
            return call.resolved(Target())
        browser = self._browser()
        if browser is None:
            raise ToolFailure(ToolCode.UNSUPPORTED, NO_WATCHER, phase="resolve")
        return await browser.resolve(call)

    async def run(self, call: ToolCall, kind: Kind) -> ToolResult:
        """Wait for the answer to the request the loop persisted for this call."""
        row = next(iter(self.engine.interactions.pending(call.thread_id)), None)
        if row is None:
            raise ToolFailure(ToolCode.INTERNAL, f"no pending request for {call.tool}", phase="execute")
        return await self.wait(row, kind, call)

    async def wait(self, row: WaitRow, kind: Kind, call: ToolCall | None = None) -> ToolResult:
        """Wait for `row`'s answer (offering it, with a watcher when the kind has one) and read it."""
        engine = self.engine
        answered = engine.interactions.settled(row.id)
        if answered is None:
            if row.deadline_at <= engine.clock():
                answered = engine.interactions.settle_or_read(row.id, {"kind": "timeout"}, "timeout")
            else:
                # While the run waits on the user it drives no tab: the user's own input there
                # does not pause it, and the page indicator goes away.
                engine.tools.hand_over(row.thread_id)
                engine.offer_interaction(row)
                watcher = asyncio.create_task(self._watch(row), name=f"watch:{row.id[:8]}") if kind.watched else None
                try:
                    answered = await engine.interactions.wait(row)
                finally:
                    if watcher is not None:
                        watcher.cancel()
                        await asyncio.gather(watcher, return_exceptions=True)
        engine.interaction_resolved(row, answered)
        reading = kind.read(answered, row.request, engine.clock() - row.requested_at)
        tool = call.tool if call is not None else str(row.request.get("kind", ""))
        details = {"interactionId": row.id, "response": answered.kind, "by": answered.by}
        error = None if reading.ok else ToolFailure(answered.kind, reading.text, details=details).info()
        return ToolResult(ok=reading.ok, tool=tool, text=reading.text, details=details, error=error,
                          trust=reading.trust, provenance=reading.provenance)

    async def _watch(self, row: WaitRow) -> None:
        """Run the page watcher until the condition holds (or the watch cannot go on), then settle
        the interaction; cancelled when the wait ends another way."""
        from host.browser.watch import watch_until

        engine = self.engine
        browser = self._browser()

        async def recheck(origin: str) -> str | None:
            return self.recheck(row, origin)

        try:
            outcome = await watch_until(browser.gateway.bridge, row.request, recheck) if browser is not None else \
                {"kind": "cancel", "note": NO_WATCHER}
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("the watcher of %s failed", row.id)
            outcome = {"kind": "cancel", "note": f"the watcher failed: {type(exc).__name__}: {quoted(str(exc))}"}
        engine.interactions.settle_or_read(row.id, outcome, "watch")

    def recheck(self, row: WaitRow, origin: str) -> str | None:
        """The watched tab moved to `origin`: why the watch may not go on there (None: it may)."""
        from host.calls.authorize import Context, Unavailable

        engine = self.engine
        params = {k: v for k, v in row.request.items() if k not in ("kind", "origin", "summary")}
        call = engine.tools.decode(row.thread_id, str(row.request.get("kind")), params)
        call = call.resolved(Target(origin=origin, tab_id=row.request.get("tabId")))
        runner = engine.runners.get(row.thread_id)
        ctx = Context(row.thread_id, row.turn_id, row.item_id, runner.policy if runner is not None else None)
        judgement = engine.authorizer.judge(call, ctx, "dispatch")
        if isinstance(judgement, Unavailable):
            return f"permission state is unavailable ({judgement.reason})"
        if judgement.verdict != "allow":
            # The note is read unfenced: the origin the page went to is quoted as data.
            where = quoted(origin) if origin else "another page"
            return f"the tab moved to {where}, where watching needs permission again ({judgement.reason})"
        return None
