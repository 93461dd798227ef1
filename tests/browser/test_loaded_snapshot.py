"""The snapshot a load brings with it (the extension reads the page as the load ends): recorded
as a read of the host's own, replaced by a read of the host's own when the load brought none or
its read found no executor answering, and a refusal said in the answer's words."""

from __future__ import annotations

import asyncio
from typing import Any

from host.browser import snapshots
from host.browser.refmap import RefMap
from host.tools.failure import ToolFailure

SNAPSHOT = {"id": "s1", "docToken": "d0c", "snapshotId": 1, "text": "- heading \"Page 1\"", "refCount": 0}
LOADED = {"resultText": "- heading \"Page 1\"", "snapshot": SNAPSHOT}


class Bridge:
    """Answers the host's own reads; counts them."""

    def __init__(self, answer: dict[str, Any] | ToolFailure):
        self.answer = answer
        self.reads: list[tuple[int, str]] = []

    async def content(self, tab_id: int, tool: str, params: dict[str, Any], *, write: bool) -> Any:
        from host.browser.wire import ExecuteResult
        import msgspec

        self.reads.append((tab_id, tool))
        if isinstance(self.answer, ToolFailure):
            raise self.answer
        return msgspec.convert(self.answer, ExecuteResult)


def run(bridge: Bridge, loaded: dict[str, Any], refs: RefMap | None = None) -> str:
    return asyncio.run(snapshots.loaded_snapshot(bridge, refs or RefMap(), 7, loaded))  # type: ignore[arg-type]


def test_a_snapshot_the_load_brought_is_used_and_recorded_without_a_read_of_our_own():
    bridge, refs = Bridge(ToolFailure("unknown", "must not be asked")), RefMap()
    text = run(bridge, {"closed": False, "timedOut": False, "snapshot": LOADED}, refs)
    assert text == LOADED["resultText"] and bridge.reads == []
    assert refs.last_text(7) == ("d0c", SNAPSHOT["text"])


def test_without_a_snapshot_the_page_is_read_by_the_host():
    bridge = Bridge({**LOADED, "resultText": "read again"})
    assert run(bridge, {"closed": False, "timedOut": True}) == "read again"
    assert bridge.reads == [(7, "read_page")]


def test_a_read_that_met_no_executor_is_made_again_by_the_host():
    bridge = Bridge({**LOADED, "resultText": "read again"})
    loaded = {"snapshotFailure": {"code": "no_reply", "message": "the page did not answer read_page"}}
    assert run(bridge, loaded) == "read again" and len(bridge.reads) == 1


def test_a_refused_read_is_said_and_not_repeated():
    bridge = Bridge(LOADED)
    loaded = {"snapshotFailure": {"code": "host_permission_required", "message": "cannot run in tab 7"}}
    assert run(bridge, loaded) == "(no snapshot: host_permission_required: cannot run in tab 7)"
    assert bridge.reads == []


def test_a_malformed_snapshot_is_not_trusted_and_the_page_is_read_again():
    bridge = Bridge({**LOADED, "resultText": "read again"})
    assert run(bridge, {"snapshot": {"resultText": 3}}) == "read again"
