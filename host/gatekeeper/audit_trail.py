"""What the gatekeeper writes to the audit log (decisions, approvals, outcomes, alerts) and the
denial-burst monitor that raises the alerts. Without a store nothing is written. A write that
fails makes the gatekeeper unavailable (fail closed): an unaudited call must not run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from host.gatekeeper.alerts import Alert, DenialBurstMonitor
from host.gatekeeper.availability import Availability
from host.gatekeeper.decision import Decision
from host.gatekeeper.storage.audit import AuditLog
from host.store.db import Store, StoreError


class AuditTrail:
    """The audit log (None until `open`, and without a store) and the denial-burst monitor."""

    def __init__(self, availability: Availability, *, clock: Callable[[], float],
                 on_alert: Callable[[Alert], None] | None, burst_threshold: int, burst_window_s: float) -> None:
        self._availability = availability
        self._clock = clock
        self._on_alert = on_alert
        self.log: AuditLog | None = None
        self.monitor = DenialBurstMonitor(threshold=burst_threshold, window_s=burst_window_s, clock=clock,
                                          on_alert=self._alert)

    def open(self, store: Store) -> None:
        """Write to `store`'s audit log from now on (its tables must exist)."""
        self.log = AuditLog(store, clock=self._clock)

    def _append(self, **row: Any) -> None:
        if self.log is None:
            return
        try:
            self.log.append(**row)
        except StoreError as exc:
            raise self._availability.fail(exc) from exc

    def decision(self, decision: Decision, *, thread_id: str, turn_id: str | None, call_id: str | None,
                 params: dict[str, Any], target: dict[str, Any] | None, phase: str) -> None:
        """Audit a decision, and count a denial towards the thread's burst alert."""
        self._append(kind="decision", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=decision.tool,
                     target_origin=decision.target_origin, params=params, target=target, verdict=decision.verdict,
                     code=decision.code, rule=decision.rule, flags=list(decision.flags), detail=phase)
        if decision.verdict == "deny":
            self.monitor.note_denial(thread_id, decision.code)

    def approval(self, *, thread_id: str, turn_id: str | None, call_id: str | None, tool: str, target_origin: str,
                 approval_id: str, kind: str) -> None:
        """Audit the user's answer to a question."""
        self._append(kind="approval", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=tool,
                     target_origin=target_origin, approval_id=approval_id, approval_decision=kind)

    def outcome(self, *, thread_id: str, tool: str, outcome: str, target_origin: str, turn_id: str | None,
                call_id: str | None, detail: str | None) -> None:
        """Audit how a tool call ended."""
        self._append(kind="outcome", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=tool,
                     target_origin=target_origin, tool_outcome=outcome, detail=detail)

    def _alert(self, alert: Alert) -> None:
        if self.log is not None:
            try:
                self.log.append(kind="alert", thread_id=alert.thread_id, tool="", detail=alert.message)
            except StoreError as exc:
                self._availability.fail(exc)  # the alert still goes out; later checks fail closed
        if self._on_alert is not None:
            self._on_alert(alert)
