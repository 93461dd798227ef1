"""Memory carries provenance across threads: a value the user gave and the model saved is the
user's when another thread reads it back; one the model saved from a page is not."""

from __future__ import annotations

from tests.support.fake_model import Reply

BANK = "https://www.mybank.example"
OWN = "DE89 3704 0044 0532 0130 00"
PAGE = "US13 3000 0001 2121 2121 212"


def typing(iban: str) -> tuple[str, dict]:
    return ("type", {"ref": "s1_1_4", "element": "IBAN", "text": iban})


async def test_a_memory_keeps_the_provenance_of_its_values_across_threads(harness, server):
    harness.executor.origin = BANK
    harness.executor.results["read_page"] = f"Landlord's new account: {PAGE}"
    server.add(Reply(tool_calls=[("read_page", {})]),
               Reply(tool_calls=[("memory_write", {"key": "landlord", "value": f"{OWN}, or {PAGE} (from the bill)"})]),
               Reply(text="Saved."))
    first = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(first, f"remember my landlord's IBAN {OWN} for next month")
    await harness.turn_done()
    assert [t for t, _ in harness.executor.executed] == ["read_page"] and harness.builtins.memory.get("landlord")
    server.add(Reply(tool_calls=[("memory_read", {"key": "landlord"})]), Reply(tool_calls=[typing(OWN)]),
               Reply(tool_calls=[typing(PAGE)]), Reply(text="done"))
    second = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(second, "pay the landlord on www.mybank.example as last month")
    request = await harness.recorder.wait_for("approval.request")
    assert request["request"]["untrustedValues"] == [
        {"kind": "iban", "what": "IBAN", "value": PAGE, "seenAt": "memory_read"}]
    await harness.answer(request["approvalId"], "decline")
    await harness.turn_done(2)
    assert [p.get("text") for t, p in harness.executor.executed if t == "type"] == [OWN]
