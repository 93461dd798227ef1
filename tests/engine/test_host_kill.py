"""Kill -9 the real host while an approval is pending, start it again over the same files.

The host is a real `python -m host host` process on stdio, exactly as Chrome starts it; this
test plays the extension (tabs, site access, page executor) and one side-panel page (`ui.op`
frames). The model is the fake OpenAI-compatible server over real HTTP. Whatever the moment of
the kill, the same approval comes back with the time that remains (or is declined when its
deadline passed), and the click reaches the page at most once.
"""

from __future__ import annotations

import asyncio

import pytest

from protocol import ui
from protocol.schema import schema_hash
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.hosts import write_settings
from tests.support.stdio_browser import PAGE_URL, StdioBrowser

READ = ("read_page", {})
CLICK = ("click", {"ref": "sdoc_1_1", "element": "Buy button"})


def script() -> list[Reply]:
    return [Reply(text="Let me look.", tool_calls=[READ]), Reply(text="Buying.", tool_calls=[CLICK])]


def buyer(body: dict) -> Reply:
    """A model that reads, then clicks Buy once, then stops: it clicks again only if the
    conversation shows no completed click, so any second click would be a replay."""
    results = last_results(body)
    if any("click done" in r for r in results):
        return Reply(text="Bought it.")
    if results and "read_page done" in results[-1]:
        return Reply(text="Buying.", tool_calls=[CLICK])
    return Reply(text="Let me look.", tool_calls=[READ])


def last_results(body: dict) -> list[str]:
    return [str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool"]


def initialize(browser: StdioBrowser, n: int, thread: str | None = None) -> None:
    op = {"type": "initialize", "submissionId": f"init-{n}", "protocol": ui.ENGINE_PROTOCOL,
          "schemaHash": schema_hash(), "clientId": "panel-1"}
    if thread is not None:
        op["subscribeThreadId"] = thread
    browser.op(op)


async def start_turn(browser: StdioBrowser) -> tuple[str, dict]:
    initialize(browser, 1)
    await browser.wait_for("initialized")
    browser.op({"type": "thread.create", "submissionId": "create-1"})
    thread = (await browser.wait_for("command.ack"))["threadId"]
    browser.op({"type": "turn.submit", "submissionId": "submit-1", "threadId": thread,
                "input": {"text": "buy it", "browserContext": {"capturedAt": 1, "defaultTab": {
                    "tabId": 1, "url": PAGE_URL, "title": "Cart"}}}})
    approval = await browser.wait_for("approval.request")
    return thread, approval


async def _snapshot(browser: StdioBrowser, thread: str) -> dict:
    count = len(browser.of("thread.snapshot"))
    browser.op({"type": "thread.subscribe", "submissionId": f"sub-{count}", "threadId": thread})
    return (await browser.wait_for("thread.snapshot", count + 1))["snapshot"]


def clicks(*browsers: StdioBrowser) -> int:
    return sum(1 for b in browsers for c in b.content_calls if c.tool == "click")


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


async def test_a_pending_approval_survives_kill_9_with_its_id_and_remaining_time(tmp_path, server):
    home = tmp_path / "tw"
    write_settings(home, server.url)
    server.add(*script())
    first = StdioBrowser(home)
    await first.start()
    thread, approval = await start_turn(first)
    assert approval["request"]["targetLine"] == '- button "Buy" [ref=sdoc_1_1]'
    first.kill()
    assert await first.wait_exit() == -9

    second = StdioBrowser(home)
    await second.start()  # the engine starts at the handshake and re-offers the approval
    initialize(second, 2, thread)
    snapshot = (await second.wait_for("initialized"))["snapshot"]
    assert [t["id"] for t in snapshot["threads"]] == [thread]
    [again] = snapshot["pendingApprovals"]
    assert again["approvalId"] == approval["approvalId"]
    assert again["deadlineAt"] == approval["deadlineAt"]
    assert 0 < again["remainingMs"] < approval["remainingMs"]
    assert snapshot["epoch"] == approval["stream"]["epoch"] + 1
    # The host's ref map died with the first process: the accepted click is checked again and
    # refused as stale (never sent); the model reads the page and asks again.
    server.add(*[buyer] * 5)
    second.op({"type": "approval.response", "submissionId": "answer-1", "approvalId": again["approvalId"],
               "decision": {"kind": "accept"}})
    fresh = await second.wait_for("approval.request")
    assert fresh["approvalId"] != approval["approvalId"]
    second.op({"type": "approval.response", "submissionId": "answer-2", "approvalId": fresh["approvalId"],
               "decision": {"kind": "accept"}})
    done = await second.wait_for("turn.complete")
    assert done["stopReason"] == "end"
    assert clicks(first, second) == 1
    assert await second.close() == 0


async def test_an_approval_whose_deadline_passed_during_the_outage_is_declined(tmp_path, server):
    home = tmp_path / "tw"
    # Long enough that the first host is killed well before it could time the approval out
    # itself, even on a busy machine.
    write_settings(home, server.url, approvalTimeoutSeconds=3)
    server.add(*script())
    first = StdioBrowser(home)
    await first.start()
    _, approval = await start_turn(first)
    first.kill()
    await first.wait_exit()
    await asyncio.sleep(3.1)
    server.add(Reply(text="The purchase was not approved in time."))
    second = StdioBrowser(home)
    await second.start()
    initialize(second, 2)
    assert (await second.wait_for("initialized"))["snapshot"].get("pendingApprovals", []) == []
    second.op({"type": "thread.subscribe", "submissionId": "sub", "threadId": approval["threadId"]})
    await second.wait_for("thread.snapshot")
    for _ in range(200):
        await asyncio.sleep(0.05)
        nodes = (await _snapshot(second, approval["threadId"]))["nodes"]
        if nodes[-1]["kind"] == "assistant_message":
            break
    decisions = [n for n in nodes if n["kind"] == "approval_decision"]
    assert decisions[0]["body"]["approvalId"] == approval["approvalId"]
    assert decisions[0]["body"]["by"] == "recovery" and decisions[0]["body"]["decision"]["kind"] == "decline"
    second.op({"type": "approval.response", "submissionId": "late", "approvalId": approval["approvalId"],
               "decision": {"kind": "accept"}})
    late = await second.wait_for("command.rejected")
    assert late["code"] == "already_decided"
    assert second.of("approval.request") == [] and clicks(first, second) == 0
    assert "timed out while the host was not running" in str(server.requests[-1]["body"]["messages"])
    await second.close()


async def test_kill_9_while_the_click_is_in_flight_never_replays_it(tmp_path, server):
    home = tmp_path / "tw"
    write_settings(home, server.url)
    server.add(*script())
    first = StdioBrowser(home)
    first.hold_clicks = True
    await first.start()
    thread, approval = await start_turn(first)
    first.op({"type": "approval.response", "submissionId": "answer-1", "approvalId": approval["approvalId"],
              "decision": {"kind": "accept"}})
    await first.wait_content("click")  # dispatched; the page never answers
    first.kill()
    await first.wait_exit()

    second = StdioBrowser(home)
    await second.start()
    initialize(second, 2, thread)
    snapshot = (await second.wait_for("initialized"))["snapshot"]
    run = snapshot["thread"]["activeRun"]
    assert run["state"] == "paused_uncertain" and run["pendingTool"]["tool"] == "click"
    assert run["pendingTool"]["startedAt"] > 0
    assert [a["state"] for a in snapshot["activity"]] == ["paused_uncertain"]
    await asyncio.sleep(0.5)
    assert second.of("approval.request") == [] and clicks(second) == 0
    server.add(Reply(text="The click had gone through."))
    second.op({"type": "run.resolveUncertain", "submissionId": "resolve-1", "threadId": thread,
               "runId": run["runId"], "resolution": "mark_done"})
    assert (await second.wait_for("turn.complete"))["stopReason"] == "end"
    assert clicks(first, second) == 1
    await second.close()


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.05, 0.2])
async def test_kill_9_right_after_the_answer_runs_the_click_at_most_once(tmp_path, server, delay):
    home = tmp_path / "tw"
    write_settings(home, server.url)
    server.add(*[buyer] * 6)
    first = StdioBrowser(home)
    await first.start()
    thread, approval = await start_turn(first)
    first.op({"type": "approval.response", "submissionId": "answer-1", "approvalId": approval["approvalId"],
              "decision": {"kind": "accept"}})
    await asyncio.sleep(delay)
    first.kill()
    await first.wait_exit()
    before = clicks(first)
    assert before <= 1

    second = StdioBrowser(home)
    await second.start()
    initialize(second, 2, thread)
    snapshot = (await second.wait_for("initialized"))["snapshot"]
    # Either the decision was durable (the run continues, or pauses as uncertain when the click
    # was already sent), or it was not (the same approval is offered again); answer whatever
    # comes, the same way.
    if (snapshot["thread"].get("activeRun") or {}).get("state") == "paused_uncertain":
        assert before == 1
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    answered: set[str] = set()
    while loop.time() < deadline:
        active = snapshot["thread"].get("activeRun")
        if second.of("turn.complete") or active is None or active["state"] == "paused_uncertain":
            break  # finished (here or before the kill), or waiting for the user to resolve it
        for request in [*snapshot.get("pendingApprovals", []), *second.of("approval.request")]:
            if request["approvalId"] not in answered:
                answered.add(request["approvalId"])
                second.op({"type": "approval.response", "submissionId": f"a-{request['approvalId']}",
                           "approvalId": request["approvalId"], "decision": {"kind": "accept"}})
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"the run neither finished nor paused: {[e.get('type') for e in second.events]}")
    assert clicks(first, second) == 1
    assert await second.close() == 0
