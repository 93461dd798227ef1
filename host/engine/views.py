"""Stored rows as the wire shapes of protocol.ui (snapshots, run and approval views)."""

from __future__ import annotations

from typing import Any

import msgspec

from protocol import ui

from host.engine.records import NodeRow, RunRow, ThreadRow, WaitRow


def thread_meta(row: ThreadRow) -> ui.ThreadMeta:
    """A thread row as ui.ThreadMeta."""
    return ui.ThreadMeta(id=row.id, title=row.title, created_at=row.created_at, updated_at=row.updated_at,
                         revision=row.revision, leaf_id=row.leaf_id, parent_thread_id=row.parent_thread_id,
                         permission_policy=row.policy)  # type: ignore[arg-type]


def node_view(row: NodeRow) -> ui.NodeView:
    """A node row as ui.NodeView (body as camelCase JSON)."""
    body = row.body if isinstance(row.body, dict) else msgspec.to_builtins(row.body)
    return ui.NodeView(id=row.id, kind=row.kind, seq=row.seq, created_at=row.created_at, parent_id=row.parent_id,
                       turn_id=row.turn_id, body=body)


def run_view(row: RunRow) -> ui.RunView:
    """A run row as ui.RunView."""
    pending = None
    if row.pending_tool is not None:
        p = row.pending_tool
        pending = ui.PendingToolView(call_id=p.call_id, tool=p.tool, params=p.params, target_origin=p.target_origin,
                                     effects=p.effects, recovery=p.recovery, started_at=p.started_at)
    return ui.RunView(run_id=row.id, state=row.state, revision=row.revision, created_at=row.created_at,  # type: ignore[arg-type]
                      turn_id=row.turn_id, input_text=str(row.input.get("text", ""))[:2000], pending_tool=pending,
                      stop_reason=row.stop_reason, error=row.error)  # type: ignore[arg-type]


def approval_payload(request: dict[str, Any]) -> ui.ApprovalRequestPayload:
    """A stored approval request as ui.ApprovalRequestPayload."""
    return msgspec.convert(request, ui.ApprovalRequestPayload)


def pending_approval(row: WaitRow, now: float) -> ui.PendingApproval:
    """A pending approval with the milliseconds it has left at `now`."""
    return ui.PendingApproval(approval_id=row.id, thread_id=row.thread_id, turn_id=row.turn_id, item_id=row.item_id,
                              request=approval_payload(row.request), requested_at=row.requested_at,
                              deadline_at=row.deadline_at, remaining_ms=max(0, int((row.deadline_at - now) * 1000)))


def pending_interaction(row: WaitRow, now: float) -> ui.PendingInteraction:
    """A pending question with the milliseconds it has left at `now`."""
    return ui.PendingInteraction(interaction_id=row.id, thread_id=row.thread_id, turn_id=row.turn_id,
                                 item_id=row.item_id, request=row.request, requested_at=row.requested_at,
                                 deadline_at=row.deadline_at, remaining_ms=max(0, int((row.deadline_at - now) * 1000)))


def to_wire(event: Any) -> dict[str, Any]:
    """An event Struct as the JSON object a page receives."""
    return msgspec.to_builtins(event)


EFFECT_GRANT = "effect:"  # a commit allowed for the task on a card, as the gatekeeper grants it
_CARD_PREFIX = "card:"


def card_grant_view(effect: str, origin: str) -> ui.ConsentItemView:
    """A commit allowed "for this task" on a card, listed beside the task's consent."""
    from host.gatekeeper.facts.consequence import EFFECT_WORDS

    host = origin.split("://", 1)[-1]
    return ui.ConsentItemView(id=f"{_CARD_PREFIX}{effect}@{origin}", effect=effect,
                              text=f"{EFFECT_WORDS.get(effect, effect)} on {host}", site=host,
                              words="allowed for this task on a card")


def card_grant_of(item_id: str) -> tuple[str, str] | None:
    """(effect, origin) of a `card_grant_view` id; None for any other item."""
    if not item_id.startswith(_CARD_PREFIX) or "@" not in item_id:
        return None
    effect, origin = item_id[len(_CARD_PREFIX):].split("@", 1)
    return (effect, origin) if effect and origin else None


def consent_view(item: Any) -> ui.ConsentItemView:
    """One item of a task's consent (`host.gatekeeper.consent.ConsentItem`) as the panel lists it."""
    return ui.ConsentItemView(id=item.id, effect=item.effect, text=item.describe(), site=item.site, words=item.words)
