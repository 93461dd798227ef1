"""Chat from the REPL: a turn on a real host's engine with a fake model server, its tool calls
meeting the gatekeeper, an approval card answered from the prompt (accept, then decline), and
runs that wait on the user (ask_user, request_user_action) answered with `tw.reply`."""

from __future__ import annotations

import re

import pytest

from tests.support.fake_model import FakeOpenAI, Reply


@pytest.fixture(scope="module")
def model():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def chat_repl(repl, model):
    repl.line(f"await tw.call('engine.set_provider', name='fake', kind='openai', base_url='{model.url}', "
              "model='m-1', api_key='not-a-real-key')")
    assert "'defaultProvider': 'fake'" in repl.expect("tw> ")
    repl.line("await tw.use(7)")
    repl.expect("tw> ")
    return repl


def test_a_turn_meets_an_approval_that_the_repl_accepts(chat_repl, model):
    model.add(Reply(tool_calls=[("read_page", {})]),
              Reply(tool_calls=[("type", {"ref": "sdoc_1_2", "element": "Card field", "text": "hello"})]),
              Reply(text="Typed it."))
    chat_repl.line("tw.chat('fill the card field')")
    out = chat_repl.expect("tw> ")
    assert "tool Read page" in out and "-> ok [tabId=7] # Page Snapshot" in out
    assert "Type @ https://shop.example - the “Ask before changes” policy asks before type" in out
    assert '  element: - textbox "Card" [ref=sdoc_1_2]' in out
    chat_repl.line("tw.approvals()")
    assert "type  https://shop.example  policy_default" in chat_repl.expect("tw> ")
    chat_repl.line("tw.approve()")
    out = chat_repl.expect("tw> ")
    assert ": accept (allowed once), by user" in out and "assistant: Typed it." in out and "turn complete (end)" in out
    chat_repl.line("tw.audit(3, tool='type')")
    out = chat_repl.expect("tw> ")
    assert "approval accept" in out and "ALLOW (policy_default)" in out and "outcome ok" in out


def test_a_declined_approval_reaches_the_model_as_a_refusal(chat_repl, model):
    model.add(Reply(tool_calls=[("type", {"ref": "sdoc_1_2", "element": "Card field", "text": "again"})]),
              Reply(text="Understood, I will not type."))
    chat_repl.line("tw.chat('type again')")
    assert "answer: tw.approve(" in chat_repl.expect("tw> ")
    chat_repl.line("tw.decline(note='not now')")
    out = chat_repl.expect("tw> ")
    assert ": decline (declined), by user" in out and "assistant: Understood, I will not type." in out
    last_tool_message = [m for m in model.requests[-1]["body"]["messages"] if m.get("role") == "tool"][-1]
    assert "declin" in str(last_tool_message["content"]).lower() and "not now" in str(last_tool_message["content"])
    chat_repl.line("tw.approvals()")
    assert "(none)" in chat_repl.expect("tw> ")


def tool_messages(model) -> list[str]:
    """The tool results the model was sent in its latest request."""
    return [str(m["content"]) for m in model.requests[-1]["body"]["messages"] if m.get("role") == "tool"]


def test_a_question_is_shown_answered_with_reply_and_the_run_resumes(chat_repl, model):
    model.add(Reply(tool_calls=[("ask_user", {"question": "Which colour?", "options": ["red", "blue"]})]))
    chat_repl.line("tw.chat('buy the shirt')")
    out = chat_repl.expect("tw> ")
    asked = re.search(r"question (\S+): Which colour\?  choices: \(1\) red  \(2\) blue", out)
    assert asked, out
    interaction = asked.group(1)
    assert re.search(r"time left: \d+ (s|min)", out), out
    assert "answer: tw.reply('...') or tw.reply(choice=N)" in out and "turn complete" not in out
    requests_before = len(model.requests)

    chat_repl.line("tw.interactions()")
    out = chat_repl.expect("tw> ")
    assert re.search(rf"{interaction} +\S+ +question +Which colour\? choices: \(1\) red \(2\) blue +\d+ (s|min)",
                     out), out
    chat_repl.line("tw.conversation()")
    assert interaction in chat_repl.expect("tw> ")

    model.add(Reply(text="Blue, as you wish."))
    chat_repl.line("tw.reply('blue, the dark one')")
    out = chat_repl.expect("tw> ")
    assert f"interaction {interaction}: submit (by user)" in out
    assert "assistant: Blue, as you wish." in out and "turn complete (end)" in out
    assert len(model.requests) == requests_before + 1
    assert tool_messages(model)[-1] == "The user answered: blue, the dark one"
    chat_repl.line("tw.interactions()")
    assert "(none)" in chat_repl.expect("tw> ")
    chat_repl.line("tw.reply('again')")
    assert "usage: nothing is waiting for an answer" in chat_repl.expect("tw> ")


def test_reply_picks_what_fits_and_refuses_to_guess_between_several(chat_repl, model):
    ids = {}
    for name, call in (("first", ("ask_user", {"question": "First name?"})),
                       ("second", ("ask_user", {"question": "Shoe size?", "options": ["41", "42"]})),
                       ("action", ("request_user_action", {"action": "Log in to shop.example",
                                                            "reason": "it needs your password"}))):
        model.add(Reply(tool_calls=[call]))
        chat_repl.line(f"tw.chat('{name}', thread=await tw.new_thread('{name}'))")
        out = chat_repl.expect("tw> ")
        found = re.search(r"(question|action needed) (\S+): ", out)
        assert found, out
        ids[name] = found.group(2)
    assert "action needed {}: Log in to shop.example (why: it needs your password)".format(ids["action"]) in out
    assert "answer: tw.reply(done=True) when it is done; tw.reply(cancel=True) to stop" in out

    chat_repl.line("tw.reply('Ada')")  # two questions wait: no guessing
    out = chat_repl.expect("tw> ")
    assert "usage: 2 interactions are pending: name one with interaction_id=..." in out
    assert ids["first"] in out and ids["second"] in out and ids["action"] not in out
    chat_repl.line(f"tw.reply('Ada', interaction_id='{ids['action']}')")
    assert (f"usage: that reply does not fit {ids['action']} (action needed); answer: tw.reply(done=True)"
            in chat_repl.expect("tw> "))
    chat_repl.line(f"tw.reply(choice=3, interaction_id='{ids['second']}')")
    assert "usage: choice is 1 to 2: (1) 41  (2) 42" in chat_repl.expect("tw> ")
    chat_repl.line("tw.reply('x', done=True)")
    assert "usage: reply with one of:" in chat_repl.expect("tw> ")
    assert len(tw_interactions(chat_repl)) == 3  # nothing was answered

    model.add(Reply(text="Logged in, going on."))
    chat_repl.line("tw.reply(done=True)")  # the only one done fits
    out = chat_repl.expect("tw> ")
    assert f"interaction {ids['action']}: submit (by user)" in out and "assistant: Logged in, going on." in out
    assert tool_messages(model)[-1].startswith("The user reports it done: Log in to shop.example")

    model.add(Reply(text="Size 42."))
    chat_repl.line(f"tw.reply(choice=2, interaction_id='{ids['second']}')")
    out = chat_repl.expect("tw> ")
    assert "assistant: Size 42." in out and tool_messages(model)[-1] == "The user answered: 42"

    model.add(Reply(text="Fine, no name then."))
    chat_repl.line("tw.reply(cancel=True, note='I would rather not say')")  # the one left
    out = chat_repl.expect("tw> ")
    assert f"interaction {ids['first']}: cancel (by user)" in out and "assistant: Fine, no name then." in out
    assert "They said: I would rather not say" in tool_messages(model)[-1]
    assert tw_interactions(chat_repl) == []


def tw_interactions(repl) -> list[str]:
    """The ids `tw.interactions()` lists at the prompt."""
    repl.line("print('IDS' + ':', *[i['interactionId'] for i in await tw.interactions()], '.')")  # the echo has no IDS:
    return re.search(r"IDS: (.*)\.", repl.expect("tw> ")).group(1).split()
