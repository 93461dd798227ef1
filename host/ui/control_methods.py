"""Control-socket methods that send UI ops to the op server as a control client (REPL, tests,
benchmarks). Command identity: `control:<client>`.

    engine.op            {op, client?}                      -> the op's direct answer (ack, rejected, snapshot, ...)
    engine.answer        {approval_id, kind, note?}         -> approval.response with a fresh submission id
    interactions.answer  {interaction_id, kind, value?, note?} -> interaction.response with a fresh submission id
    engine.remove_provider {name}                           -> remove a provider and its stored key; open
                                                               settings pages are told

The first answer to an approval or interaction stands (as from a page).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec

from protocol import ui
from protocol.errors import ErrorCode

from host.control.engine_access import running_engine
from host.control.params import parse_params as _params
from host.engine.views import to_wire
from host.ui.client import Client

if TYPE_CHECKING:
    from host.control.server import ControlConnection, ControlServer

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
ANSWER_TIMEOUT_S = 60


class _Op(msgspec.Struct, forbid_unknown_fields=True):
    op: dict[str, Any]
    client: Annotated[str, msgspec.Meta(min_length=1, max_length=128)] | None = None


class _ApprovalAnswer(msgspec.Struct, forbid_unknown_fields=True):
    approval_id: Name
    kind: ui.DecisionKind
    note: Annotated[str, msgspec.Meta(max_length=4000)] | None = None


class _InteractionAnswer(msgspec.Struct, forbid_unknown_fields=True):
    interaction_id: Name
    kind: Literal["submit", "cancel"]
    value: Any = None
    note: Annotated[str, msgspec.Meta(max_length=4000)] | None = None


def _op_server(conn: "ControlConnection") -> Any:
    running_engine(conn)  # raises not_ready / internal when the host has no working engine
    return conn.server.host.services.engine.commands


async def _run_op(conn: "ControlConnection", op: dict[str, Any], key: str) -> Any:
    """Send `op` as the control client `key`; its direct answer as wire JSON."""
    answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def send(event: Any) -> None:
        if not answer.done():
            answer.set_result(to_wire(event))

    await _op_server(conn).handle(Client(send, key=key), op)
    return await asyncio.wait_for(answer, ANSWER_TIMEOUT_S)


async def engine_op(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Run one UI op as a control client (command identity: `control:<client>`)."""
    p = _params(_Op, params)
    return await _run_op(conn, p.op, f"control:{p.client or conn.client or 'control'}")


async def engine_answer(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Answer an approval (a shortcut for an approval.response op)."""
    from host.engine.store import new_id

    p = _params(_ApprovalAnswer, params)
    decision: dict[str, Any] = {"kind": p.kind}
    if p.note and p.kind == "decline":
        decision["note"] = p.note
    op = {"type": "approval.response", "submissionId": new_id(), "approvalId": p.approval_id, "decision": decision}
    return await _run_op(conn, op, f"control:{conn.client or 'control'}")


async def interactions_answer(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Answer an interaction (submit with a value, or cancel with a note), as an
    `interaction.response` op with a fresh submission id. The first answer stands."""
    from host.engine.store import new_id

    p = _params(_InteractionAnswer, params)
    response: dict[str, Any] = {"kind": p.kind}
    if p.kind == "submit" and p.value is not None:
        response["value"] = p.value
    if p.kind == "cancel" and p.note:
        response["note"] = p.note
    op = {"type": "interaction.response", "submissionId": new_id(), "interactionId": p.interaction_id,
          "response": response}
    return await _run_op(conn, op, f"control:{conn.client or 'control'}")


class _ProviderName(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


async def engine_remove_provider(params: dict[str, Any], conn: "ControlConnection") -> Any:
    """Remove a provider from engine.json and its key from the key store (the settings page's
    `providers.remove` does the same); a removed default leaves no default."""
    from host.config_files import EditRefused
    from host.control.server import ControlError
    from host.providers.removal import NOT_FOUND, remove_provider
    from host.ui.settings_state import broadcast_settings

    p = _params(_ProviderName, params)
    engine = running_engine(conn)
    try:
        removed = remove_provider(p.name, engine.providers.key_store())
    except EditRefused as exc:
        code = ErrorCode.NOT_FOUND if exc.code == NOT_FOUND else ErrorCode.INVALID_MESSAGE
        raise ControlError(code, exc.message, {"reason": exc.code}) from None
    broadcast_settings(engine)  # open settings pages show the list without it
    return removed.to_wire()



def register(server: "ControlServer") -> None:
    """Serve the op server's methods on `server`."""
    server.register("engine.op", engine_op)
    server.register("engine.answer", engine_answer)
    server.register("interactions.answer", interactions_answer)
    server.register("engine.remove_provider", engine_remove_provider)
