"""`Engine`: one per host process. It owns the engine store, the event bus, what runs wait on
(approvals and interactions, waits.py) and one runner task per busy thread. UI ops reach it through the op server in `host.ui`, a client
the host wiring builds beside it.

    engine = Engine(store, gatekeeper, tools)    # tools: the host's Router (browser, built-ins, MCP)
    await engine.start()          # recovery: re-offer approvals, pause uncertain writes, resume runs
    engine.bus.add_sink(sink)     # every event, for pages and control clients
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from protocol import ui

from host.engine import runs
from host.engine.events import COALESCE_S, EventBus
from host.calls.authorize import Authorizer
from host.calls.router import Router
from host.engine.interaction_tools import InteractionTools
from host.engine.provenance import ThreadProvenance
from host.engine.user_details import UserDetails
from host.engine.provider_source import ProviderSource
from host.engine.records import NoticeBody, WaitRow
from host.engine.store import EngineStore
from host.engine.turn import TurnRunner
from host.engine.waits import APPROVAL, DEFAULT_INTERACTION_TIMEOUT_S, INTERACTION, Settled, Waits
from host.engine.views import (EFFECT_GRANT, card_grant_of, card_grant_view, consent_view, node_view,
                               pending_approval, pending_interaction, run_view, thread_meta)
from host.store.db import Store

log = logging.getLogger("tabwarden.engine")

DEFAULT_APPROVAL_TIMEOUT_S = 300.0
INTERRUPT_WAIT_S = 5.0


class Engine:
    def __init__(self, db: Store, gatekeeper: Any, tools: Router, *, providers: ProviderSource | None = None,
                 clock: Callable[[], float] = time.time, approval_timeout_s: float | None = None,
                 coalesce_s: float = COALESCE_S):
        self.clock = clock
        self.store = EngineStore(db, clock)
        self.gatekeeper = gatekeeper
        # The engine's own tools (questions to the user, waits) join the host's.
        tools.add("interactions", InteractionTools(self))
        self.tools = tools
        self.providers = providers or ProviderSource()
        self.provenance = ThreadProvenance(self.store, UserDetails(self.providers.settings,
                                                                   self.providers.settings_file).current)
        self.authorizer = Authorizer(tools, gatekeeper, self.provenance.of)
        self._approval_timeout_s = approval_timeout_s
        self.bus = EventBus(self.store.next_epoch(), coalesce_s)
        self.approvals = Waits(self.store, clock, APPROVAL)
        self.interactions = Waits(self.store, clock, INTERACTION)
        from host.engine.tool_questions import ToolQuestions

        self.tool_questions = ToolQuestions(self)
        self.fence_key = self.store.fence_key()
        self.runners: dict[str, TurnRunner] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._closing = False

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Recover what a previous process left (see recovery.py) and resume runnable runs."""
        from host.engine.recovery import recover

        self.store.prune_receipts()
        for thread_id in recover(self):
            self.start_next(thread_id)

    async def close(self) -> None:
        """Stop runners without changing their runs (a restart recovers them), close providers."""
        self._closing = True
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self.bus.flush()
        await self.providers.close()
        await self.tools.aclose()  # e.g. MCP sessions

    # -- settings -------------------------------------------------------------------------------

    def _settings(self):
        try:
            return self.providers.settings()
        except Exception:
            return None

    def approval_timeout_s(self) -> float:
        """Seconds an approval waits (engine.json, or the 5-minute default)."""
        if self._approval_timeout_s is not None:
            return self._approval_timeout_s
        settings = self._settings()
        return settings.approval_timeout_seconds if settings is not None else DEFAULT_APPROVAL_TIMEOUT_S

    def turn_token_budget(self) -> int | None:
        """Tokens one turn may use before it pauses (None: no cap)."""
        settings = self._settings()
        return settings.turn_token_budget if settings is not None else None

    def tool_schemas(self, overrides: dict[str, Any] | None = None) -> list[Any]:
        """The tools offered to the model, optionally only some levels (asking the user is
        always possible)."""
        from host.providers.model import ToolSchema
        from host.tools.schema import provider_schema

        levels = (overrides or {}).get("enabledToolLevels")
        wanted = None if levels is None else set(levels) | {"builtin"}
        return [ToolSchema(spec.name, spec.description, provider_schema(spec)) for spec in self.tools.offered()
                if wanted is None or spec.level in wanted]

    def tool_names(self) -> frozenset[str]:
        """The names of every tool the model may call."""
        return self.tools.offered_names()

    def interaction_timeout_s(self) -> float:
        """Seconds a question to the user waits (at least 30 minutes)."""
        return max(DEFAULT_INTERACTION_TIMEOUT_S, self.approval_timeout_s())

    # -- runners --------------------------------------------------------------------------------

    def busy(self, thread_id: str) -> bool:
        """True when a run owns the thread (running, waiting, or paused for the user)."""
        return thread_id in self._tasks or bool(self.store.runs(thread_id, runs.ACTIVE))

    def start_next(self, thread_id: str) -> None:
        """Start (or resume) the thread's next run unless one is already going or paused."""
        if self._closing or thread_id in self._tasks:
            return
        live = [r for r in self.store.runs(thread_id) if r.state not in runs.TERMINAL]
        if any(r.state in runs.PAUSED for r in live):
            return
        chosen = next((r for r in live if r.state in runs.ACTIVE), None) or \
            next((r for r in live if r.state == runs.QUEUED), None)
        if chosen is None:
            return
        runner = TurnRunner(self, chosen)
        self.runners[thread_id] = runner
        task = self._tasks[thread_id] = asyncio.create_task(runner.run(), name=f"run:{chosen.id[:8]}")
        # A done callback, not a `finally`: a task cancelled before its first step never runs its body.
        task.add_done_callback(lambda _: self.runner_done(runner))

    def runner_done(self, runner: TurnRunner) -> None:
        """Called once when a runner's task ends (whatever the outcome)."""
        if self.runners.get(runner.thread_id) is runner:
            del self.runners[runner.thread_id]
            self._tasks.pop(runner.thread_id, None)
        if self._closing:
            return
        try:
            self.tools.end_turn(runner.thread_id)
        except Exception:
            log.debug("end_turn failed", exc_info=True)
        try:
            self.bus.flush(runner.thread_id)
            self.activity(runner.thread_id)
            self.queue_changed(runner.thread_id)
        except Exception:  # storage trouble: the next start_next fails closed on its own
            log.warning("could not report the end of run %s", runner.run_id, exc_info=True)
        asyncio.get_running_loop().call_soon(self.start_next, runner.thread_id)

    async def interrupt(self, thread_id: str, reason: str = "user") -> bool:
        """Stop the thread's turn: the model stream and any running tool are cancelled, a pending
        approval is settled as cancel. A paused run ends as interrupted. Returns whether anything
        was stopped."""
        task = self._tasks.get(thread_id)
        runner = self.runners.get(thread_id)
        if task is not None and runner is not None:
            runner.interrupt_reason = reason
            run = self.store.run(runner.run_id)
            if run.state == runs.QUEUED:  # picked but not started: it will never get to settle itself
                with self.store.transaction() as conn:
                    self.store.update_run(conn, run.id, state=runs.INTERRUPTED, stop_reason="interrupted")
            task.cancel()
            await asyncio.wait({task}, timeout=INTERRUPT_WAIT_S)
            return True
        paused = self.store.runs(thread_id, runs.PAUSED)
        for run in paused:
            with self.store.transaction() as conn:
                self.store.update_run(conn, run.id, state=runs.INTERRUPTED, stop_reason="interrupted",
                                      pending_tool=None)
            if run.turn_id:
                self.bus.emit(ui.TurnComplete, thread_id, turn_id=run.turn_id, run_id=run.id, stop_reason="interrupted")
        if paused:
            self.activity(thread_id)
            asyncio.get_running_loop().call_soon(self.start_next, thread_id)
        return bool(paused)

    # -- signals from other subsystems --------------------------------------------------------

    def on_alert(self, alert: Any) -> None:
        """The gatekeeper saw a denial burst: pause (interrupt) the thread and tell every page."""
        thread_id = getattr(alert, "thread_id", None)
        if not thread_id or not self.store.has_thread(thread_id):
            return
        message = str(getattr(alert, "message", "the thread was paused"))
        code = str(getattr(alert, "kind", "denial_burst"))
        self.note(thread_id, "alert", message)
        self.bus.emit(ui.AlertRaised, thread_id, code=code, message=message)
        if thread_id in self._tasks:
            asyncio.ensure_future(self.interrupt(thread_id, reason="alert"))

    def on_takeover(self, thread_id: str, info: dict[str, Any]) -> None:
        """A person used a tab this thread drives: pause (interrupt) its turn."""
        if thread_id not in self._tasks or not self.store.has_thread(thread_id):
            return
        self.note(thread_id, "paused", f"Paused: you used tab {info.get('tabId')} while the task was working on it. "
                                        "Send a message to continue.")
        asyncio.ensure_future(self.interrupt(thread_id, reason="takeover"))

    def note(self, thread_id: str, kind: str, text: str) -> None:
        """A notice in the thread (in its running turn, if any), shown to its pages."""
        runner = self.runners.get(thread_id)
        turn_id = runner.turn_id if runner is not None else None
        with self.store.transaction() as conn:
            node = self.store.append_node(conn, thread_id, "system_notice", NoticeBody(notice_kind=kind, text=text),
                                          turn_id=turn_id)
        self.emit_item(thread_id, turn_id or "", node.id, "system_notice", text=text, notice_kind=kind)

    # -- events ---------------------------------------------------------------------------------

    def emit_item(self, thread_id: str, turn_id: str, item_id: str, kind: str, *, text: str = "",
                  notice_kind: str | None = None) -> None:
        """A whole item at once (user messages, notices): start, text, complete."""
        self.bus.emit(ui.ItemStart, thread_id, turn_id=turn_id or "-", item_id=item_id, kind=kind,
                      meta=ui.ItemMeta(notice_kind=notice_kind))
        if text:
            self.bus.delta(thread_id, item_id, text=text)
        self.bus.emit(ui.ItemComplete, thread_id, item_id=item_id, result=ui.ItemResult(ok=True))

    def offer(self, approval: WaitRow) -> None:
        """Send an approval request (again, after a restart: same id, the time that remains)."""
        from host.engine.views import approval_payload

        remaining = max(0, int((approval.deadline_at - self.clock()) * 1000))
        self.bus.emit(ui.ApprovalRequest, approval.thread_id, turn_id=approval.turn_id, approval_id=approval.id,
                      item_id=approval.item_id, request=approval_payload(approval.request),
                      deadline_at=approval.deadline_at, remaining_ms=remaining)
        self.activity(approval.thread_id)

    def approval_resolved(self, approval: WaitRow, settled: Settled) -> None:
        """Tell the pages an approval was settled (its card closes)."""
        self.bus.emit(ui.ApprovalResolved, approval.thread_id, approval_id=approval.id, decision=settled.kind,
                      by=settled.by if settled.by in ("user", "timeout", "interrupt", "recovery") else "user")
        self.activity(approval.thread_id)

    def offer_interaction(self, row: WaitRow) -> None:
        """Send a question to the pages (again, after a restart: same id, the time that remains)."""
        remaining = max(0, int((row.deadline_at - self.clock()) * 1000))
        self.bus.emit(ui.InteractionRequest, row.thread_id, turn_id=row.turn_id, interaction_id=row.id,
                      item_id=row.item_id, request=row.request, deadline_at=row.deadline_at, remaining_ms=remaining)
        self.activity(row.thread_id)

    def interaction_resolved(self, row: WaitRow, answered: Settled) -> None:
        """Tell the pages a question was answered or dropped."""
        self.bus.emit(ui.InteractionResolved, row.thread_id, interaction_id=row.id, response=answered.kind,
                      by=answered.by if answered.by in ("user", "timeout", "interrupt", "recovery", "watch") else "user")
        self.activity(row.thread_id)

    def activity(self, thread_id: str) -> None:
        """Broadcast a thread's activity (running, waiting, paused) to every page."""
        self.bus.broadcast(ui.ActivityUpdated(activity=self.activity_of(thread_id)))

    def activity_of(self, thread_id: str) -> ui.Activity:
        """A thread's activity: running, pending approvals and questions, run state."""
        live = [r for r in self.store.runs(thread_id) if r.state in runs.ACTIVE]
        return ui.Activity(thread_id=thread_id, running=thread_id in self._tasks,
                           pending_approvals=len(self.approvals.pending(thread_id)),
                           pending_interactions=len(self.interactions.pending(thread_id))
                           + len(self.tool_questions.pending(thread_id)),
                           state=live[0].state if live else None)  # type: ignore[arg-type]

    def queue_changed(self, thread_id: str) -> None:
        """Send the thread's queued turns to its pages."""
        if not self.store.has_thread(thread_id):
            return
        queued = [run_view(r) for r in self.store.runs(thread_id, frozenset({runs.QUEUED}))]
        self.bus.emit(ui.QueueUpdated, thread_id, pending=queued)

    # -- snapshots ------------------------------------------------------------------------------

    def thread_snapshot(self, thread_id: str) -> ui.ThreadSnapshot:
        """The thread as a page renders it: meta, current branch, runs, pending approvals."""
        thread = self.store.thread(thread_id)
        all_runs = self.store.runs(thread_id)
        active = next((r for r in all_runs if r.state in runs.ACTIVE), None)
        return ui.ThreadSnapshot(
            meta=thread_meta(thread), nodes=[node_view(n) for n in self.store.path(thread_id)],
            active_run=run_view(active) if active else None,
            queue=[run_view(r) for r in all_runs if r.state == runs.QUEUED],
            pending_approvals=[pending_approval(a, self.clock()) for a in self.approvals.pending(thread_id)],
            pending_interactions=[pending_interaction(i, self.clock())
                                  for i in self.interactions.pending(thread_id)] + self.tool_questions.views(thread_id),
            cursor=self.bus.current(thread_id), consent=self.consent_views(thread_id))

    def consent_views(self, thread_id: str) -> list[ui.ConsentItemView]:
        """What the thread's task may commit without a question, as the panel lists it (empty,
        and logged, when the thread's history cannot be read: every commit then asks)."""
        try:
            items = self.provenance.of(thread_id).consent.items()
        except Exception:
            log.warning("the consent of thread %s cannot be read", thread_id, exc_info=True)
            return []
        return [*(consent_view(item) for item in items), *self._card_grants(thread_id)]

    def _card_grants(self, thread_id: str) -> list[ui.ConsentItemView]:
        """The commits allowed "for this task" on a card, listed beside the consent (none when the
        gatekeeper cannot say: the list only ever shows what is really granted)."""
        try:
            granted = [(tool, origin) for tool, origin in self.gatekeeper.grants.for_thread(thread_id)
                       if tool.startswith(EFFECT_GRANT)]
        except Exception:
            log.warning("the grants of thread %s cannot be read", thread_id, exc_info=True)
            return []
        return [card_grant_view(tool[len(EFFECT_GRANT):], origin) for tool, origin in granted]

    def remove_card_grant(self, thread_id: str, item_id: str) -> bool:
        """Take back a commit allowed for the task on a card (`card_grant_view`'s id); False when
        the thread holds no such grant. Raises the gatekeeper's error (nothing taken back)."""
        parsed = card_grant_of(item_id)
        if parsed is None:
            return False
        effect, origin = parsed
        return self.gatekeeper.grants.revoke(thread_id, EFFECT_GRANT + effect, origin)

    def consent_changed(self, thread_id: str) -> None:
        """Tell the thread's pages what its task may now commit."""
        self.bus.emit(ui.ConsentUpdated, thread_id, items=self.consent_views(thread_id))

    def engine_snapshot(self, thread_id: str | None = None) -> ui.EngineSnapshot:
        """What `initialized` carries: threads, pending requests, activity, epoch."""
        threads = self.store.threads()
        return ui.EngineSnapshot(
            threads=[thread_meta(t) for t in threads],
            thread=self.thread_snapshot(thread_id) if thread_id and self.store.has_thread(thread_id) else None,
            activity=[self.activity_of(t) for t in sorted({*self._tasks, *(r.thread_id for r in self.store.live_runs())})],
            pending_approvals=[pending_approval(a, self.clock()) for a in self.approvals.pending()],
            pending_interactions=[pending_interaction(i, self.clock()) for i in self.interactions.pending()],
            epoch=self.bus.epoch, storage_unavailable=getattr(self.gatekeeper, "closed_because", None) or "")
