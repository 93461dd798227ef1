"""The asyncio endpoint: correlation, timeouts with remote cancel, backpressure, closing."""

from __future__ import annotations

import asyncio
import socket
import struct

import msgspec
import pytest

from protocol.errors import ErrorCode, ErrorInfo
from protocol.framing import FrameEncoder, FrameSplitter, browser_encoder, extension_decoder, host_decoder
from protocol.messages import BrowserEvent, Cancel, DiagCall, Failure, Ping, Pong, ProtocolErrorReport, Result

from host.transport.endpoint import Endpoint, StreamSink
from host.transport.errors import Disconnected, Overloaded, RemoteError, RequestError, RequestTimeout


class FakeBrowser:
    """The other end of a socketpair, speaking the extension's side of the protocol."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.splitter, self.decoder, self.encoder = FrameSplitter(), extension_decoder(), browser_encoder()
        self.buffer: list = []

    async def receive(self, timeout: float = 2.0):
        while not self.buffer:
            data = await asyncio.wait_for(self.reader.read(65536), timeout)
            if not data:
                raise EOFError
            for payload in self.splitter.feed(data):
                message = self.decoder.decode(payload)
                if message is not None:
                    self.buffer.append(message)
        return self.buffer.pop(0)

    async def send(self, message) -> None:
        for frame in self.encoder.encode(message):
            self.writer.write(frame)
        await self.writer.drain()

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def check_alive(self) -> None:
        """The host still reads and answers: a ping comes back as a pong."""
        await self.send(Ping(id=999))
        assert await self.receive() == Pong(id=999)


@pytest.fixture
async def pair():
    a, b = socket.socketpair()
    host_reader, host_writer = await asyncio.open_unix_connection(sock=a)
    browser_reader, browser_writer = await asyncio.open_unix_connection(sock=b)
    endpoint = Endpoint(host_reader, StreamSink(host_writer), decoder=host_decoder(), encoder=FrameEncoder(),
                        splitter=FrameSplitter(), name="browser", max_pending=3, max_outbound=4, default_timeout=2)
    events: list = []
    endpoint.on_other(events.append)
    endpoint.start()
    browser = FakeBrowser(browser_reader, browser_writer)
    browser.events = events
    yield endpoint, browser
    await endpoint.close()
    browser_writer.close()


async def test_request_resolves_with_the_matching_result(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="echo", data=1)))
    first = await browser.receive()
    task2 = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="echo", data=2)))
    second = await browser.receive()
    await browser.send(Result(id=second.id, value="two"))  # answers out of order
    await browser.send(Result(id=first.id, value="one"))
    assert await task == "one" and await task2 == "two"


async def test_a_request_begun_is_sent_before_one_requested_after_it(pair):
    endpoint, browser = pair
    # Both are started in one step: the one begun first is on the wire first.
    waiting = asyncio.ensure_future(endpoint.begin(lambda i: DiagCall(id=i, op="echo", data="before")))
    after = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="echo", data="after")))
    first, second = await browser.receive(), await browser.receive()
    assert (first.data, second.data) == ("before", "after")
    await browser.send(Result(id=second.id, value=2))
    await browser.send(Result(id=first.id, value=1))
    assert await waiting == 1 and await after == 2
    # What waits for a begun request can be cancelled like a request: the peer is told.
    waiting = endpoint.begin(lambda i: DiagCall(id=i, op="info"), timeout=5)
    request = await browser.receive()
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert await browser.receive() == Cancel(id=request.id)
    # Even cancelled before it ever ran: nothing is left waiting, and the peer is told.
    waiting = endpoint.begin(lambda i: DiagCall(id=i, op="info"), timeout=5)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    request = await browser.receive()
    assert await browser.receive() == Cancel(id=request.id)
    assert not endpoint._pending


async def test_failure_becomes_a_remote_error_with_its_info(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info")))
    request = await browser.receive()
    await browser.send(Failure(id=request.id, error=ErrorInfo(code="stale_ref", message="old", retryable=True, phase="resolve")))
    with pytest.raises(RemoteError) as err:
        await task
    assert err.value.info.code == "stale_ref" and err.value.info.phase == "resolve"


async def test_timeout_sends_a_cancel_for_that_request_only(pair):
    endpoint, browser = pair
    with pytest.raises(RequestTimeout) as err:
        await endpoint.request(lambda i: DiagCall(id=i, op="info"), timeout=0.05)
    assert err.value.code == ErrorCode.TIMEOUT
    request = await browser.receive()
    cancel = await browser.receive()
    assert cancel == Cancel(id=request.id)


async def test_cancelling_the_caller_cancels_the_remote_work(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), timeout=5))
    request = await browser.receive()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await browser.receive() == Cancel(id=request.id)
    # a late answer is ignored quietly
    await browser.send(Result(id=request.id, value=1))
    await browser.check_alive()


async def test_too_many_pending_requests_is_overloaded(pair):
    endpoint, _browser = pair
    tasks = [asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), timeout=5)) for _ in range(3)]
    await asyncio.sleep(0)
    with pytest.raises(Overloaded) as err:
        await endpoint.request(lambda i: DiagCall(id=i, op="info"))
    assert err.value.code == ErrorCode.OVERLOADED
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_full_outbound_queue_is_overloaded_not_unbounded():
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=a)

    class StuckSink:
        async def write(self, data: bytes) -> None:
            await asyncio.Event().wait()

        def close(self) -> None:
            writer.close()

    endpoint = Endpoint(reader, StuckSink(), decoder=host_decoder(), encoder=FrameEncoder(), splitter=FrameSplitter(),
                        max_outbound=2)
    endpoint.start()
    with pytest.raises(Overloaded):
        for i in range(10):
            endpoint.send(Ping(id=i))
            await asyncio.sleep(0)
    b.close()
    await endpoint.close(drain_timeout=0.1)


async def test_a_send_with_nothing_queued_is_written_at_once_and_order_holds_when_the_peer_stalls():
    a, b = socket.socketpair()
    reader, writer = await asyncio.open_unix_connection(sock=a)
    endpoint = Endpoint(reader, StreamSink(writer), decoder=host_decoder(), encoder=FrameEncoder(),
                        splitter=FrameSplitter(), max_outbound=4)
    endpoint.start()
    b.setblocking(False)
    endpoint.send(DiagCall(id=1, op="echo", data="first"))
    assert b.recv(1 << 16)  # on the wire before `send` returned: no turn of the event loop taken
    payload = "x" * (64 << 10)
    sent = 1
    with pytest.raises(Overloaded):  # a peer that stops reading stops the sender at the queue
        for i in range(2, 1000):
            endpoint.send(DiagCall(id=i, op="echo", data=payload))
            sent = i
            assert writer.transport.get_write_buffer_size() <= 2 * len(payload)
            await asyncio.sleep(0)
    splitter, decoder, ids = FrameSplitter(), extension_decoder(), []
    loop = asyncio.get_running_loop()
    while len(ids) < sent - 1:  # the peer reads again; what was queued follows what was written
        for frame in splitter.feed(await asyncio.wait_for(loop.sock_recv(b, 1 << 20), 2)):
            ids.append(decoder.decode(frame).id)
    assert ids == list(range(2, sent + 1))  # every message taken, in the order sent
    b.close()
    await endpoint.close(drain_timeout=0.1)


async def test_peer_ping_is_answered_and_events_are_dispatched_in_order(pair):
    endpoint, browser = pair
    await browser.send(Ping(id=77))
    assert await browser.receive() == Pong(id=77)
    for n in range(3):
        await browser.send(BrowserEvent(name="tabs.updated", data={"n": n}))
    await browser.check_alive()
    await asyncio.sleep(0.05)
    assert [e.data["n"] for e in browser.events] == [0, 1, 2]


async def test_bad_frame_is_reported_and_the_link_survives(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info")))
    request = await browser.receive()
    await browser.send_raw(struct.pack("<I", 9) + b"{garbage}")
    report = await browser.receive()
    assert isinstance(report, ProtocolErrorReport) and report.error.code == ErrorCode.BAD_FRAME
    # a malformed reply fails the request it names
    bad_reply = msgspec.json.encode({"type": "result", "id": request.id, "value": 1, "oops": True})
    await browser.send_raw(struct.pack("<I", len(bad_reply)) + bad_reply)
    with pytest.raises(RequestError) as err:
        await task
    assert err.value.code == ErrorCode.INVALID_MESSAGE
    assert (await browser.receive()).request_id == request.id
    await browser.check_alive()


async def test_corrupt_length_prefix_closes_and_fails_waiters(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), timeout=5))
    await browser.receive()
    await browser.send_raw(struct.pack("<I", 0xFFFFFFFF))
    with pytest.raises(Disconnected):
        await task
    await asyncio.wait_for(endpoint.closed.wait(), 2)
    assert endpoint.close_reason == ErrorCode.CORRUPT_STREAM
    with pytest.raises(Disconnected):
        endpoint.send(Ping(id=1))


async def test_end_of_input_fails_pending_requests(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), timeout=5))
    await browser.receive()
    browser.writer.close()
    with pytest.raises(Disconnected):
        await task
    assert endpoint.close_reason == "end of input"


class Snapshot(msgspec.Struct):
    text: str
    generation: int


async def test_results_decode_straight_into_the_requested_type(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), result_type=Snapshot))
    request = await browser.receive()
    await browser.send(Result(id=request.id, value={"text": "- button", "generation": 2}))
    assert await task == Snapshot("- button", 2)


async def test_a_result_of_the_wrong_shape_fails_its_request(pair):
    endpoint, browser = pair
    task = asyncio.create_task(endpoint.request(lambda i: DiagCall(id=i, op="info"), result_type=Snapshot))
    request = await browser.receive()
    await browser.send(Result(id=request.id, value={"text": 5}))
    with pytest.raises(RequestError) as err:
        await task
    assert err.value.code == ErrorCode.INVALID_MESSAGE and "$.value.text" in err.value.info.message
    report = await browser.receive()
    assert isinstance(report, ProtocolErrorReport) and report.request_id == request.id
    await browser.check_alive()


async def test_a_busy_dispatcher_slows_the_reader_instead_of_dropping_events():
    a, b = socket.socketpair()
    host_reader, host_writer = await asyncio.open_unix_connection(sock=a)
    browser_reader, browser_writer = await asyncio.open_unix_connection(sock=b)
    endpoint = Endpoint(host_reader, StreamSink(host_writer), decoder=host_decoder(), encoder=FrameEncoder(),
                        splitter=FrameSplitter(), name="browser", max_inbound=2)
    release, seen = asyncio.Event(), []

    async def slow(event) -> None:
        await release.wait()
        seen.append(event.data["n"])

    endpoint.on(BrowserEvent, slow)
    endpoint.start()
    browser = FakeBrowser(browser_reader, browser_writer)
    for n in range(20):
        await browser.send(BrowserEvent(name="tabs.updated", data={"n": n}))
    await asyncio.sleep(0.1)
    release.set()
    await browser.check_alive()  # read after the twenty: the reader caught up once they were placed
    await asyncio.sleep(0.05)
    assert seen == list(range(20)) and endpoint.refused == 0
    await endpoint.close()
    browser_writer.close()
