"""Chat from the REPL: a turn on a real host's engine with a fake model server, its tool calls
meeting the gatekeeper, an approval card answered from the prompt (accept, then decline)."""

from __future__ import annotations

import pytest

from tests.providers.fake_servers import FakeOpenAI, Reply


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
    assert "Type @ https://shop.example - the untrusted policy asks before type" in out
    assert '  element: - textbox "Card" [ref=sdoc_1_2]' in out
    chat_repl.line("tw.approvals()")
    assert "type  https://shop.example  policy_default" in chat_repl.expect("tw> ")
    chat_repl.line("tw.approve()")
    out = chat_repl.expect("tw> ")
    assert ": accept (by user)" in out and "assistant: Typed it." in out and "turn complete (end)" in out
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
    assert ": decline (by user)" in out and "assistant: Understood, I will not type." in out
    last_tool_message = [m for m in model.requests[-1]["body"]["messages"] if m.get("role") == "tool"][-1]
    assert "declin" in str(last_tool_message["content"]).lower() and "not now" in str(last_tool_message["content"])
    chat_repl.line("tw.approvals()")
    assert "(none)" in chat_repl.expect("tw> ")
