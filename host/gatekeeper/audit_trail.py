"""What the gatekeeper writes to the audit log (decisions, approvals, outcomes, alerts), the
denial-burst monitor that raises the alerts, and the words every reader of the log shows for its
codes. Without a store nothing is written. A write that fails makes the gatekeeper unavailable
(fail closed): an unaudited call must not run. What was refused while the log could not be
written is kept (bounded) and written once storage answers again (`write_late`), each row saying
when it happened, so the log shows the fault's refusals.

Each decision is written once: a read is judged again just before it runs, and when that second
judgement is the first one over again it adds no row. A navigation's outcome names where the
call went (the destination it was judged for) and says where the tab was before.

The rows keep their codes (`acceptForSession`, `sensitive_origin`, `refused:target_changed`),
which the hash chain covers; `words` gives each its plain words at display time, in one
vocabulary for the CLI, the REPL and the demo: "allowed once", "allowed for this task",
"declined", and the policies by the names the pages give them.
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
MAX_OPEN_CALLS = 512  # calls judged but not ended yet, remembered to write each decision once
# Tools that move a tab somewhere else: their outcome happens at the destination they were judged for.
_MOVES = frozenset({"navigate", "tab_open", "go_back", "go_forward", "session_restore"})
# Outcomes a navigation guard writes about a request it stopped: they name that request's origin already.
_NOT_MOVED = frozenset({"navigation_blocked"})

# -- words for the codes ---------------------------------------------------------------------------

VERDICT_WORDS = {"allow": "allowed", "ask": "asks you first", "deny": "denied"}
# What each decision code means, as a person reads it after the code.
DECISION_WORDS = {
    "always_allowed": "a built-in that is always allowed",
    "read_allowed": "it only reads",
    "read_ask": "“Ask always” asks before reading too",
    "script_scheme": "the address would run a script",
    "invalid_destination": "not a valid address",
    "ssrf_blocked": "a private network address the host may not fetch",
    "sensitive_origin": "the site is on the blocked list",
    "guarded_origin": "a guarded site: changes there are confirmed",
    "rule_deny": "a permission rule denies it",
    "rule_ask": "a permission rule asks first",
    "rule_allow": "a permission rule allows it",
    "sensitive_payload": "it carries sensitive data",
    "scope_lock": "outside this task's scope lock",
    "session_grant": "you allowed it for this task",
    "policy_default": "the policy's default",
    "unknown_destination": "the page could not say where it leads",
    "definition_changed": "the MCP tool changed since you allowed it",
    "untrusted_value": "a value that came from a page, not from you",
    "commit": "it commits something your request did not ask for",
}
# The user's answers to a question.
ANSWER_WORDS = {
    "accept": "allowed once",
    "acceptForSession": "allowed for this task",
    "acceptForSite": "always allowed on this site",
    "decline": "declined",
    "cancel": "declined, and the task stopped",
    "timeout": "nobody answered in time",
}
# How calls end (an outcome is a code, or `refused:<code>` / `failed:<code>`).
OUTCOME_WORDS = {
    "ok": "done",
    "denied": "not run: denied",
    "declined": "not run: you declined it",
    "cancelled": "not run: cancelled",
    "timed_out": "not run: nobody answered in time",
    "interrupted": "not run: the task was stopped",
    "approval_required": "not run: it needs your approval",
    "uncertain": "may or may not have happened (the host stopped)",
    "storage_unavailable": "not run: storage was unavailable",
    "navigation_blocked": "stopped: the navigation guard blocked a request there",
    "answered": "answered",
    "unanswered": "not answered",
    "escalated": "handed to the user",
}
# Why a call that was allowed did not run after all (`refused:<code>`).
REFUSAL_WORDS = {
    "target_changed": "the tab or element changed after the check",
    "gatekeeper_unavailable": "the permission state could not be read",
    "storage_unavailable": "storage was unavailable",
    "denied": "denied at the final check",
    "authorization_changed": "the rules changed after your answer",
    "no_site_access": "Tabwarden has no access to the site",
    "redirect_held": "a redirect to another site was not followed",
    "tab_closed": "the tab was closed",
    "not_web_page": "the tab does not show a web page",
    "no_target": "no tab to act on",
}
PHASE_WORDS = {"initial": "first check", "dispatch": "checked again just before it ran"}


def decision_words(code: str | None, verdict: str | None = None) -> str:
    """The words for a decision code ("" for an unknown one); the policy's default says which
    way it went when `verdict` is given."""
    if code == "policy_default" and verdict in ("allow", "ask"):
        return "the policy allows it" if verdict == "allow" else "the policy asks first"
    return DECISION_WORDS.get(code or "", "")


def answer_words(kind: str | None) -> str:
    """The words for a user's answer ("" for an unknown one)."""
    return ANSWER_WORDS.get(kind or "", "")


def outcome_words(outcome: str | None) -> str:
    """The words for how a call ended: `ok` is "done", `failed:tab_closed` "failed (tab_closed)"."""
    text = outcome or ""
    if text in OUTCOME_WORDS:
        return OUTCOME_WORDS[text]
    head, _, code = text.partition(":")
    if head == "refused":
        return f"not run: {REFUSAL_WORDS.get(code, code.replace('_', ' '))}"
    if head == "failed":
        return f"ran and failed ({code})" if code else "ran and failed"
    return ""


def rule_words(rule: Any) -> str:
    """The rule a row names, by id and pattern (`rule rule:1f0c…: click @ *`), "" for none; where
    it is changed goes with it: the settings page's Permission rules, or `tw.remove_rule(id)`."""
    if not isinstance(rule, dict) or not rule.get("tool"):
        return ""
    pattern = f"{rule.get('tool')} @ {rule.get('origin') or '(no origin)'}"
    return f"rule {rule['id']}: {pattern}" if rule.get("id") else f"rule {pattern} (from a policy file)"


def with_words(code: str | None, words: str) -> str:
    """`code (words)`, or the code alone when there are no words."""
    return f"{code} ({words})" if words else str(code or "")


def words(row: Any) -> str:
    """What an audit row (an `AuditEntry` or its JSON) says, in words after its codes:
    `denied: sensitive_origin (the site is on the blocked list)`, `your answer: acceptForSession
    (allowed for this task)`, `outcome: refused:target_changed (not run: ...)`."""
    get = row.get if isinstance(row, dict) else (lambda key: getattr(row, key, None))
    kind = get("kind")
    if kind == "decision":
        verdict, code = get("verdict"), get("code")
        text = f"{VERDICT_WORDS.get(verdict, verdict)}: {with_words(code, decision_words(code, verdict))}"
        rule = rule_words(get("rule"))
        text += f", {rule}" if rule else ""
        if get("detail") == "dispatch":
            text += f", {PHASE_WORDS['dispatch']}"
        return text
    if kind == "approval":
        return f"your answer: {with_words(get('approval_decision'), answer_words(get('approval_decision')))}"
    if kind == "outcome":
        text = f"outcome: {with_words(get('tool_outcome'), outcome_words(get('tool_outcome')))}"
        return f"{text}; {get('detail')}" if get("detail") else text
    return str(get("detail") or kind or "")


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
        # (thread, call id, tool) -> the last decision on that call: what a second judgement is
        # compared with, and where the call went; oldest dropped first.
        self._open: OrderedDict[tuple[str, str, str], tuple[Any, ...]] = OrderedDict()

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
        """Audit a decision (once: see `_repeats`), and count a denial towards the thread's
        burst alert."""
        key = (thread_id, call_id or "", decision.tool)
        judged = (decision.verdict, decision.code, decision.target_origin, tuple(decision.flags),
                  getattr(decision.rule, "id", None), _digest(params))
        repeated = phase == "dispatch" and self._repeats(key, judged)
        self._remember(key, judged)
        if repeated:
            return
        self._append(kind="decision", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=decision.tool,
                     target_origin=decision.target_origin, params=params, target=target, verdict=decision.verdict,
                     code=decision.code, rule=decision.rule, flags=list(decision.flags), detail=phase)
        if decision.verdict == "deny":
            self.monitor.note_denial(thread_id, decision.code)

    def _repeats(self, key: tuple[str, str, str], judged: tuple[Any, ...]) -> bool:
        """Whether a read's judgement just before it runs is its first one over again: the same
        call, verdict, code, origin, flags and rule (a write's second judgement, taken once its
        tab is held and its guard in place, is kept as evidence of that check)."""
        from host.tools.catalog import lookup

        spec = lookup(key[2])
        return spec is not None and spec.effects == "read" and self._open.get(key) == judged

    def _remember(self, key: tuple[str, str, str], judged: tuple[Any, ...]) -> None:
        self._open[key] = judged
        self._open.move_to_end(key)
        while len(self._open) > MAX_OPEN_CALLS:
            self._open.popitem(last=False)

    def approval(self, *, thread_id: str, turn_id: str | None, call_id: str | None, tool: str, target_origin: str,
                 approval_id: str, kind: str) -> None:
        """Audit the user's answer to a question."""
        self._append(kind="approval", thread_id=thread_id, turn_id=turn_id, call_id=call_id, tool=tool,
                     target_origin=target_origin, approval_id=approval_id, approval_decision=kind)

    def outcome(self, *, thread_id: str, tool: str, outcome: str, target_origin: str, turn_id: str | None,
                call_id: str | None, detail: str | None) -> None:
        """Audit how a tool call ended. A navigation's row names the destination it was judged
        for, and where the tab was before (the call's own origin is the tab's old one)."""
        judged = self._open.pop((thread_id, call_id or "", tool), None)
        went = judged[2] if judged is not None else ""
        if tool in _MOVES and outcome not in _NOT_MOVED and went and went != target_origin:
            before = f"the tab was at {target_origin}" if target_origin else "the tab showed no site"
            detail = f"{before}; {detail}" if detail else before
            target_origin = went
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


def _digest(params: Any) -> str:
    """A short fingerprint of a call's parameters (two judgements of one call compare them)."""
    import hashlib
    import json

    text = json.dumps(params, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]

