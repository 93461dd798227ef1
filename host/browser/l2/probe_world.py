"""Our isolated world in a frame document: where the host's scripts read a page that its own
scripts cannot redefine (`Page.createIsolatedWorld`, reused by name). Its execution context is
kept per frame for the tab's lifecycle epoch (a navigation or a frame change starts a new one),
so a second look at the same frame sends one command."""

from __future__ import annotations

from typing import Any

from host.browser.l2.frames import READ_TIMEOUT_S
from host.cdp.client import TabClient
from host.cdp.errors import CdpCode, CdpError

PROBE_WORLD = "tabwarden-probe"


async def _context(client: TabClient, session: str | None, frame_id: str, timeout: float) -> int:
    world = await client.send("Page.createIsolatedWorld", {"frameId": frame_id, "worldName": PROBE_WORLD},
                              session_id=session, timeout=timeout)
    context = int(world["executionContextId"])
    epoch = client.state.epoch
    worlds = client.state.probe_worlds
    for older in [k for k, (at, _) in worlds.items() if at != epoch]:
        del worlds[older]  # from documents that are gone
    worlds[(session, frame_id)] = (epoch, context)
    return context


def kept_context(client: TabClient, session: str | None, frame_id: str) -> int | None:
    """The execution context of our world in the frame document, when one is kept for the tab's
    current lifecycle epoch."""
    kept = client.state.probe_worlds.get((session, frame_id))
    return kept[1] if kept and kept[0] == client.state.epoch else None


async def evaluate_in_probe_world(client: TabClient, session: str | None, frame_id: str, params: dict[str, Any],
                                  *, timeout: float = READ_TIMEOUT_S) -> dict[str, Any]:
    """`Runtime.evaluate` with `params` in our world of the frame document; returns its answer.
    A kept context that is gone with its document is made again once."""
    kept = kept_context(client, session, frame_id)
    if kept is not None:
        try:
            return await client.send("Runtime.evaluate", {**params, "contextId": kept}, session_id=session,
                                     timeout=timeout)
        except CdpError as exc:
            if exc.code != CdpCode.PROTOCOL_ERROR:
                raise
    context = await _context(client, session, frame_id, timeout)
    return await client.send("Runtime.evaluate", {**params, "contextId": context}, session_id=session, timeout=timeout)
