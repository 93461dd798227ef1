"""Pages on the native link: only our own extension's pages are served, events reach the pages
that should see them, and ops from unknown ports get an error."""

from __future__ import annotations

from protocol import ui
from protocol.messages import UiConnect, UiDisconnect, UiOp
from protocol.schema import schema_hash

from host.ui.link import UiLink

EXT = "mkkfjemikhiioinehamkgllcnmcmfgod"


class Endpoint:
    is_open = True

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, message) -> None:
        self.sent.append(message)


def make(handle=None):
    endpoint = Endpoint()
    handled: list = []

    async def default(client, op):
        handled.append((client, op))
        if op.get("type") == "initialize":
            client.key = f"ui:{op['clientId']}"
            client.subscribe(op.get("subscribeThreadId") or "")

    return UiLink(lambda: endpoint, EXT, handle or default), endpoint, handled


async def test_pages_of_another_extension_are_refused():
    link, endpoint, handled = make()
    await link.receive(UiConnect(client_id="p1", sender_url="chrome-extension://abcdefghijklmnopabcdefghijklmnop/x.html",
                                 page="evil"))
    assert link.clients == {} and endpoint.sent[0].event["code"] == "invalid_command"
    await link.receive(UiOp(client_id="p1", op={"type": "ping", "submissionId": "s"}))
    assert handled == [] and endpoint.sent[1].event["code"] == "not_initialized"


async def test_events_go_to_subscribers_and_approvals_to_every_page():
    link, endpoint, _ = make()
    for port, thread in (("p1", "t1"), ("p2", "t2")):
        await link.receive(UiConnect(client_id=port, sender_url=f"chrome-extension://{EXT}/ui/sidepanel.html",
                                     page="sidepanel"))
        await link.receive(UiOp(client_id=port, op={"type": "initialize", "submissionId": "i", "protocol": "x",
                                                    "schemaHash": schema_hash(), "clientId": port,
                                                    "subscribeThreadId": thread}))
    cursor = ui.StreamCursor(thread_id="t1", epoch=1, sequence=1)
    link.sink(ui.TurnComplete(thread_id="t1", turn_id="u", run_id="r", stop_reason="end", stream=cursor), "t1")
    assert [m.client_id for m in endpoint.sent] == ["p1"]
    payload = ui.ApprovalRequestPayload(tool="click", label="Click", params={}, target_origin="https://a.example")
    link.sink(ui.ApprovalRequest(thread_id="t1", turn_id="u", approval_id="a", item_id="i", request=payload,
                                 deadline_at=1.0, remaining_ms=1, stream=cursor), "t1")
    assert sorted(m.client_id for m in endpoint.sent[1:]) == ["p1", "p2"]
    await link.receive(UiDisconnect(client_id="p2"))
    link.sink(ui.ActivityUpdated(activity=ui.Activity(thread_id="t1", running=False)), None)
    assert endpoint.sent[-1].client_id == "p1" and endpoint.sent[-1].event["type"] == "activity.updated"


async def test_an_unavailable_engine_answers_every_op_with_an_error():
    link, endpoint, _ = make()
    link._handle = None
    link.unavailable_reason = "the engine is unavailable: disk full"
    await link.receive(UiConnect(client_id="p1", sender_url=f"chrome-extension://{EXT}/ui/sidepanel.html", page="x"))
    await link.receive(UiOp(client_id="p1", op={"type": "thread.create", "submissionId": "s1"}))
    event = endpoint.sent[-1].event
    assert event["code"] == "storage_unavailable" and event["submissionId"] == "s1" and "disk full" in event["message"]
