"""Control-socket methods for the approvals direct calls wait on (`tools.call` with `ask`: the
REPL's `tw.run`), answered by `tw.approve()` / `tw.decline()`.

    tools.approvals {thread_id?}                           -> approvals waiting (engine.approvals' shape, `direct: true`)
    tools.answer    {approval_id, kind, note?}             -> the call's ToolResult once it has run (or not)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from protocol.errors import ErrorCode

from host.calls.held import UnknownApproval, held_for
from host.control.params import parse_params as _params

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

ANSWER_WAIT_S = 600.0  # the call runs after the answer: a slow page load must still report back


class _Approvals(msgspec.Struct, forbid_unknown_fields=True):
    thread_id: Annotated[str, msgspec.Meta(min_length=1, max_length=512)] | None = None


class _Answer(msgspec.Struct, forbid_unknown_fields=True):
    approval_id: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    kind: Literal["accept", "acceptForSession", "acceptForSite", "decline"]
    note: Annotated[str, msgspec.Meta(max_length=2000)] | None = None


async def tools_approvals(params: dict[str, Any], conn: "ControlConnection") -> list[dict[str, Any]]:
    """The approvals direct calls wait on (of one thread, or all)."""
    p = _params(_Approvals, params)
    held = held_for(conn.server.host)
    now = held.clock()
    return [h.view(now) for h in held.pending(p.thread_id)]


async def tools_answer(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Answer a waiting approval, then wait for the call and return its ToolResult."""
    from host.control.errors import ControlError

    p = _params(_Answer, params)
    try:
        answered = held_for(conn.server.host).answer(p.approval_id, p.kind, p.note)
    except UnknownApproval:
        raise ControlError(ErrorCode.NOT_FOUND, f"no approval {p.approval_id!r} is waiting (answered already, timed "
                           "out, or never asked; see tw.approvals())", {"reason": "approval_not_found"}) from None
    if answered.outcome is None:
        return None
    result = await asyncio.wait_for(asyncio.shield(answered.outcome), ANSWER_WAIT_S)
    return result.to_builtins()


def register(server: "ControlServer") -> None:
    """Serve the held approvals' methods on `server`."""
    server.register("tools.approvals", tools_approvals)
    server.register("tools.answer", tools_answer)
