"""Settings ops ride the same door as every UI op: a port whose sender is not one of our own
extension's pages is refused before any op reaches the engine."""

from __future__ import annotations

import asyncio

from protocol import ui
from protocol.messages import UiConnect, UiOp
from protocol.schema import schema_hash

from host.ui.link import UiLink

EXT = "mkkfjemikhiioinehamkgllcnmcmfgod"


class Endpoint:
    is_open = True

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, message) -> None:
        self.sent.append(message)


async def connect_and_add_rule(link: UiLink, port: str, sender: str) -> None:
    await link.receive(UiConnect(client_id=port, sender_url=sender, page="settings"))
    await link.receive(UiOp(client_id=port, op={"type": "initialize", "submissionId": "i", "protocol": ui.ENGINE_PROTOCOL,
                                                "schemaHash": schema_hash(), "clientId": port}))
    await link.receive(UiOp(client_id=port, op={"type": "rules.add", "submissionId": "r", "tool": "*", "origin": "*",
                                                "verdict": "allow"}))
    await asyncio.sleep(0.05)


async def test_a_web_page_or_another_extension_cannot_change_rules(settings):
    endpoint = Endpoint()
    link = UiLink(lambda: endpoint, EXT, settings.commands.handle)
    for n, sender in enumerate(("https://evil.example/fake-panel.html",
                                "chrome-extension://abcdefghijklmnopabcdefghijklmnop/ui/settings.html")):
        await connect_and_add_rule(link, f"foreign-{n}", sender)
    assert all(m.event["type"] == "error" for m in endpoint.sent)
    assert {m.event["code"] for m in endpoint.sent} == {"invalid_command", "not_initialized"}
    assert not [r for r in (await settings.state())["rules"] if r["tool"] == "*"]
    await connect_and_add_rule(link, "ours", f"chrome-extension://{EXT}/ui/settings.html")
    answers = [m.event["type"] for m in endpoint.sent if m.client_id == "ours"]
    assert answers[:2] == ["initialized", "command.ack"]
    assert [r for r in (await settings.state())["rules"] if r["tool"] == "*" and r["origin"] == "*"]
