"""`TurnRunner`: one run of the agent loop, driven by the persisted tree.

    prepare (user node, turn.start) → repeat:
        calls of the last answer without results → process each (calls.py)
        policies (reminder, stuck, forced final, token budget)
        one model call (streamed; deltas coalesced) → assistant node
    until an answer has no tool calls → turn.complete

Because every step reads the branch from the store, a runner started after a crash continues
exactly where the last committed step left off.
"""

from __future__ import annotations

import asyncio
import json
import logging
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from protocol import ui
from protocol.errors import TabwardenError

from host.engine import runs
from host.engine.calls import INTERRUPTED_TOOL, CallProcessor, call_node_id, provider_call_id
from host.engine.policies import FINAL_TEXT, REMINDER_TEXT, STUCK_REPEATS, STUCK_TEXT, turn_stats
from host.skills.context_blocks import resolve_skill_blocks
from host.engine.prompt import KERNEL_PROMPT, build_messages, environment_line, environment_page
from host.engine.records import AssistantBody, CallRef, NodeRow, NoticeBody, RunRow, ToolResultBody, UserBody
from host.engine.store import DEFAULT_TITLE, new_id

if TYPE_CHECKING:
    from host.engine.parts import EngineParts
    from host.providers.model import Completion

log = logging.getLogger("tabwarden.engine")

# Provider stop reasons that may not carry tool calls: the calls could be cut off or filtered.
_UNSAFE_WITH_CALLS = frozenset({"max_tokens", "content_filter", "refusal"})


def _title(text: str) -> str:
    """A thread title from its first message: the first line, at most 60 characters."""
    line = " ".join(text.strip().split("\n", 1)[0].split())
    return line if len(line) <= 60 else line[:59] + "…"


class AnswerRejected(TabwardenError):
    """The model's answer cannot be acted on (tool calls with a truncated or filtered answer)."""

    code = "provider_error"


class TurnRunner:
    def __init__(self, engine: "EngineParts", run: RunRow):
        self.engine = engine
        self.run_id = run.id
        self.thread_id = run.thread_id
        self.turn_id = run.turn_id or ""
        self.overrides: dict[str, Any] = run.overrides or {}
        self.policy: str | None = None
        self.calls = CallProcessor(self)
        # Why the runner's task is being cancelled (None: the host is shutting down).
        self.interrupt_reason: str | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Drive the run until it ends, pauses or the host stops (never raises, except cancellation at shutdown)."""
        from host.providers.errors import ProviderError
        from host.store.db import StoreError

        engine = self.engine
        try:
            run = engine.store.run(self.run_id)
            if run.state in runs.TERMINAL or run.state in runs.PAUSED:
                return  # removed or settled between being picked and starting
            thread = engine.store.thread(self.thread_id)
            self.policy = self.overrides.get("permissionPolicy") or thread.policy
            # Routes live in memory: a run resumed after a restart binds its submission's tab again.
            browser = run.input.get("browserContext")
            tab = (browser or {}).get("defaultTab")
            engine.tools.begin_turn(self.thread_id, tab.get("tabId") if tab else None, bound=browser is not None)
            if run.state == runs.QUEUED:
                self._prepare(run)
            else:
                self.turn_id = run.turn_id or ""
                engine.bus.emit(ui.TurnStart, self.thread_id, turn_id=self.turn_id, run_id=self.run_id)
            # The turn has started (the UI shows it); then, e.g., MCP servers connect and list their
            # tools, bounded by their connect timeouts, before the first step.
            await engine.tools.refresh(self.thread_id)
            engine.activity(self.thread_id)
            await self._loop()
        except asyncio.CancelledError:
            if self.interrupt_reason is None:
                raise  # the host is stopping: the run stays as it is, for recovery
            self._interrupted()
        except ProviderError as exc:
            code = "not_configured" if exc.kind == "not_configured" else "provider_error"
            self._failed(code, exc.describe(), retryable=exc.retryable, kind=exc.kind, details=exc.wire_details())
        except AnswerRejected as exc:
            self._failed("provider_error", str(exc), kind="protocol")
        except StoreError as exc:
            log.error("storage failed in run %s: %s", self.run_id, exc)
            self._failed("storage_unavailable", f"storage failed, the task stopped: {exc}")
        except runs.InvalidTransition as exc:
            log.error("run %s: %s", self.run_id, exc)
            self._failed("internal", str(exc))
        except Exception as exc:
            log.exception("run %s failed", self.run_id)
            self._failed("internal", f"{type(exc).__name__}: {exc}")

    def _prepare(self, run: RunRow) -> None:
        """queued → preparing: the user's message joins the tree and the turn starts."""
        engine = self.engine
        self.turn_id = new_id()
        wire = run.input
        browser = wire.get("browserContext")
        tab = (browser or {}).get("defaultTab")
        context = resolve_skill_blocks(engine, list(wire.get("attachedContext") or []))
        body = UserBody(text=str(wire.get("text", "")), context=context,
                        environment=environment_line(tab), environment_page=environment_page(tab))
        with engine.store.transaction() as conn:
            if run.anchor_id:
                sibling = engine.store.node(run.anchor_id, conn)
                node = engine.store.append_node(conn, self.thread_id, "user_message", body, turn_id=self.turn_id,
                                                parent_id=sibling.parent_id)
            else:
                node = engine.store.append_node(conn, self.thread_id, "user_message", body, turn_id=self.turn_id)
            engine.store.update_run(conn, run.id, state=runs.PREPARING, turn_id=self.turn_id)
            thread = engine.store.thread(self.thread_id, conn)
            titled = thread.title == DEFAULT_TITLE and body.text.strip()
            if titled:
                revision = engine.store.set_title(conn, self.thread_id, _title(body.text))
        if titled:
            engine.bus.emit(ui.ThreadUpdated, self.thread_id, revision=revision,
                            patch=ui.ThreadPatch(title=_title(body.text)))
        engine.bus.emit(ui.TurnStart, self.thread_id, turn_id=self.turn_id, run_id=self.run_id)
        engine.emit_item(self.thread_id, self.turn_id, node.id, "user_message", text=body.text)
        engine.consent_changed(self.thread_id)
        engine.queue_changed(self.thread_id)

    # -- the loop -------------------------------------------------------------------------------

    async def _loop(self) -> None:
        engine = self.engine
        while True:
            path = engine.store.path(self.thread_id)
            pending = self._pending_calls(path)
            if pending:
                alone = self._answer_size(path) == 1
                for ref, step, ordinal in pending:
                    if await self.calls.process(ref, step, ordinal, alone=alone):
                        self._finish("interrupted", runs.INTERRUPTED)
                        return
                continue
            stats = turn_stats(path, self.turn_id)
            finalising = stats.must_finalise
            if self._policy_notices(stats):
                path = engine.store.path(self.thread_id)
            completion, calls = await self._model_step(finalising, path)
            if calls:
                # Checked while the run is still streaming_model: the calls wait for the resume.
                if self._over_budget():
                    return
                continue
            stop = "error" if finalising else completion.stop_reason
            self._finish(stop if stop in ui.STOP_REASONS else "end", runs.COMPLETED)
            return

    def _answer_size(self, path: list[NodeRow]) -> int:
        """How many calls this turn's last answer holds."""
        for node in reversed(path):
            if node.kind == "assistant_message" and node.turn_id == self.turn_id:
                return len(node.body.calls)
        return 0

    def _pending_calls(self, path: list[NodeRow]) -> list[tuple[CallRef, int, int]]:
        """Calls of this turn's last answer that have no result yet, in order."""
        answered = {n.body.call_id for n in path if n.kind == "tool_result"}
        for node in reversed(path):
            if node.kind == "assistant_message" and node.turn_id == self.turn_id:
                body: AssistantBody = node.body
                return [(ref, body.step, i) for i, ref in enumerate(body.calls) if ref.id not in answered]
            if node.kind == "user_message" and node.turn_id == self.turn_id and not node.body.steer:
                return []
        return []

    def _policy_notices(self, stats) -> bool:
        """Add the reminders the policies call for; True when a notice was written."""
        wrote = False
        if stats.must_finalise and not stats.finalised:
            self._notice("final", FINAL_TEXT.format(n=stats.consecutive_failures), to_model=True)
            wrote = True
        elif stats.needs_reminder:
            self._notice("reminder", REMINDER_TEXT.format(n=stats.consecutive_failures), to_model=True)
            wrote = True
        stuck = stats.stuck_on()
        if stuck is not None and not stats.must_finalise:
            mark, tool = stuck
            self._notice("stuck", STUCK_TEXT.format(tool=tool, n=STUCK_REPEATS), to_model=True, key=mark)
            wrote = True
        return wrote

    def _over_budget(self) -> bool:
        engine = self.engine
        budget = engine.turn_token_budget()
        run = engine.store.run(self.run_id)
        if budget is None or run.tokens_used < budget:
            return False
        with engine.store.transaction() as conn:
            engine.store.update_run(conn, self.run_id, state=runs.PAUSED_BUDGET, stop_reason="budget_pause")
        self._notice("budget", f"This turn used {run.tokens_used} tokens, its budget is {budget}; it is paused. "
                               "Resume it to continue.")
        engine.bus.emit(ui.TurnComplete, self.thread_id, turn_id=self.turn_id, run_id=self.run_id,
                        stop_reason="budget_pause")
        return True

    async def _model_step(self, finalising: bool, path: list[NodeRow]) -> tuple["Completion", list[CallRef]]:
        from host.providers.errors import ProviderError
        from host.providers.model import ModelRequest

        engine = self.engine
        with engine.store.transaction() as conn:
            current = engine.store.run(self.run_id, conn)
            run = engine.store.update_run(conn, self.run_id, state=runs.STREAMING, step=current.step + 1)
        engine.activity(self.thread_id)
        model = self.overrides.get("model") or {}
        provider = engine.providers.get(model.get("connectionId"))
        request = ModelRequest(model=model.get("modelId") or "", system=KERNEL_PROMPT + engine.tools.instructions(),
                               messages=build_messages(path, engine.fence_key, provider.name,
                                                       getattr(provider, "accepts_images", False),
                                                       getattr(provider, "accepts_audio", False)),
                               tools=() if finalising else tuple(engine.tool_schemas(self.overrides)), max_tokens=0)
        item_id = new_id()
        engine.bus.emit(ui.ItemStart, self.thread_id, turn_id=self.turn_id, item_id=item_id, kind="assistant_message")
        completion: Completion | None = None
        streamed: list[str] = []
        try:
            completion = await self._stream(provider, request, item_id, streamed)
        except ProviderError as exc:
            if streamed:
                self._keep_partial(item_id, "".join(streamed), exc, run.step, provider.name, model)
            raise
        if completion is None:
            raise AnswerRejected("the model's stream ended without an answer")
        calls = self._calls(completion, run.step, finalising)
        usage = completion.usage
        body = AssistantBody(text=completion.text, reasoning=completion.reasoning, calls=calls, echo=completion.echo,
                             stop_reason=completion.stop_reason, step=run.step, provider=provider.name,
                             model=model.get("modelId") or provider.model,
                             usage={"input": usage.input, "output": usage.output})
        with engine.store.transaction() as conn:
            engine.store.append_node(conn, self.thread_id, "assistant_message", body, turn_id=self.turn_id,
                                     node_id=item_id)
            current = engine.store.run(self.run_id, conn)
            engine.store.update_run(conn, self.run_id, tokens_used=current.tokens_used + usage.input + usage.output)
        engine.bus.emit(ui.ItemComplete, self.thread_id, item_id=item_id, result=ui.ItemResult(ok=True))
        engine.bus.emit(ui.TokenUsage, self.thread_id, turn_id=self.turn_id,
                        usage=ui.Usage(input=usage.input, output=usage.output, cache_read=usage.cache_read,
                                       cache_write=usage.cache_write))
        if completion.tool_calls and completion.stop_reason in _UNSAFE_WITH_CALLS:
            raise AnswerRejected(f"the model asked for tools but its answer stopped with {completion.stop_reason}; "
                                 "nothing was run")
        return completion, calls

    async def _stream(self, provider: Any, request: Any, item_id: str, streamed: list[str]) -> "Completion | None":
        """The provider's answer, its pieces shown as they come (`streamed` collects the text)."""
        from host.providers.model import Completion, ReasoningDelta, RetryWait, TextDelta, ToolCallDelta

        engine = self.engine
        completion = None
        async with aclosing(provider.stream(request)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    streamed.append(event.text)
                    engine.bus.delta(self.thread_id, item_id, text=event.text)
                elif isinstance(event, ReasoningDelta):
                    engine.bus.delta(self.thread_id, item_id, reasoning=event.text)
                elif isinstance(event, ToolCallDelta):
                    engine.bus.delta(self.thread_id, item_id,
                                     progress=f"{event.name or 'tool'} ({event.arguments_chars} characters)")
                elif isinstance(event, RetryWait):
                    engine.bus.delta(self.thread_id, item_id,
                                     progress=f"the model provider: {event.reason}; trying again in {event.seconds:.0f} s")
                elif isinstance(event, Completion):
                    completion = event
        return completion

    def _keep_partial(self, item_id: str, text: str, error: Any, step: int, provider: str, model: dict) -> None:
        """An answer the provider broke off: the text the user already saw is kept, marked as cut
        off (tool calls not yet complete are dropped, and nothing of them ran)."""
        engine = self.engine
        note = f"\n\n[This answer was cut off: {error.describe()[:500]}. Nothing after this point was received.]"
        body = AssistantBody(text=text + note, stop_reason="error", step=step, provider=provider,
                             model=model.get("modelId") or "")
        try:
            with engine.store.transaction() as conn:
                engine.store.append_node(conn, self.thread_id, "assistant_message", body, turn_id=self.turn_id,
                                         node_id=item_id)
        except Exception:  # the failure itself is what the turn reports
            log.exception("the partial answer of run %s could not be kept", self.run_id)
            return
        engine.bus.delta(self.thread_id, item_id, text=note)
        engine.bus.emit(ui.ItemComplete, self.thread_id, item_id=item_id, result=ui.ItemResult(ok=False))

    def _calls(self, completion: "Completion", step: int, finalising: bool) -> list[CallRef]:
        if finalising or completion.stop_reason in _UNSAFE_WITH_CALLS:
            return []
        out = []
        for ordinal, call in enumerate(completion.tool_calls):
            try:
                arguments = json.loads(call.arguments or "{}")
            except ValueError:
                arguments = None
            valid = isinstance(arguments, dict)
            out.append(CallRef(id=provider_call_id(self.turn_id, step, ordinal), name=call.name or "(unnamed)",
                               arguments=arguments if valid else None,
                               raw_arguments=None if valid else (call.arguments or "")[:4000],
                               provider_id=call.provider_id[:200], echo=call.echo))
        return out

    # -- endings --------------------------------------------------------------------------------

    def _notice(self, kind: str, text: str, *, to_model: bool = False, key: str | None = None) -> None:
        engine = self.engine
        body = NoticeBody(notice_kind=kind, text=text, to_model=to_model, key=key)
        with engine.store.transaction() as conn:
            node = engine.store.append_node(conn, self.thread_id, "system_notice", body, turn_id=self.turn_id)
        engine.emit_item(self.thread_id, self.turn_id, node.id, "system_notice", text=text, notice_kind=kind)

    def _finish(self, stop_reason: str, state: str) -> None:
        engine = self.engine
        with engine.store.transaction() as conn:
            engine.store.update_run(conn, self.run_id, state=state, stop_reason=stop_reason, pending_tool=None)
        engine.bus.emit(ui.TurnComplete, self.thread_id, turn_id=self.turn_id, run_id=self.run_id,
                        stop_reason=stop_reason)

    def _settle_leftovers(self, by: str) -> None:
        """Cancel a pending approval and give every unanswered call of this turn a result."""
        engine = self.engine
        run = engine.store.run(self.run_id)
        if run.state == runs.WAITING_APPROVAL:
            approval = engine.approvals.latest(run.id)
            if approval is not None and approval.status == "pending":
                settled = engine.approvals.cancel(approval.id, by)
                if settled is not None:
                    engine.approval_resolved(approval, settled)
        elif run.state == runs.WAITING_INTERACTION:
            asked = engine.interactions.latest(run.id)
            if asked is not None and asked.status == "pending":
                engine.interaction_resolved(asked, engine.interactions.settle_or_read(asked.id, {"kind": "cancel"}, by))
        started = run.pending_tool.call_id if run.pending_tool and run.pending_tool.started_at else None
        for ref, step, ordinal in self._pending_calls(engine.store.path(self.thread_id)):
            node_id = call_node_id(self.turn_id, step, ordinal)
            text = INTERRUPTED_TOOL if ref.id == started else "This call did not run: the task was interrupted first."
            result = ToolResultBody(call_id=ref.id, tool=ref.name, ok=False, text=text, outcome="interrupted",
                                    code="interrupted")
            with engine.store.transaction() as conn:
                engine.store.append_node(conn, self.thread_id, "tool_result", result, turn_id=self.turn_id,
                                         node_id=f"{node_id}:result")
            engine.bus.emit(ui.ItemComplete, self.thread_id, item_id=node_id,
                            result=ui.ItemResult(ok=False, text=text, code="interrupted"))

    def _interrupted(self) -> None:
        try:
            self._settle_leftovers("interrupt")
            run = self.engine.store.run(self.run_id)
            if run.state not in runs.TERMINAL:
                self._finish("interrupted", runs.INTERRUPTED)
        except Exception:
            log.exception("run %s could not be marked interrupted", self.run_id)

    def _failed(self, code: str, message: str, *, retryable: bool = False, kind: str | None = None,
                details: dict[str, Any] | None = None) -> None:
        engine = self.engine
        try:
            self._settle_leftovers("interrupt")
            run = engine.store.run(self.run_id)
            if run.state in runs.TERMINAL:
                return
            if runs.can_transition(run.state, runs.FAILED):
                with engine.store.transaction() as conn:
                    engine.store.update_run(conn, self.run_id, state=runs.FAILED, stop_reason="error",
                                            error=message[:2000], pending_tool=None)
            if self.turn_id:
                self._notice("error", message[:2000])
        except Exception:
            log.exception("run %s could not be marked failed", self.run_id)
        engine.bus.emit(ui.ErrorEvent, self.thread_id, code=code, message=message[:4000], retryable=retryable,
                        error_kind=kind, provider_details=details)
        if self.turn_id:
            engine.bus.emit(ui.TurnComplete, self.thread_id, turn_id=self.turn_id, run_id=self.run_id,
                            stop_reason="error")
