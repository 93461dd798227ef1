"""The manager's bookkeeping: lifecycle epochs, flat child sessions (nested ones go with their
parent), our isolated world's contexts, the user's cancel, tab removal, and the agent-input window."""

from __future__ import annotations

import asyncio

import pytest

from host.cdp.manager import CdpManager
from tests.support.fake_cdp import FakeTransport

TAB = 5


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def manager(fake) -> CdpManager:
    return CdpManager(fake)


def attach(fake: FakeTransport, session: str, target: str, parent: str | None = None) -> None:
    fake.event(TAB, "Target.attachedToTarget", {"sessionId": session, "targetInfo": {"type": "iframe", "targetId": target,
                                                                                     "url": f"http://{target}/"}},
               session_id=parent)


async def test_every_lifecycle_event_bumps_the_epoch(manager, fake):
    epoch = manager.epoch_of(TAB)
    fake.event(TAB + 1, "Page.frameNavigated", {"frame": {"id": "F"}})  # another tab: no effect here
    for method in ("Page.frameStartedNavigating", "Page.frameNavigated", "Page.frameDetached", "Target.detachedFromTarget"):
        fake.event(TAB, method, {"frame": {"id": "F"}, "frameId": "F", "sessionId": "none"})
    attach(fake, "S1", "T1")
    assert manager.epoch_of(TAB) == epoch + 5
    for method in ("Page.loadEventFired", "Runtime.consoleAPICalled", "Network.requestWillBeSent"):
        fake.event(TAB, method, {})
    manager.invalidate(TAB, "the tab started loading")
    assert manager.epoch_of(TAB) == epoch + 6 and manager.state(TAB).epoch_reason == "the tab started loading"
    fake.detach(TAB, "target_closed")
    assert manager.epoch_of(TAB) == epoch + 7


async def test_child_sessions_are_set_up_and_nested_ones_leave_with_their_parent(manager, fake):
    manager.state(TAB)  # a tab is tracked from its first use
    attach(fake, "S1", "T1")
    attach(fake, "S2", "T2", parent="S1")
    child = await manager.wait_for_session(TAB, "T2", timeout=1)
    assert child is not None and child.parent == "S1"
    await asyncio.sleep(0.01)
    assert {(s, m) for _, s, m, _ in fake.sent} >= {("S1", "Page.enable"), ("S1", "Target.setAutoAttach"),
                                                    ("S2", "Page.enable"), ("S2", "Target.setAutoAttach")}
    fake.event(TAB, "Target.detachedFromTarget", {"sessionId": "S1"})
    assert manager.state(TAB).sessions == {}
    assert await manager.wait_for_session(TAB, "T9", timeout=0.05) is None


async def test_our_isolated_world_is_found_through_runtime_events(manager, fake):
    client = manager.client(TAB)
    context = {"id": 12, "name": "Tabwarden", "origin": "chrome-extension://abc",
               "auxData": {"type": "isolated", "frameId": "MAIN", "isDefault": False}}
    fake.handlers["Runtime.enable"] = lambda p, s: fake.event(TAB, "Runtime.executionContextCreated", {"context": context})
    assert await manager.isolated_context(client, "MAIN", timeout=1) == 12
    # A page's own world, or an isolated world under another name or origin, is never ours.
    for other in ({**context, "id": 13, "name": ""}, {**context, "id": 14, "origin": "http://evil.test"},
                  {**context, "id": 15, "auxData": {"type": "default", "frameId": "SUB"}}):
        fake.event(TAB, "Runtime.executionContextCreated", {"context": other})
    assert await manager.isolated_context(client, "SUB", timeout=0.05) is None
    fake.event(TAB, "Runtime.executionContextDestroyed", {"executionContextId": 12})
    assert await manager.isolated_context(client, "MAIN", timeout=0.05) is None
    assert [m for *_, m, _ in fake.sent].count("Runtime.enable") == 1


async def test_a_user_cancel_blocks_until_allowed_again(manager, fake):
    manager.state(TAB)
    fake.detach(TAB, "idle")
    assert manager.user_stopped(TAB) is None
    fake.detach(TAB, "canceled_by_user")
    assert manager.user_stopped(TAB) == "canceled_by_user"
    assert [d["reason"] for d in manager.detaches] == ["idle", "canceled_by_user"]
    manager.allow_again()
    assert manager.user_stopped(TAB) is None


async def test_a_removed_tab_fails_its_commands(manager, fake):
    from host.cdp.errors import CdpError

    client = manager.client(TAB)
    manager.tab_removed(TAB)
    with pytest.raises(CdpError) as caught:
        await client.send("DOM.enable")
    assert caught.value.code == "tab_closed" and fake.sent == []


async def test_agent_input_opens_a_short_window(manager, fake):
    assert not manager.recent_agent_input(TAB)
    await manager.client(TAB).send("Input.dispatchKeyEvent", {"type": "keyDown"})
    assert manager.recent_agent_input(TAB)
    assert not manager.recent_agent_input(TAB, window=0.0)
    assert not manager.recent_agent_input(TAB + 1)


async def test_agent_input_vouches_for_reports_while_it_is_on_its_way_however_long(manager, fake):
    # A long run of keys may take longer than the window: a report during it is still ours.
    answered = asyncio.get_running_loop().create_future()
    fake.handlers["Input.insertText"] = lambda p, s: answered
    client = manager.client(TAB)
    typing = client.begin("Input.insertText", {"text": "a long text"})
    await asyncio.sleep(0)
    assert manager.recent_agent_input(TAB, window=0.0)
    answered.set_result({})
    await typing
    assert not manager.recent_agent_input(TAB, window=0.0) and manager.recent_agent_input(TAB)
    # A batch likewise, and its end is noted however it ends (a failure too).
    from protocol.messages import CdpStep

    failing = asyncio.get_running_loop().create_future()
    fake.handlers["Input.dispatchMouseEvent"] = lambda p, s: failing
    batch = asyncio.ensure_future(client.batch([CdpStep(method="Input.dispatchMouseEvent", params={"type": "mouseMoved"})]))
    await asyncio.sleep(0)
    assert manager.recent_agent_input(TAB, window=0.0)
    failing.set_exception(RuntimeError("the bridge went away"))
    await asyncio.gather(batch, return_exceptions=True)
    assert not manager.recent_agent_input(TAB, window=0.0)
    # Commands that are not input vouch for nothing.
    await client.send("DOM.enable")
    assert manager.state(TAB).agent_inputs == 0
