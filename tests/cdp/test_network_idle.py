"""Waiting for what trusted input set off: no wait when the input started nothing; else settled
once nothing is in flight for the quiet time; capped when a request never ends; requests of
frame sessions and frame loads count too; the page's round trip comes first, so a request its
handlers start is seen."""

from __future__ import annotations

import asyncio

from host.browser.l2.network_idle import NetworkIdle
from host.cdp.manager import CdpManager
from tests.support.fake_cdp import FakeTransport

TAB = 2


async def test_nothing_started_means_no_wait():
    fake = FakeTransport()
    client = CdpManager(fake).client(TAB)
    loop = asyncio.get_running_loop()
    async with NetworkIdle(client) as network:
        started = loop.time()
        settled = await network.wait(quiet=5, cap=10)
    assert settled.settled and settled.requests == 0 and loop.time() - started < 1
    await asyncio.sleep(0.01)  # the tracking is stopped without being waited for
    assert [m for *_, m, _ in fake.sent] == ["Network.enable", "Runtime.evaluate", "Network.disable"]


async def test_a_request_started_by_the_handlers_is_waited_for():
    fake = FakeTransport()
    client = CdpManager(fake).client(TAB)

    async def handlers_run(params, session_id):
        # The page handles the input before answering the round trip: its request is reported first.
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "late"})
        asyncio.get_running_loop().call_later(0.1, fake.event, TAB, "Network.loadingFinished", {"requestId": "late"})
        return {"result": {"value": 0}}

    fake.handlers["Runtime.evaluate"] = handlers_run
    async with NetworkIdle(client) as network:
        settled = await network.wait(quiet=0.05, cap=2)
    assert settled.settled and settled.requests == 1 and settled.pending == 0
    assert settled.waited_ms >= 100  # it waited for the response, not just the round trip


async def test_settles_after_requests_and_loads_finish():
    fake = FakeTransport()
    client = CdpManager(fake).client(TAB)
    async with NetworkIdle(client) as network:
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "1"})
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "2"})
        fake.event(TAB, "Page.frameStartedLoading", {"frameId": "F"})

        async def finish():
            await asyncio.sleep(0.05)
            fake.event(TAB, "Network.loadingFinished", {"requestId": "1"})
            fake.event(TAB, "Network.loadingFailed", {"requestId": "2"})
            fake.event(TAB, "Page.frameStoppedLoading", {"frameId": "F"})

        asyncio.create_task(finish())
        settled = await network.wait(quiet=0.05, cap=2)
    assert settled.settled and settled.requests == 3 and settled.pending == 0


async def test_a_request_that_never_ends_hits_the_cap():
    fake = FakeTransport()
    manager = CdpManager(fake)
    client = manager.client(TAB)
    fake.event(TAB, "Target.attachedToTarget", {"sessionId": "S", "targetInfo": {"type": "iframe", "targetId": "T"}})
    async with NetworkIdle(client) as network:
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "stream"}, session_id="S")
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "stream"})  # same id, another session
        fake.event(TAB, "Network.loadingFinished", {"requestId": "stream"})
        settled = await network.wait(quiet=0.05, cap=0.2)
    assert not settled.settled and settled.pending == 1 and settled.requests == 2
    assert ("S", "Network.enable") in {(s, m) for _, s, m, _ in fake.sent}
