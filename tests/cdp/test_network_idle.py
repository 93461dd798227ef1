"""Network-idle waits: settled once nothing is in flight for the idle time; capped when a
request never ends; requests of frame sessions count too."""

from __future__ import annotations

import asyncio

from host.browser.l2.network_idle import NetworkIdle
from host.cdp.manager import CdpManager
from tests.support.fake_cdp import FakeTransport

TAB = 2


async def test_settles_after_requests_finish():
    fake = FakeTransport()
    client = CdpManager(fake).client(TAB)
    async with NetworkIdle(client) as network:
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "1"})
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "2"})

        async def finish():
            await asyncio.sleep(0.05)
            fake.event(TAB, "Network.loadingFinished", {"requestId": "1"})
            fake.event(TAB, "Network.loadingFailed", {"requestId": "2"})

        asyncio.create_task(finish())
        settled = await network.wait(idle=0.05, cap=2)
    assert settled.settled and settled.requests == 2 and settled.pending == 0
    assert [m for *_, m, _ in fake.sent] == ["Network.enable", "Network.disable"]


async def test_a_request_that_never_ends_hits_the_cap():
    fake = FakeTransport()
    manager = CdpManager(fake)
    client = manager.client(TAB)
    fake.event(TAB, "Target.attachedToTarget", {"sessionId": "S", "targetInfo": {"type": "iframe", "targetId": "T"}})
    async with NetworkIdle(client) as network:
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "stream"}, session_id="S")
        fake.event(TAB, "Network.requestWillBeSent", {"requestId": "stream"})  # same id, another session
        fake.event(TAB, "Network.loadingFinished", {"requestId": "stream"})
        settled = await network.wait(idle=0.05, cap=0.2)
    assert not settled.settled and settled.pending == 1 and settled.requests == 2
    assert ("S", "Network.enable") in {(s, m) for _, s, m, _ in fake.sent}
