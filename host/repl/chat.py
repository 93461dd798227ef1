"""Chat turns and approvals from the REPL, through the engine's control methods (`engine.op`,
`engine.answer`, `engine.approvals`) and its `engine` event topic, the way the side panel drives
them: a turn's tool calls meet the same gatekeeper and the same approval cards.

`follow` prints a thread's events as they arrive and returns when the turn is complete or the
run waits on the user: an approval (answer it with `tw.approve(...)`) or an interaction such as
an `ask_user` question (answer it with `tw.reply(...)`); both follow on.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
from typing import Any

from protocol.permissions import describe_policy
from protocol.visible_text import visible

from host.control.client import ControlClient
from host.repl import interactions, render
from host.repl.style import Style

ENGINE_TOPIC = "engine"
_submissions = itertools.count(1)


def submission_id() -> str:
    """A fresh submission id for an op from this REPL process."""
    return f"repl-{os.getpid()}-{next(_submissions)}"


async def engine_op(client: ControlClient, op: dict[str, Any]) -> dict[str, Any]:
    """Send one UI op as this control client; returns its direct answer (ack or rejection)."""
    return await client.call("engine.op", op={"submissionId": submission_id(), **op})


class EventPrinter:
    """Turns one thread's engine events into lines; knows when to stop following."""

    def __init__(self, thread_id: str, style: Style, answer_hint: bool = True):
        self.thread_id = thread_id
        self.style = style
        self.answer_hint = answer_hint  # end approval/interaction cards with how to answer them from the REPL
        self.kinds: dict[str, str] = {}  # item id -> item kind (kept across follows: a tool call
        # that waited for an approval completes in the next one)
        self.speaking: str | None = None  # the assistant item whose text is on the current line
        self.outcome: dict[str, Any] | None = None

    def feed(self, event: dict[str, Any]) -> None:
        if event.get("threadId") not in (None, self.thread_id):
            return
        kind, item = event.get("type"), event.get("itemId")
        if kind == "item.start":
            self.kinds[item] = event.get("kind", "")
        if kind == "item.delta" and self.kinds.get(item) == "assistant_message":
            text = (event.get("delta") or {}).get("text")
            if text:
                if self.speaking != item:
                    self._end_line()
                    print(self.style("assistant:", "bold") + " ", end="")
                    self.speaking = item
                print(text, end="", flush=True)
            return
        line = self.describe(event)
        if line is None:
            return
        self._end_line()
        print(line, flush=True)
        if kind == "turn.complete":
            self.outcome = {"state": "complete", "stopReason": event.get("stopReason")}
        elif kind == "approval.request":
            self.outcome = {"state": "approval", "approvalId": event.get("approvalId")}
        elif kind == "interaction.request":
            self.outcome = {"state": "interaction", "interactionId": event.get("interactionId")}

    def _end_line(self) -> None:
        if self.speaking is not None:
            print(flush=True)
            self.speaking = None

    def describe(self, event: dict[str, Any]) -> str | None:
        """One line for an event worth a line (None for the others)."""
        s, kind = self.style, event.get("type")
        if kind == "item.start" and event.get("kind") == "tool_call":
            meta = event.get("meta") or {}
            return f"{s('tool', 'cyan')} {meta.get('label') or meta.get('toolName')} {visible(meta.get('paramsSummary') or '')}".rstrip()
        if kind == "item.complete" and event.get("result") and self.kinds.get(event.get("itemId")) == "tool_call":
            result = event["result"]
            status = s("ok", "green") if result.get("ok") else s(f"failed {result.get('code')}", "red")
            text = " ".join(str(result.get("text") or "").split())
            return f"  -> {status} {text[:160]}{'...' if len(text) > 160 else ''}".rstrip()
        if kind == "approval.request":
            return approval_card(event, s, self.answer_hint)
        if kind == "approval.resolved":
            return resolved_line(event)
        if kind == "interaction.request":
            return interactions.card(event, s, self.answer_hint)
        if kind == "interaction.resolved":
            return interactions.resolved(event)
        if kind == "turn.complete":
            return s(f"turn complete ({event.get('stopReason')})", "bold")
        if kind == "error":
            return s(f"error {event.get('code')}: {event.get('message')}", "red")
        if kind == "alert.raised":
            return s(f"alert {event.get('code')}: {event.get('message')}", "red", "bold")
        return None


def approval_card(event: dict[str, Any], style: Style, answer_hint: bool = True) -> str:
    """An approval request as the side panel would show it (plus, at the REPL, how to answer it).
    Invisible and reordering characters (a right-to-left override, a zero-width space, a terminal
    escape) are shown as markers, as on the card."""
    request = event.get("request") or {}
    head = (f"{request.get('label') or request.get('tool')} @ {request.get('targetOrigin') or '(no origin)'}"
            f" - {request.get('reason') or request.get('code')}")
    lines = [style(f"approval {event.get('approvalId')}", "yellow", "bold") + f": {visible(head)}",
             f"  params: {visible(json.dumps(request.get('params'), ensure_ascii=False)[:300])}"]
    if request.get("targetLine"):
        element = "\n".join(visible(line) for line in str(request["targetLine"]).split("\n"))
        lines.append("  element: " + element.replace("\n", "\n           "))
    if request.get("destinations"):
        lines.append(f"  leads to: {', '.join(json.dumps(visible(to), ensure_ascii=False) for to in request['destinations'])}")
    if request.get("flags"):
        lines.append(f"  flags: {', '.join(request['flags'])}")
    if answer_hint:
        lines.append("  answer: " + answers(str(event.get("approvalId"))))
    return "\n".join(lines)


def answers(approval: str) -> str:
    """How to answer an approval from the REPL, each answer in the side panel's words."""
    return (f"tw.approve('{approval}') allows it once; tw.approve('{approval}', 'acceptForSession') allows it for "
            f"this task; tw.approve('{approval}', 'acceptForSite') always allows it on this site; "
            f"tw.decline('{approval}', note='why') declines it")


def resolved_line(event: dict[str, Any]) -> str:
    """An `approval.resolved` event: the answer's code, then its words, and who gave it."""
    from host.gatekeeper.audit_trail import answer_words, with_words

    decision = event.get("decision")
    kind = decision.get("kind") if isinstance(decision, dict) else decision
    return f"approval {event.get('approvalId')}: {with_words(kind, answer_words(kind))}, by {event.get('by')}"


async def follow(client: ControlClient, thread_id: str, style: Style, start: Any = None,
                 printer: EventPrinter | None = None) -> dict[str, Any]:
    """Print the thread's events until its turn completes or it waits on the user (an approval
    or an interaction). `start`, if given, is a coroutine run once the subscription is in place
    (a submit or an answer), so no event can slip by before we listen. Pass the same `printer`
    to consecutive follows of a thread."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    def on_event(event: Any) -> None:
        if event.topic == ENGINE_TOPIC and isinstance(event.data, dict):
            queue.put_nowait(event.data)

    printer = printer or EventPrinter(thread_id, style)
    printer.outcome = None
    client.listen(on_event)
    await client.subscribe(ENGINE_TOPIC)
    try:
        if start is not None:
            answer = await start
            if answer.get("type") == "command.rejected":
                print(style(f"rejected {answer.get('code')}: {answer.get('message')}", "red"), flush=True)
                return {"state": "rejected", "code": answer.get("code")}
        while printer.outcome is None:
            printer.feed(await queue.get())
        return printer.outcome
    finally:
        client.unlisten(on_event)
        if client.is_open:
            await client.unsubscribe(ENGINE_TOPIC)


def waiting_card(result: dict[str, Any], style: Style) -> str:
    """A `tw.run` call that waits on approval: the card, then the exact command that runs it."""
    details = result.get("details") or {}
    approval = str(details.get("approvalId"))
    card = approval_card({"approvalId": approval, "request": details.get("request") or {}}, style, answer_hint=False)
    return (f"{card}\n  waiting {render.duration(details.get('remainingMs'))} for your answer; to run it once type:\n"
            f"    tw.approve('{approval}')\n"
            f"  (or tw.approve('{approval}', 'acceptForSession') to allow it for this task, "
            f"tw.decline('{approval}', note='why') to decline it)")


def approvals_table(items: list[dict[str, Any]], style: Style) -> str:
    """Pending approvals, one row each."""
    rows = [(a.get("approvalId"), a.get("threadId"), a["request"].get("tool"), a["request"].get("targetOrigin"),
             a["request"].get("code"), f"{int(a.get('remainingMs', 0) / 1000)} s") for a in items]
    return render.table(rows, ("approval", "thread", "tool", "origin", "why", "left"), style)


def threads_table(items: list[dict[str, Any]], style: Style) -> str:
    """Threads, newest first."""
    rows = [(t.get("id"), t.get("title") or "", describe_policy(t["permissionPolicy"]) if t.get("permissionPolicy") else "-",
             render.clock(t.get("updatedAt")))
            for t in items]
    return render.table(rows, ("thread", "title", "policy", "updated"), style)


def conversation(snapshot: dict[str, Any], style: Style) -> str:
    """A thread's current branch, one line per node, then what it waits on."""
    lines = [style(f"thread {snapshot['meta']['id']} {snapshot['meta'].get('title') or ''}".rstrip(), "bold")]
    for node in snapshot.get("nodes", []):
        body = node.get("body") or {}
        calls = ", ".join(str(c.get("name")) for c in body.get("calls") or [] if isinstance(c, dict))
        text = body.get("text") or (f"calls {calls}" if calls else "") or body.get("tool") or \
            "; ".join(f"{key}: {render.cell(value)}" for key, value in body.items())
        lines.append(f"  {node.get('kind'):<18} {' '.join(str(text).split())[:120]}")
    pending = snapshot.get("pendingApprovals") or []
    if pending:
        lines.append(approvals_table(pending, style))
    waiting = snapshot.get("pendingInteractions") or []
    if waiting:
        lines.append(interactions.table(waiting, style))
    return "\n".join(lines)
