"""Task consent in the loop: a purchase the user's message asked for runs without a question,
one it did not ask for asks (the card names what it commits), "for this task" on that card
covers the next one, a consent the user removes asks again and stays removed, and the user's own
details from the settings are their words in every task."""

from __future__ import annotations

from tests.support.fake_model import Reply

BUY = ("click", {"ref": "s1_1_2", "element": "the button"})  # the harness's element is a button "Buy"
BANK = "https://www.mybank.example"
OWN_IBAN = "DE89 3704 0044 0532 0130 00"


async def test_a_purchase_the_message_asked_for_runs_and_one_it_did_not_asks(harness, server):
    server.add(Reply(tool_calls=[BUY]), Reply(text="bought"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "Buy the blue kettle, please.")
    await harness.turn_done()
    assert [t for t, _ in harness.executor.executed] == ["click"]
    assert harness.recorder.of("approval.request") == []
    consent = harness.recorder.of("consent.updated")[-1]
    assert [item["id"] for item in consent.get("items", [])] == ["pay@*"]

    again = ("click", {"ref": "s1_1_3", "element": "buy one more"})
    server.add(Reply(tool_calls=[BUY]), Reply(tool_calls=[again]), Reply(text="done"))
    other = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(other, "What does this page sell?")
    request = await harness.recorder.wait_for("approval.request")
    card = request["request"]
    assert card["code"] == "commit" and "commit" in card["flags"]
    assert (card["effect"], card["effectWords"]) == ("pay", "a payment or purchase")
    await harness.answer(request["approvalId"], "acceptForSession")
    await harness.turn_done(2)
    assert len(harness.recorder.of("approval.request")) == 1  # the second purchase was covered
    assert [t for t, _ in harness.executor.executed] == ["click", "click", "click"]


async def test_a_request_that_hands_its_choices_to_a_page_consents_to_nothing_and_the_card_says_so(harness, server):
    server.add(Reply(tool_calls=[BUY]), Reply(text="done"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "Open my notes and do the tasks on my TODO list.")
    request = await harness.recorder.wait_for("approval.request")
    card = request["request"]
    assert card["code"] == "commit" and card["effect"] == "pay"
    assert card["effectChosenBy"] == "do the tasks"
    assert harness.executor.executed == []
    await harness.answer(request["approvalId"], "decline")
    await harness.turn_done()


async def test_a_consent_taken_back_asks_again_and_stays_taken_back(harness, server):
    server.add(Reply(text="ok"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "Buy the blue kettle.")
    await harness.turn_done()
    refused = await harness.op({"type": "consent.remove", "threadId": thread, "itemId": "send@*"})
    assert refused["type"] == "command.rejected" and refused["code"] == "invalid_command"
    removed = await harness.op({"type": "consent.remove", "threadId": thread, "itemId": "pay@*"})
    assert removed["type"] == "command.ack"
    assert harness.recorder.of("consent.updated")[-1].get("items", []) == []
    server.add(Reply(tool_calls=[BUY]), Reply(text="asked"))
    await harness.submit(thread, "Go on.")
    request = await harness.recorder.wait_for("approval.request")
    assert request["request"]["code"] == "commit"
    await harness.answer(request["approvalId"], "decline")
    await harness.turn_done()
    await harness.restart()  # a new host reads the thread again: the removal holds
    snapshot = await harness.op({"type": "thread.subscribe", "threadId": thread})
    assert snapshot["snapshot"].get("consent", []) == []


async def test_the_users_own_details_are_their_words_in_every_task(harness, server):
    harness.settings_extra = {"userDetails": [OWN_IBAN, BANK]}
    harness.executor.origin = BANK
    typing = ("type", {"ref": "s1_1_4", "element": "IBAN", "text": OWN_IBAN})
    server.add(Reply(tool_calls=[typing]), Reply(text="typed"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "Fill in my own account for the refund.")
    await harness.turn_done()
    assert harness.recorder.of("approval.request") == []
    assert [p.get("text") for t, p in harness.executor.executed if t == "type"] == [OWN_IBAN]


async def test_a_commit_allowed_for_the_task_on_a_card_is_listed_and_can_be_taken_back(harness, server):
    server.add(Reply(tool_calls=[BUY]), Reply(text="bought"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "What does this page sell?")
    request = await harness.recorder.wait_for("approval.request")
    await harness.answer(request["approvalId"], "acceptForSession")
    await harness.turn_done()
    items = harness.recorder.of("consent.updated")[-1].get("items", [])
    origin = request["request"]["targetOrigin"]
    assert [(i["id"], i["effect"], i["words"]) for i in items] == [
        (f"card:pay@{origin}", "pay", "allowed for this task on a card")]
    assert items[0]["text"].startswith("a payment or purchase on ")
    removed = await harness.op({"type": "consent.remove", "threadId": thread, "itemId": items[0]["id"]})
    assert removed["type"] == "command.ack"
    assert harness.recorder.of("consent.updated")[-1].get("items", []) == []
    server.add(Reply(tool_calls=[BUY]), Reply(text="asked"))
    await harness.submit(thread, "Go on.")
    again = await harness.recorder.wait_for("approval.request", 2)
    assert again["request"]["code"] == "commit"  # taken back: the next purchase asks again
    await harness.answer(again["approvalId"], "decline")
    await harness.turn_done(2)
    gone = await harness.op({"type": "consent.remove", "threadId": thread, "itemId": items[0]["id"]})
    assert gone["type"] == "command.rejected"
