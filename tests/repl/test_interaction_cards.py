"""What a waiting run looks like at the REPL and which interaction a `tw.reply(...)` goes to:
pure functions over the host's JSON (the real round trips are in test_repl_chat.py)."""

from __future__ import annotations

import pytest

from host.repl import interactions
from host.repl.chat import EventPrinter
from host.repl.errors import UsageError
from host.repl.style import Style

WATCH = {"kind": "watch_page", "tabId": 7, "origin": "https://shop.example", "textAppears": "Paid",
         "summary": 'Waiting until "Paid" appears on tab 7 (https://shop.example), for at most 5 min'}
RESUME = {"kind": "schedule_resume", "delaySeconds": 600, "reason": "the export runs",
          "summary": "Continues at 2030-01-01 10:10:00: the export runs"}
QUESTION = {"kind": "ask_user", "question": "Which size?", "options": ["S", "M"]}


def pending(iid: str, request: dict, thread: str = "t1") -> dict:
    return {"interactionId": iid, "threadId": thread, "request": request, "remainingMs": 90_000}


def test_watch_and_resume_cards_say_what_they_wait_for_and_how_to_end_them(capsys):
    printer = EventPrinter("t1", Style(False))
    printer.feed({"type": "interaction.request", "threadId": "t1", "interactionId": "w1", "request": WATCH,
                  "remainingMs": 300_000})
    assert capsys.readouterr().out.splitlines() == [
        'watching page w1: Waiting until "Paid" appears on tab 7 (https://shop.example), for at most 5 min',
        "  time left: 5 min",
        "  answer: tw.reply(done=True) to end the wait early; tw.reply(cancel=True) to stop  (interaction_id='w1')"]
    assert printer.outcome == {"state": "interaction", "interactionId": "w1"}  # `follow` stops: the run waits
    printer.outcome = None
    printer.feed({"type": "interaction.request", "threadId": "other", "interactionId": "x", "request": RESUME,
                  "remainingMs": 1})
    assert capsys.readouterr().out == "" and printer.outcome is None  # another thread's
    printer.feed({"type": "interaction.resolved", "threadId": "t1", "interactionId": "w1", "response": "submit",
                  "by": "watch"})
    assert capsys.readouterr().out == "interaction w1: submit (by watch)\n"
    card = interactions.card({"interactionId": "r1", "request": RESUME, "remainingMs": 7_200_000}, Style(False))
    assert card.splitlines()[:2] == ["scheduled resume r1: Continues at 2030-01-01 10:10:00: the export runs",
                                     "  time left: 2.0 h"]
    assert "tw.reply(done=True) to resume now" in card


def test_a_reply_goes_to_the_only_interaction_it_fits():
    items = [pending("q1", QUESTION), pending("w1", WATCH), pending("r1", RESUME, thread="t2")]
    answer = interactions.response("M")
    assert interactions.pick(items, answer, None)["interactionId"] == "q1"
    assert interactions.answer_params(items[0], interactions.response(choice=2)) == {
        "interaction_id": "q1", "kind": "submit", "value": "M"}
    with pytest.raises(UsageError, match=r"2 interactions are pending: .*w1 \(watching page in t1\), "
                                         r"r1 \(scheduled resume in t2\)"):
        interactions.pick(items, interactions.response(done=True), None)
    done = interactions.pick(items, interactions.response(done=True), "r1")
    assert interactions.answer_params(done, interactions.response(done=True)) == {"interaction_id": "r1",
                                                                                    "kind": "submit"}
    with pytest.raises(UsageError, match="3 interactions are pending"):
        interactions.pick(items, interactions.response(cancel=True), None)
    cancel = interactions.response(cancel=True, note="not today")
    assert interactions.answer_params(items[1], cancel) == {"interaction_id": "w1", "kind": "cancel",
                                                            "note": "not today"}
    with pytest.raises(UsageError, match="no pending question for that reply; pending: w1 "):
        interactions.pick(items[1:], answer, None)
    with pytest.raises(UsageError, match="no pending interaction 'zz'"):
        interactions.pick(items, answer, "zz")


def test_a_reply_says_one_thing():
    with pytest.raises(UsageError, match="reply with one of"):
        interactions.response()
    with pytest.raises(UsageError, match=r"\(not answer and cancel\)"):
        interactions.response("x", cancel=True)
    with pytest.raises(UsageError, match="a note goes with a cancel"):
        interactions.response("x", note="why")
    with pytest.raises(UsageError, match="offers no choices"):
        interactions.answer_params(pending("q2", {"kind": "ask_user", "question": "Name?"}),
                                   interactions.response(choice=1))


FORM = {"kind": "elicitation", "server": "local", "message": "Delete report.pdf?",
        "fields": [{"name": "sure", "type": "boolean", "required": True, "title": "Sure"},
                   {"name": "plan", "type": "string", "required": False, "title": "Plan", "enum": ["free", "pro"]}]}
SAMPLING = {"kind": "sampling", "server": "local", "system": "", "maxTokens": 10,
            "messages": [{"role": "user", "text": "Capital of France?"}]}


def test_an_mcp_servers_question_and_model_request_are_shown_and_answered_from_the_repl():
    card = interactions.card({"interactionId": "e1", "request": FORM, "remainingMs": 60_000}, Style(False))
    assert card.splitlines()[0] == ("server question e1: MCP server 'local' asks: Delete report.pdf?  "
                                    "form: sure (boolean, required), plan (string: free|pro)")
    assert "tw.reply({'field': value, ...}); tw.reply(cancel=True, note='decline') to decline" in card
    card = interactions.card({"interactionId": "s1", "request": SAMPLING, "remainingMs": 60_000}, Style(False))
    assert card.splitlines()[0] == ("server model request s1: MCP server 'local' asks your model (up to 10 tokens): "
                                    "Capital of France?")
    assert "tw.reply(done=True) to allow it once" in card
    items = [pending("e1", FORM), pending("s1", SAMPLING)]
    # A value answers the form; done allows the model request; neither fits the other.
    form = interactions.pick(items, interactions.response({"sure": True}), None)
    assert interactions.answer_params(form, interactions.response({"sure": True})) == {
        "interaction_id": "e1", "kind": "submit", "value": {"sure": True}}
    assert interactions.pick(items, interactions.response(done=True), None)["interactionId"] == "s1"
    with pytest.raises(UsageError):
        interactions.pick(items, interactions.response(choice=1), "e1")
