"""Interactions at the REPL: what a waiting run asks of the user, and `tw.reply(...)` turned into
the answer for the right one (the host's `interactions.list` / `interactions.answer`).

    ask_user             a question (maybe with choices)   tw.reply("answer") or tw.reply(choice=N)
    request_user_action  something only the user may do    tw.reply(done=True) once it is done
    watch_page           a page condition on one tab       tw.reply(done=True) ends the wait early
    schedule_resume      continue after a delay            tw.reply(done=True) resumes now
    elicitation          an MCP server's question (a form) tw.reply({"field": value, ...});
                                                           tw.reply(cancel=True, note="decline") declines
    sampling             an MCP server's model request     tw.reply(done=True) allows it once

Any of them: tw.reply(cancel=True, note="why") (the note reaches the model for a question).
"""

from __future__ import annotations

import json
from typing import Any

from host.repl import render
from host.repl.errors import UsageError
from host.repl.style import Style

QUESTION = "ask_user"
FORM = "elicitation"
ANSWERED = frozenset({QUESTION, FORM})  # the kinds answered with a value, not done=True
TITLES = {"ask_user": "question", "request_user_action": "action needed", "watch_page": "watching page",
          "schedule_resume": "scheduled resume", "elicitation": "server question", "sampling": "server model request"}
_DONE_MEANS = {"request_user_action": "when it is done", "watch_page": "to end the wait early",
               "schedule_resume": "to resume now", "sampling": "to allow it once"}


def what(request: dict[str, Any]) -> str:
    """What the run waits on, in one line: the question and its numbered choices, the action
    the user must do, or the watch/resume summary."""
    kind = request.get("kind")
    if kind == QUESTION:
        options = request.get("options") or []
        choices = "  ".join(f"({n}) {o}" for n, o in enumerate(options, start=1))
        return str(request.get("question", "")) + (f"  choices: {choices}" if choices else "")
    if kind == FORM:
        fields = ", ".join(f"{f.get('name')} ({f.get('type')}{', required' if f.get('required') else ''}"
                           f"{': ' + '|'.join(f['enum']) if f.get('enum') else ''})" for f in request.get("fields") or ())
        return f"MCP server {request.get('server')!r} asks: {request.get('message', '')}  form: {fields}"
    if kind == "sampling":
        messages = request.get("messages") or [{}]
        return (f"MCP server {request.get('server')!r} asks your model (up to {request.get('maxTokens')} tokens): "
                f"{messages[-1].get('text', '')}")
    if kind == "request_user_action":
        line = str(request.get("action", ""))
        if request.get("reason"):
            line += f" (why: {request['reason']})"
        if request.get("tabId") is not None:
            line += f" [tab {request['tabId']}]"
        return line
    return str(request.get("summary") or request.get("reason") or request.get("note")
               or json.dumps(request, ensure_ascii=False))


def hint(interaction_id: str, kind: str | None) -> str:
    """How to answer an interaction from the REPL."""
    named = f"interaction_id='{interaction_id}'"
    if kind == QUESTION:
        return f"answer: tw.reply('...') or tw.reply(choice=N); tw.reply(cancel=True, note='...') to decline  ({named})"
    if kind == FORM:
        return (f"answer: tw.reply({{'field': value, ...}}); tw.reply(cancel=True, note='decline') to decline; "
                f"tw.reply(cancel=True) to dismiss  ({named})")
    return f"answer: tw.reply(done=True) {_DONE_MEANS.get(str(kind), '')}; tw.reply(cancel=True) to stop  ({named})"


def card(event: dict[str, Any], style: Style, answer_hint: bool = True) -> str:
    """An `interaction.request` event: what the run now waits on, its time left, and (at the
    REPL) how to answer it."""
    request = event.get("request") or {}
    kind = request.get("kind")
    head = style(f"{TITLES.get(str(kind), str(kind))} {event.get('interactionId')}", "yellow", "bold")
    lines = [f"{head}: {what(request)}", f"  time left: {render.duration(event.get('remainingMs'))}"]
    if answer_hint:
        lines.append("  " + hint(str(event.get("interactionId")), kind))
    return "\n".join(lines)


def resolved(event: dict[str, Any]) -> str:
    """An `interaction.resolved` event in one line."""
    return f"interaction {event.get('interactionId')}: {event.get('response')} (by {event.get('by')})"


def table(items: list[dict[str, Any]], style: Style) -> str:
    """Pending interactions, one row each."""
    rows = [(i.get("interactionId"), i.get("threadId"), TITLES.get(str((i.get("request") or {}).get("kind")), "?"),
             what(i.get("request") or {}), render.duration(i.get("remainingMs"))) for i in items]
    return render.table(rows, ("interaction", "thread", "kind", "what", "left"), style)


def response(answer: Any = None, *, choice: int | None = None, done: bool = False, cancel: bool = False,
             note: str | None = None) -> dict[str, Any]:
    """The answer `tw.reply(...)` gives, as `{kind, value?, note?}` plus `form` (`answer`,
    `choice`, `done` or `cancel`), before it is matched to an interaction."""
    given = [name for name, on in (("answer", answer is not None), ("choice", choice is not None),
                                   ("done", done), ("cancel", cancel)) if on]
    if len(given) != 1:
        raise UsageError("reply with one of: tw.reply('answer'), tw.reply(choice=N), tw.reply(done=True) or "
                         f"tw.reply(cancel=True, note='...'){' (not ' + ' and '.join(given) + ')' if given else ''}")
    if note is not None and not cancel:
        raise UsageError("a note goes with a cancel: tw.reply(cancel=True, note='...')")
    form = given[0]
    if form == "cancel":
        return {"form": form, "kind": "cancel", **({"note": note} if note else {})}
    if form == "answer":
        return {"form": form, "kind": "submit", "value": answer}
    if form == "choice":
        return {"form": form, "kind": "submit", "choice": choice}
    return {"form": form, "kind": "submit"}


def _fits(form: str, kind: str | None) -> bool:
    if form == "cancel":
        return True
    if kind == FORM and form == "choice":
        return False
    return (kind in ANSWERED) == (form in ("answer", "choice"))


def pick(items: list[dict[str, Any]], reply: dict[str, Any], interaction_id: str | None) -> dict[str, Any]:
    """The pending interaction a reply is for: the one named, or else the only one the reply
    fits (an answer fits a question, done fits the others). UsageError otherwise, naming them."""
    form = reply["form"]
    if interaction_id is not None:
        found = [i for i in items if i.get("interactionId") == interaction_id]
        if not found:
            raise UsageError(f"no pending interaction {interaction_id!r} (see tw.interactions())")
        if not _fits(form, _kind(found[0])):
            title = TITLES.get(str(_kind(found[0])), _kind(found[0]))
            raise UsageError(f"that reply does not fit {interaction_id} ({title}); "
                             + hint(interaction_id, _kind(found[0])))
        return found[0]
    if not items:
        raise UsageError("nothing is waiting for an answer (see tw.interactions())")
    fitting = [i for i in items if _fits(form, _kind(i))]
    if len(fitting) == 1:
        return fitting[0]
    if not fitting:
        shown = ", ".join(f"{i.get('interactionId')} ({TITLES.get(str(_kind(i)), _kind(i))})" for i in items)
        wanted = "question" if form in ("answer", "choice") else "action, watch or scheduled resume"
        raise UsageError(f"no pending {wanted} for that reply; pending: {shown}")
    listed = ", ".join(f"{i.get('interactionId')} ({TITLES.get(str(_kind(i)), _kind(i))} in {i.get('threadId')})"
                       for i in fitting)
    raise UsageError(f"{len(fitting)} interactions are pending: name one with interaction_id=... ({listed})")


def answer_params(item: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """The `interactions.answer` params for `reply` to `item` (a choice becomes that option)."""
    params: dict[str, Any] = {"interaction_id": item["interactionId"], "kind": reply["kind"]}
    if "choice" in reply:
        options = (item.get("request") or {}).get("options") or []
        if not options:
            raise UsageError(f"{item['interactionId']} offers no choices: tw.reply('your answer')")
        if not isinstance(reply["choice"], int) or not 1 <= reply["choice"] <= len(options):
            raise UsageError(f"choice is 1 to {len(options)}: " +
                             "  ".join(f"({n}) {o}" for n, o in enumerate(options, start=1)))
        params["value"] = options[reply["choice"] - 1]
    elif "value" in reply:
        params["value"] = reply["value"]
    if "note" in reply:
        params["note"] = reply["note"]
    return params


def _kind(item: dict[str, Any]) -> str | None:
    return (item.get("request") or {}).get("kind")
