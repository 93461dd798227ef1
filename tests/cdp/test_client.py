"""The bridge client: domain allowlist, cancellation, fail-fast on detach and on a changed
epoch, many handlers per event dispatched off the receive loop, cdp-use's typed library on our
transport, and the endpoint transport's mapping of wire failures."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from protocol.errors import ErrorInfo
from protocol.messages import CdpCommand

from host.cdp.errors import CdpCode, CdpError
from host.cdp.manager import CdpManager
from host.cdp.shim import resolvable
from host.cdp.transport import EndpointTransport
from host.transport.errors import RemoteError, RequestTimeout
from tests.support.fake_cdp import FakeTransport, forever


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def manager(fake) -> CdpManager:
    return CdpManager(fake, default_timeout=5)


async def test_disallowed_domains_and_bad_names_are_refused_before_sending(manager, fake):
    client = manager.client(1)
    for method in ("Browser.getVersion", "SystemInfo.getInfo", "Extensions.loadUnpacked", "nodot", "DOM.", "D0M.x"):
        with pytest.raises(CdpError) as caught:
            await client.send(method)
        assert caught.value.code == CdpCode.DOMAIN_NOT_ALLOWED
    assert "Browser domain" in str(await _error(client.send("Browser.getVersion")))
    assert fake.sent == []


async def _error(awaitable) -> CdpError:
    try:
        await awaitable
    except CdpError as exc:
        return exc
    raise AssertionError("no error")


async def test_results_and_session_ids_pass_through(manager, fake):
    fake.handlers["DOM.describeNode"] = lambda params, session: {"node": {"backendNodeId": params["backendNodeId"]}}
    client = manager.client(7)
    assert await client.send("DOM.describeNode", {"backendNodeId": 42}) == {"node": {"backendNodeId": 42}}
    fake.event(7, "Target.attachedToTarget", {"sessionId": "S1", "targetInfo": {"type": "iframe", "targetId": "F1"}})
    await client.send("Runtime.evaluate", {"expression": "1"}, session_id="S1")
    assert (7, "S1", "Runtime.evaluate", {"expression": "1"}) in fake.sent
    await asyncio.sleep(0.01)  # the new frame session was set up in the background
    assert sorted(m for _, s, m, _ in fake.sent if s == "S1") == ["Page.enable", "Runtime.evaluate", "Target.setAutoAttach"]


async def test_cancelling_the_caller_cancels_the_request(manager, fake):
    fake.handlers["Runtime.evaluate"] = forever
    task = asyncio.create_task(manager.client(1).send("Runtime.evaluate", {"expression": "x"}))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0)
    assert fake.cancelled == ["Runtime.evaluate"]


async def test_a_detach_fails_waiting_commands_at_once(manager, fake):
    fake.handlers["Runtime.evaluate"] = forever
    task = asyncio.create_task(manager.client(1).send("Runtime.evaluate", {"expression": "x"}, timeout=60))
    await asyncio.sleep(0.01)
    fake.detach(1, "canceled_by_user")
    error = await _error(asyncio.wait_for(task, 1))
    assert error.code == CdpCode.DETACHED and error.details["reason"] == "canceled_by_user"
    await asyncio.sleep(0)
    assert fake.cancelled == ["Runtime.evaluate"]
    # The next command goes out (the extension attaches again on demand).
    fake.handlers.pop("Runtime.evaluate")
    assert await manager.client(1).send("Runtime.evaluate", {"expression": "y"}) == {}


async def test_a_stale_epoch_sends_nothing(manager, fake):
    client = manager.client(3)
    epoch = client.epoch
    fake.event(3, "Page.frameNavigated", {"frame": {"id": "main"}})
    assert client.epoch == epoch + 1
    error = await _error(client.send("Input.dispatchMouseEvent", {"type": "mousePressed"}, expect_epoch=epoch))
    assert error.code == CdpCode.EPOCH_CHANGED and "Page.frameNavigated" in error.message
    error = await _error(client.send("DOM.focus", {"backendNodeId": 1}, session_id="gone"))
    assert error.code == CdpCode.SESSION_GONE
    assert fake.sent == []


async def test_begin_sends_in_call_order_without_waiting(manager, fake):
    gate = asyncio.Event()

    async def slow(params, session):
        await gate.wait()
        return {"moved": True}

    fake.handlers["Input.dispatchMouseEvent"] = lambda params, session: slow(params, session) \
        if params["type"] == "mouseMoved" else {}
    client = manager.client(1)
    moved = client.begin("Input.dispatchMouseEvent", {"type": "mouseMoved"})
    await client.send("Input.dispatchMouseEvent", {"type": "mousePressed"})
    assert [p["type"] for *_, p in fake.sent] == ["mouseMoved", "mousePressed"] and not moved.done()
    gate.set()
    assert await moved == {"moved": True}


async def test_many_handlers_per_event_off_the_receive_loop(manager, fake):
    client = manager.client(1)
    seen: list[str] = []
    release = asyncio.Event()

    async def slow(event):
        await release.wait()
        seen.append("slow")

    def broken(event):
        raise RuntimeError("a handler bug")

    client.on("Page.loadEventFired", slow)
    client.on("Page.loadEventFired", broken)
    client.register.Page.loadEventFired(lambda params, session: seen.append(f"typed {params['timestamp']}"))
    client.register.Page.loadEventFired(lambda params, session: seen.append("second typed"))
    fake.event(1, "Page.loadEventFired", {"timestamp": 5})
    assert seen == []  # delivery only queues: the receive loop never runs a handler
    # A command answered while a handler is still busy is not held up by it.
    assert await client.send("Page.enable") == {}
    await asyncio.sleep(0.01)
    assert seen == ["typed 5", "second typed"]
    release.set()
    await asyncio.sleep(0.01)
    assert seen[-1] == "slow"
    event = asyncio.create_task(manager.bus.wait_for("Page.domContentEventFired", tab_id=1, timeout=1))
    await asyncio.sleep(0)
    fake.event(2, "Page.domContentEventFired")
    fake.event(1, "Page.domContentEventFired", {"timestamp": 9})
    assert (await event).params == {"timestamp": 9}
    await manager.close()


async def test_cdp_use_typed_domains_run_on_the_bridge(manager, fake):
    fake.handlers["DOM.getBoxModel"] = lambda params, session: {"model": {"content": [1, 2, 3, 4, 5, 6, 7, 8]}}
    client = manager.client(4)
    answer = await client.cdp.DOM.getBoxModel(params={"backendNodeId": 9}, session_id=None)
    assert answer["model"]["content"][0] == 1
    assert fake.sent == [(4, None, "DOM.getBoxModel", {"backendNodeId": 9})]
    with pytest.raises(CdpError):
        await client.cdp.Browser.getVersion()


def test_the_shim_makes_cdp_use_types_decodable():
    from cdp_use.cdp.accessibility.commands import GetFullAXTreeReturns
    from cdp_use.cdp.dom.commands import DescribeNodeReturns

    tree = msgspec.json.decode(b'{"nodes": [{"nodeId": "1", "ignored": false, "backendDOMNodeId": 4}]}',
                               type=resolvable(GetFullAXTreeReturns))
    assert tree["nodes"][0]["backendDOMNodeId"] == 4
    with pytest.raises(msgspec.ValidationError, match=r"\$\.node\.nodeId"):
        msgspec.json.decode(b'{"node": {"nodeId": "x", "backendNodeId": 1, "nodeType": 1, "nodeName": "A", '
                            b'"localName": "a", "nodeValue": ""}}', type=resolvable(DescribeNodeReturns))


class _Endpoint:
    """What EndpointTransport needs of the host's endpoint."""

    is_open = True

    def __init__(self, outcome: Any):
        self.outcome = outcome
        self.built: list[Any] = []
        self.timeouts: list[float] = []
        self.hooks: dict[type, Any] = {}

    def on(self, kind, handler) -> None:
        self.hooks[kind] = handler

    async def request(self, build, timeout=None, result_type=Any):
        self.built.append(build(11))
        self.timeouts.append(timeout)
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


async def test_the_endpoint_transport_frames_commands_and_maps_failures():
    endpoint = _Endpoint({"ok": 1})
    transport = EndpointTransport(lambda: endpoint)
    got: list[Any] = []
    transport.connect(lambda *event: got.append(event), lambda *detach: got.append(detach))
    assert await transport.command(5, "S", "DOM.enable", {"a": 1}, timeout=7) == {"ok": 1}
    frame = endpoint.built[0]
    assert isinstance(frame, CdpCommand) and (frame.tab_id, frame.session_id, frame.deadline_ms) == (5, "S", 7000)
    assert endpoint.timeouts[0] > 7  # the extension times out first and says so
    from protocol.messages import CdpDetached, CdpEvent

    endpoint.hooks[CdpEvent](CdpEvent(tab_id=5, method="Page.frameNavigated", params={"x": 1}))
    endpoint.hooks[CdpDetached](CdpDetached(tab_id=5, reason="target_closed"))
    assert got == [(5, None, "Page.frameNavigated", {"x": 1}), (5, "target_closed")]
    cases = [
        (RemoteError(ErrorInfo(code="cdp_error", message="No node", details={"cdpCode": -32000})), "cdp_error", True),
        (RemoteError(ErrorInfo(code="cdp_domain_not_allowed", message="no")), "cdp_domain_not_allowed", False),
        (RequestTimeout("late"), "timeout", True),
    ]
    for outcome, code, dispatched in cases:
        endpoint.outcome = outcome
        error = await _error(transport.command(5, None, "DOM.enable", {}, timeout=1))
        assert (error.code, error.dispatched) == (code, dispatched)
    gone = EndpointTransport(lambda: None)
    assert (await _error(gone.command(1, None, "DOM.enable", {}, timeout=1))).code == CdpCode.NOT_CONNECTED


async def test_a_batch_runs_its_steps_in_order_and_stops_at_a_failure_or_an_unexpected_value(manager, fake):
    from protocol.messages import CdpStep

    client = manager.client(3)
    fake.handlers["Runtime.evaluate"] = lambda params, session: {"result": {"type": "boolean", "value": params["expression"] == "ok"}}
    look = CdpStep(method="Runtime.evaluate", params={"expression": "ok"}, expect=True)
    key = CdpStep(method="Input.dispatchKeyEvent", params={"type": "keyDown"})
    outcome = await client.batch([look, key, CdpStep(method="Runtime.evaluate", params={"expression": "no"})])
    assert outcome.stopped_at is None and len(outcome.results) == 3 and outcome.results[2]["result"]["value"] is False
    assert fake.methods() == ["Runtime.evaluate", "Input.dispatchKeyEvent", "Runtime.evaluate"]
    # An unexpected value stops the batch there: its result is kept, nothing after it is sent.
    fake.sent.clear()
    wrong = CdpStep(method="Runtime.evaluate", params={"expression": "moved"}, expect=True)
    outcome = await client.batch([wrong, key])
    assert (outcome.stopped_at, outcome.unexpected, len(outcome.results)) == (0, False, 1) and fake.writes() == []
    # A failing step stops it too, with why; the steps before it ran.
    fake.sent.clear()

    def refused(params, session):
        raise CdpError(CdpCode.PROTOCOL_ERROR, "Cannot find context with specified id")

    fake.handlers["Runtime.evaluate"] = refused
    outcome = await client.batch([key, look, key])
    assert outcome.stopped_at == 1 and outcome.error is not None and "Cannot find context" in outcome.error.message
    assert fake.methods() == ["Input.dispatchKeyEvent", "Runtime.evaluate"] and len(outcome.results) == 1
    # Checked before anything is sent: the domains, the epoch, the sessions.
    fake.sent.clear()
    with pytest.raises(CdpError) as caught:
        await client.batch([key, CdpStep(method="Browser.close")])
    assert caught.value.code == CdpCode.DOMAIN_NOT_ALLOWED
    with pytest.raises(CdpError) as caught:
        await client.batch([key], expect_epoch=client.epoch + 1)
    assert caught.value.code == CdpCode.EPOCH_CHANGED
    with pytest.raises(CdpError) as caught:
        await client.batch([CdpStep(session_id="S-GONE", method="Input.dispatchKeyEvent")])
    assert caught.value.code == CdpCode.SESSION_GONE and fake.sent == []


async def test_the_endpoint_transport_sends_a_batch_as_one_frame():
    from protocol.messages import CdpBatch, CdpBatchOutcome, CdpStep

    endpoint = _Endpoint(CdpBatchOutcome(results=[{}], tabs_before=[], tabs_after=[]))
    transport = EndpointTransport(lambda: endpoint)
    steps = [CdpStep(method="Runtime.evaluate", expect=True), CdpStep(method="Network.enable", overlap=True)]
    outcome = await transport.batch(4, steps, timeout=2, list_tabs=True)
    frame = endpoint.built[0]
    assert isinstance(frame, CdpBatch) and frame.steps == steps and frame.list_tabs and frame.deadline_ms == 2000
    assert outcome.results == [{}] and endpoint.timeouts[0] > 2
    wire = msgspec.json.encode(frame)
    assert b'"listTabs":true' in wire and b'"overlap":true' in wire and b'"expect":true' in wire
    endpoint.outcome = RemoteError(ErrorInfo(code="cdp_attach_failed", message="no", details={"dispatched": False}))
    error = await _error(transport.batch(4, steps, timeout=1))
    assert (error.code, error.dispatched) == ("cdp_attach_failed", False)
