"""The settings page's audit view checks the hash chain as `tabwarden audit verify` does (and
finds a row changed behind the triggers' back), its rows carry the call they belong to, and the
providers list shows the tools the last request to a provider had to leave out, and why."""

from __future__ import annotations

import json
import sqlite3

from host.gatekeeper.service import CheckRequest
from host.providers.model import Completion, Message, ModelRequest, Text, ToolSchema
from tests.support.fake_model import FakeOpenAI, Reply


async def test_verify_reports_an_intact_chain_then_the_first_changed_row(settings):
    for n in range(3):
        settings.gatekeeper.check(CheckRequest(thread_id="t-1", tool="click", origin=f"https://{n}.example",
                                               turn_id="turn-1", call_id=f"call-{n}"))
    rows = (await settings.op({"type": "audit.query"}))["rows"]
    assert [(r["callId"], r["turnId"]) for r in rows] == [("call-0", "turn-1"), ("call-1", "turn-1"),
                                                          ("call-2", "turn-1")]
    intact = await settings.op({"type": "audit.verify"})
    assert intact["type"] == "audit.verified" and intact["ok"] is True and intact["rows"] == 3
    assert len(intact["head"]) == 64 and "brokenSeq" not in intact

    # An edit made behind the triggers' back, as someone with the file could make it.
    with sqlite3.connect(settings.store.path) as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'audit_log'"):
            db.execute(f'DROP TRIGGER "{name}"')
        db.execute("UPDATE audit_log SET target_origin = 'https://elsewhere.example' WHERE seq = 2")
    broken = await settings.op({"type": "audit.verify"})
    assert broken["ok"] is False and broken["brokenSeq"] == 2
    assert broken["problem"] == "its content was changed after it was written"


async def test_a_provider_lists_the_tools_its_last_request_left_out(settings):
    with FakeOpenAI([Reply(text="OK")]) as model:
        settings.config.mkdir(parents=True, exist_ok=True)
        (settings.config / "engine.json").write_text(json.dumps(
            {"providers": {"fake": {"kind": "openai", "baseUrl": model.url, "model": "m-1", "maxRetries": 0}}}))
        assert (await settings.state())["providers"][0].get("leftOut") is None  # nothing asked yet

        tools = tuple(ToolSchema(f"t{n:03}", "a tool", {"type": "object", "properties": {}}) for n in range(129))
        bad = ToolSchema("mcp__srv__listy", "a tool", {"type": "array"})
        provider = settings.engine.providers.get("fake")
        request = ModelRequest(model="m-1", system="s", messages=(Message("user", (Text("hi"),)),),
                               tools=(*tools, bad))
        async for event in provider.stream(request):
            if isinstance(event, Completion):
                break
        assert len(model.requests[-1]["body"]["tools"]) == 128

    left = (await settings.state())["providers"][0]["leftOut"]
    assert left == [{"name": "mcp__srv__listy", "reason": "its input schema's top level is 'array', not an object"},
                    {"name": "t128", "reason": "over the provider's limit of 128 tools"}]
