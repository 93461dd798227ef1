"""The built-ins' UI ops: memory listed, edited and cleared from a page (every page gets the new
state), refusals change nothing, and an artifact is saved through the browser's downloads."""

from __future__ import annotations

from tests.support.fake_model import Reply


async def test_memory_from_a_page(harness):
    listed = await harness.op({"type": "memory.list"})
    assert listed["type"] == "memory.state" and "entries" not in listed and listed["maxEntries"] == 200
    ack = await harness.op({"type": "memory.set", "key": "name", "value": "Grace"})
    assert ack["type"] == "command.ack"
    state = harness.recorder.of("memory.state")[-1]
    assert [(e["key"], e["value"], e["source"]) for e in state["entries"]] == [("name", "Grace", "user")]
    refused = await harness.op({"type": "memory.set", "key": "bio", "value": "x" * 2001})
    assert refused["code"] == "value_too_long"
    bad = await harness.op({"type": "memory.set", "key": "a\tb", "value": "x"})
    assert bad["code"] == "invalid_key"
    invalid = await harness.op({"type": "memory.set", "key": "k"})
    assert invalid["code"] == "invalid_command" and "value" in invalid["message"]
    assert [e.key for e in harness.builtins.memory.entries()] == ["name"]
    await harness.op({"type": "memory.set", "key": "city", "value": "Arlington"})
    assert (await harness.op({"type": "memory.list", "query": "arl"}))["entries"][0]["key"] == "city"
    await harness.op({"type": "memory.delete", "key": "name"})
    assert [e.key for e in harness.builtins.memory.entries()] == ["city"]
    await harness.op({"type": "memory.clear"})
    assert "entries" not in harness.recorder.of("memory.state")[-1]


async def test_an_artifact_is_offered_for_download(harness, server, bridge):
    server.add(Reply(tool_calls=[("artifact", {"name": "prices.csv", "content": "item,price\nshirt,10\n"})]),
               Reply(text="Saved."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "make a csv")
    await harness.turn_done()
    [result] = [n.body for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"]
    artifact = result["details"]["artifact"]
    ack = await harness.op({"type": "artifact.download", "artifactId": artifact["artifactId"]})
    assert ack["type"] == "command.ack" and ack["threadId"] == thread
    [(_, (options,))] = [c for c in bridge.calls if c[0] == "downloads.download"]
    assert options["filename"] == "prices.csv" and options["saveAs"] is False
    assert options["url"] == "data:text/csv;charset=utf-8;base64,aXRlbSxwcmljZQpzaGlydCwxMAo="
    missing = await harness.op({"type": "artifact.download", "artifactId": "nope"})
    assert missing["code"] == "artifact_not_found"
    bridge.connected = False
    offline = await harness.op({"type": "artifact.download", "artifactId": artifact["artifactId"]})
    assert offline["code"] == "browser_unavailable"
