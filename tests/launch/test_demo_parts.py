"""The demo's replay script and trail check, without a browser; and the replay server spoken to
by the real OpenAI-compatible provider adapter."""

from __future__ import annotations

import json

from host.demo.replay_model import REPLAY_MARK, ReplayModel, next_step
from host.demo.trail import missing_steps
from tests.support.fake_snapshot import ref_line, snapshot_text

SNAPSHOT = snapshot_text("ab", 1, [
    ref_line("textbox", "Name", "sab_1_1"), '- textbox "Email" [type=email] [ref=sab_1_2]',
    ref_line("button", "Sign up", "sab_1_3")], url="https://signup.example/", title="Sign up")
BANK = "http://127.0.0.1:9/"


def tool(content: str) -> dict:
    return {"role": "tool", "content": content}


def test_the_script_reads_fills_with_the_snapshots_refs_then_tries_the_bank():
    assert next_step([{"role": "user", "content": "go"}], BANK) == {"tool": "read_page", "arguments": {}}
    fill = next_step([tool(SNAPSHOT)], BANK)
    assert fill["tool"] == "batch_actions"
    assert [a["ref"] for a in fill["arguments"]["actions"]] == ["sab_1_1", "sab_1_2", "sab_1_3"]
    assert next_step([tool(SNAPSHOT), tool("Thanks, Ada")], BANK) == {"tool": "navigate", "arguments": {"url": BANK}}
    done = next_step([tool(SNAPSHOT), tool("Thanks, Ada"), tool("denied")], BANK)["text"]
    assert done.startswith(REPLAY_MARK) and "signed you up" in done
    refused = next_step([tool(SNAPSHOT), tool("The user declined"), tool("denied")], BANK)["text"]
    assert "did not fill the sign-up form" in refused
    assert "not in the snapshot" in next_step([tool("# Page Snapshot\n- heading")], BANK)["text"]


def row(kind: str, tool_name: str, **fields) -> dict:
    return {"kind": kind, "tool": tool_name, **fields}


def test_the_trail_must_hold_every_expected_step_in_order():
    trail = [row("decision", "read_page", verdict="allow"), row("outcome", "read_page", tool_outcome="ok"),
             row("decision", "batch_actions", verdict="ask"), row("approval", "batch_actions", approval_decision="accept"),
             row("decision", "batch_actions", verdict="allow"), row("outcome", "batch_actions", tool_outcome="ok"),
             row("decision", "navigate", verdict="deny", code="sensitive_origin")]
    assert missing_steps(trail, approved=True) == []
    assert missing_steps(trail, approved=False) == ["approval batch_actions (approval_decision=decline)"]
    swapped = trail[:2] + [trail[6]] + trail[2:6]
    assert missing_steps(swapped, approved=True) == ["decision navigate (verdict=deny, code=sensitive_origin)"]


async def test_the_engines_own_provider_adapter_understands_the_replay_stream():
    from host.providers.model import Completion, Message, ModelRequest, Text, ToolCallPart, ToolResultPart
    from host.providers.openai_chat import OpenAIChat

    with ReplayModel(BANK) as model:
        adapter = OpenAIChat("demo", base_url=model.base_url, model="m", api_key="replay", headers={})
        try:
            first = ModelRequest(model="m", system="", messages=(Message("user", (Text("go"),)),))
            answer = [e async for e in adapter.stream(first)][-1]
            assert isinstance(answer, Completion) and answer.stop_reason == "tool_use"
            assert [(c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [("read_page", {})]
            history = (Message("user", (Text("go"),)), Message("assistant", (ToolCallPart("c1", "read_page", {}),)),
                       Message("user", (ToolResultPart("c1", SNAPSHOT),)))
            second = [e async for e in adapter.stream(ModelRequest(model="m", system="", messages=history))][-1]
            assert second.tool_calls[0].name == "batch_actions"
        finally:
            await adapter.aclose()
