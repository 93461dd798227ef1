"""Our isolated world's kept context: used while its document lives, made again once when the
browser no longer knows it, and a failure of the fresh one is the browser's error as it is."""

from __future__ import annotations

import pytest

from host.browser.l2.probe_world import evaluate_in_probe_world
from host.cdp.errors import CdpCode, CdpError


class _State:
    def __init__(self) -> None:
        self.epoch = 3
        self.probe_worlds: dict = {}


class _Client:
    def __init__(self, contexts: list[int], failing: set[int]) -> None:
        self.state = _State()
        self.contexts, self.failing = contexts, failing
        self.sent: list[tuple[str, dict]] = []

    async def send(self, method, params=None, *, session_id=None, timeout=None, **_):
        self.sent.append((method, dict(params or {})))
        if method == "Page.createIsolatedWorld":
            return {"executionContextId": self.contexts.pop(0)}
        if params["contextId"] in self.failing:
            raise CdpError(CdpCode.PROTOCOL_ERROR, "Cannot find context with specified id")
        return {"result": {"value": params["contextId"]}}


async def test_the_kept_context_serves_until_its_document_is_gone():
    client = _Client([7, 8], failing=set())
    assert (await evaluate_in_probe_world(client, None, "F", {"expression": "1"}))["result"]["value"] == 7
    assert (await evaluate_in_probe_world(client, None, "F", {"expression": "1"}))["result"]["value"] == 7
    assert [m for m, _ in client.sent].count("Page.createIsolatedWorld") == 1
    client.failing.add(7)  # the document went: its world with it
    assert (await evaluate_in_probe_world(client, None, "F", {"expression": "1"}))["result"]["value"] == 8
    assert client.state.probe_worlds[(None, "F")] == (3, 8)


async def test_a_fresh_context_that_fails_too_raises_the_browsers_error():
    client = _Client([7, 7], failing={7})  # the browser hands back the same world, which fails
    client.state.probe_worlds[(None, "F")] = (3, 7)
    with pytest.raises(CdpError) as caught:
        await evaluate_in_probe_world(client, None, "F", {"expression": "1"})
    assert caught.value.code == CdpCode.PROTOCOL_ERROR
