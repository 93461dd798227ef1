"""Questions a running tool asks the user (an MCP server's elicitation), shown as interaction
cards while the tool's call is in flight. Unlike the interaction tools' requests they are not
stored: the call they belong to is itself in flight, so after a restart there is nothing to
answer them for. They answer through `interaction.response` like any card (the first answer
stands), and end as a timeout after the approval timeout. A page that opens later is offered
the ones still waiting in the thread's snapshot (`views`)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from protocol import ui

from host.engine.store import new_id


@dataclass
class _Question:
    thread_id: str
    turn_id: str
    item_id: str
    request: dict[str, Any]
    deadline_at: float
    asked_at: float = field(default_factory=time.time)
    answer: "asyncio.Future[dict[str, Any]]" = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ToolQuestions:
    """The questions in flight, by interaction id."""

    def __init__(self, engine: Any):  # the Engine (its bus, approval timeout and activity)
        self._engine = engine
        self._open: dict[str, _Question] = {}

    def asker(self, thread_id: str, turn_id: str, item_id: str) -> Any:
        """The `ask(request)` for one call's questions (host/tools/asking.py)."""
        async def ask(request: dict[str, Any]) -> dict[str, Any]:
            return await self.ask(thread_id, turn_id, item_id, request)
        ask.thread_id = thread_id  # type: ignore[attr-defined]  # whose questions it shows (see host/mcp)
        return ask

    async def ask(self, thread_id: str, turn_id: str, item_id: str, request: dict[str, Any]) -> dict[str, Any]:
        """Show the card and wait for its answer ({"kind": "timeout"} past the deadline)."""
        engine = self._engine
        timeout = engine.approval_timeout_s()
        question = _Question(thread_id, turn_id, item_id, request, time.time() + timeout)
        question_id = new_id()
        self._open[question_id] = question
        self._offer(question_id, question)
        engine.activity(thread_id)
        try:
            return await asyncio.wait_for(asyncio.shield(question.answer), timeout)
        except asyncio.TimeoutError:
            self._resolve(question_id, {"kind": "timeout"}, "timeout")
            return {"kind": "timeout"}
        except asyncio.CancelledError:  # the call ended (an interrupted turn): the card goes
            self._resolve(question_id, {"kind": "cancel"}, "interrupt")
            raise
        finally:
            self._open.pop(question_id, None)

    def answer(self, question_id: str, answer: dict[str, Any]) -> str | None:
        """Settle a question with the user's answer: its thread id, or None when no such question
        waits (answered before, or not a tool's question)."""
        question = self._open.get(question_id)
        if question is None or question.answer.done():
            return None
        self._resolve(question_id, answer, "user")
        return question.thread_id

    def holds(self, question_id: str) -> bool:
        """Whether `question_id` is a tool's question still waiting."""
        return question_id in self._open

    def pending(self, thread_id: str) -> list[str]:
        """The ids of the thread's questions still waiting."""
        return [qid for qid, q in self._open.items() if q.thread_id == thread_id and not q.answer.done()]

    def views(self, thread_id: str | None) -> list[ui.PendingInteraction]:
        """The thread's waiting questions (every thread's with None) as a thread snapshot lists
        them (a page that opens after they were asked)."""
        now = time.time()
        return [ui.PendingInteraction(interaction_id=qid, thread_id=q.thread_id, turn_id=q.turn_id, item_id=q.item_id,
                                      request=q.request, requested_at=q.asked_at, deadline_at=q.deadline_at,
                                      remaining_ms=max(0, int((q.deadline_at - now) * 1000)))
                for qid, q in self._open.items() if thread_id in (None, q.thread_id) and not q.answer.done()]

    def _offer(self, question_id: str, question: _Question) -> None:
        remaining = max(0, int((question.deadline_at - time.time()) * 1000))
        self._engine.bus.emit(ui.InteractionRequest, question.thread_id, turn_id=question.turn_id,
                              interaction_id=question_id, item_id=question.item_id, request=question.request,
                              deadline_at=question.deadline_at, remaining_ms=remaining)

    def _resolve(self, question_id: str, answer: dict[str, Any], by: str) -> None:
        question = self._open.get(question_id)
        if question is None or question.answer.done():
            return
        question.answer.set_result(answer)
        self._engine.bus.emit(ui.InteractionResolved, question.thread_id, interaction_id=question_id,
                              response=str(answer.get("kind")), by=by)
        self._engine.activity(question.thread_id)
