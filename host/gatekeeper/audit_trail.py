"""What the gatekeeper writes to the audit log (decisions, approvals, outcomes, alerts) and the
denial-burst monitor that raises the alerts. Without a store nothing is written. A write that
fails makes the gatekeeper unavailable (fail closed): an unaudited call must not run. What was
refused while the log could not be written is kept (bounded) and written once storage answers
again (`write_late`), each row saying when it happened, so the log shows the fault's refusals.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from host.gatekeeper.alerts import Alert, DenialBurstMonitor
from host.gatekeeper.availability import Availability
from host.gatekeeper.decision import Decision
from host.gatekeeper.healing import plain_cause
from host.gatekeeper.storage.audit import AuditKeyError, AuditLog
from host.store.db import Store, StoreError

MAX_LATE_ROWS = 1000


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
        # (thread, call) -> the refusal to write once storage answers again; oldest dropped first.
        self._late: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()

    def open(self, store: Store) -> None:
        """Write to `store`'s audit log from now on (its tables must exist); the log written
        to before is closed (its anchor brought up to date)."""
        if self.log is not None:
            self.log.close()
        self.log = AuditLog(store, clock=self._clock)

    def _append(self, **row: Any) -> None:
        if self.log is None:
            return
        try:
            self.log.append(**row)
        except StoreError as exc:
            self._keep_refusal(row, exc)
            raise self._availability.fail(exc) from exc
        except AuditKeyError as exc:
            # Not a storage fault that passes: closed until the key is restored and the host restarts.
            raise self._availability.fail(exc) from exc

    def refused(self, *, thread_id: str, turn_id: str | None, call_id: str | None, tool: str, target_origin: str,
                cause: Exception) -> None:
        """Note a call refused because storage is down (written once it answers again)."""
        if self.log is not None:
            self._keep_refusal({"thread_id": thread_id, "turn_id": turn_id, "call_id": call_id, "tool": tool,
                                "target_origin": target_origin}, cause)

    def _keep_refusal(self, row: dict[str, Any], exc: Exception) -> None:
        """Remember that this call was refused (it never ran), to write once storage is back."""
        key = (str(row.get("thread_id")), str(row.get("call_id") or f"#{len(self._late)}:{row.get('tool')}"))
        if key in self._late:
            return
        when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self._clock()))
        self._late[key] = {
            "kind": "outcome", "thread_id": row.get("thread_id") or "", "turn_id": row.get("turn_id"),
            "call_id": row.get("call_id"), "tool": row.get("tool") or "", "target_origin": row.get("target_origin") or "",
            "tool_outcome": "storage_unavailable",
            "detail": f"refused at {when}Z, storage unavailable: {plain_cause(str(exc))}"[:1000]
                      + "; written when storage answered again"}
        while len(self._late) > MAX_LATE_ROWS:
            self._late.popitem(last=False)

    def write_late(self) -> int:
        """Write the refusals kept during a storage fault; returns how many (raises StoreError
        when storage fails again: they stay kept)."""
        written = 0
        while self._late and self.log is not None:
            key, row = next(iter(self._late.items()))
            self.log.append(**row)
            del self._late[key]
            written += 1
        return written

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
            except (StoreError, AuditKeyError) as exc:
                self._availability.fail(exc)  # the alert still goes out; later checks fail closed
        if self._on_alert is not None:
            self._on_alert(alert)
