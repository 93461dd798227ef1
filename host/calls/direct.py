"""Calls made outside a conversation (the REPL's `tw.run`, the control socket's `tools.call`):
the same path as the loop's. A caller that can answer later (the REPL) passes `held`: a call
that needs an approval then waits there for `tw.approve()` / `tw.decline()`
(host/calls/held.py). Otherwise, and always when it is the extension's site access that is
missing (no answer typed at a REPL can grant that), the call is refused with
`approval_required` (flagged `host_permission` for site access). Every ending is a ToolResult.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from host.calls.held import TIMEOUT, Held, HeldApprovals
from host.calls.authorize import commit_of
from host.calls.authorize import (FLAG_HOST_PERMISSION, Approved, Authorizer, Changed, Context, Denied, Ending,
                                  NoSiteAccess, Ran, Refused, Stopped, TargetChanged, Unavailable, Judgement)
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
from host.tools.quoting import quoted
from host.tools.result import ToolResult, failure

log = logging.getLogger("tabwarden.calls")


class _Refuse:
    """`Steps` for a caller who cannot ask anybody."""

    async def approve(self, call: ToolCall, judgement: Judgement) -> Approved | Stopped:
        return Stopped(ToolCode.APPROVAL_REQUIRED, _needs_approval(call, judgement, "initial"))

    def allowed(self, call: ToolCall) -> None:
        return None

    def dispatching(self, call: ToolCall, judgement: Judgement, approved: Approved | None) -> None:
        decision = judgement.decision
        call.details["decision"] = {"verdict": decision.verdict, "code": decision.code, "flags": list(decision.flags)}


class _AskLater(_Refuse):
    """`Steps` for a caller who answers later: the approval waits in `held` until answered."""

    def __init__(self, held: HeldApprovals, gatekeeper: Any, ctx: Context, asked: Callable[[Held], None]):
        self.held, self.gatekeeper, self.ctx, self.asked = held, gatekeeper, ctx, asked

    async def approve(self, call: ToolCall, judgement: Judgement) -> Approved | Stopped:
        if judgement.needs_site_access:
            return await super().approve(call, judgement)
        decision = judgement.decision
        origin = decision.target_origin or call.origin
        waiting = self.held.open(self.ctx.thread_id, {
            "tool": call.tool, "label": call.spec.label, "params": call.wire_params(), "targetOrigin": origin,
            "reason": judgement.reason, "code": decision.code, "flags": sorted(set(judgement.flags)),
            "effect": commit_of(decision)[0], "effectWords": commit_of(decision)[1],
            "targetLine": call.target.line if call.target else None, "tabId": call.tab_id})
        self.asked(waiting)
        kind, note = await self.held.wait(waiting)
        if kind == TIMEOUT:
            return Stopped(ToolCode.TIMED_OUT, ToolFailure(
                ToolCode.TIMED_OUT, f"nobody answered approval {waiting.approval_id} in time; {call.tool} did not run",
                phase="authorize", details={"dispatched": False, "approvalId": waiting.approval_id}))
        try:
            applied = self.gatekeeper.apply_decision(
                thread_id=self.ctx.thread_id, approval_id=waiting.approval_id, tool=call.tool, target_origin=origin,
                kind=kind, policy=self.ctx.policy, effect=getattr(decision, "effect", ""))
        except Exception as exc:  # GatekeeperUnavailable, InvalidInput: an accept fails closed
            if kind != "decline":
                return Stopped(ToolCode.GATEKEEPER_UNAVAILABLE, ToolFailure(
                    ToolCode.GATEKEEPER_UNAVAILABLE, f"the answer could not be applied, so nothing runs: {exc}",
                    phase="authorize", details={"dispatched": False, "approvalId": waiting.approval_id}))
        if kind == "decline":
            said = f" (you said: {note})" if note else ""
            return Stopped(ToolCode.DECLINED, ToolFailure(
                ToolCode.DECLINED, f"you declined approval {waiting.approval_id}{said}; {call.tool} did not run",
                phase="authorize", details={"dispatched": False, "approvalId": waiting.approval_id}))
        return Approved(waiting.approval_id, applied.revision)


async def call_directly(authorizer: Authorizer, tool: str, params: Any, *, thread_id: str = "default",
                        policy: str | None = None, held: HeldApprovals | None = None,
                        asked: Callable[[Held], None] | None = None) -> ToolResult:
    """Run one call; always returns a ToolResult (failures included). With `held`, a call that
    needs an approval waits there for the answer (`asked` is told once it waits); without,
    it is refused with `approval_required`."""
    ctx = Context(thread_id[:512] or "default", policy=policy)
    try:
        call = authorizer.router.decode(thread_id, tool, params)
    except ToolFailure as problem:
        return failure(str(tool), problem)
    if call.spec.interaction:
        return failure(call.tool, ToolFailure(ToolCode.UNSUPPORTED, f"{call.tool} waits on the user and runs only in "
                                              "a conversation (tw.chat)", phase="validate",
                                              details={"dispatched": False}))
    try:
        steps = _Refuse() if held is None else _AskLater(held, authorizer.gatekeeper, ctx, asked or (lambda _: None))
        ending = await authorizer.process(call, ctx, steps)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug must still produce a structured answer
        log.exception("tool %s failed", tool)
        return failure(str(tool), ToolFailure(ToolCode.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}",
                                              phase="validate"))
    if isinstance(ending, Stopped):
        authorizer.audit(call, ctx, str(ending.outcome))
    return _result(call, ending)


def _result(call: ToolCall, ending: Ending) -> ToolResult:
    if isinstance(ending, Ran):
        return ending.result
    resolved = getattr(ending, "call", None) or call
    return failure(call.tool, _failure(resolved, ending), tab_id=resolved.tab_id)


def _failure(call: ToolCall, ending: Ending) -> ToolFailure:
    if isinstance(ending, Refused):
        return ending.failure
    if isinstance(ending, Stopped):
        return ending.detail
    if isinstance(ending, Unavailable) and ending.storage:
        from host.gatekeeper.healing import plain_cause

        return ToolFailure(ToolCode.STORAGE_UNAVAILABLE, f"denied: storage is unavailable, so nothing ran "
                           f"({plain_cause(ending.reason)[:300]}); the host opens again by itself once its database "
                           "answers", phase="authorize", details={"dispatched": False}, retryable=True)
    if isinstance(ending, Unavailable):
        return ToolFailure(ToolCode.GATEKEEPER_UNAVAILABLE, f"permission state is unavailable, so nothing runs: "
                           f"{ending.reason}", phase="authorize", details={"dispatched": False})
    if isinstance(ending, Denied):
        decision = ending.judgement.decision
        return ToolFailure(ToolCode.DENIED, f"denied ({decision.code}): {decision.reason}", phase="authorize",
                           details=_decision_details(ending.judgement, ending.phase))
    if isinstance(ending, (Changed, NoSiteAccess)):
        judgement = ending.judgement if isinstance(ending, Changed) else None
        return _needs_approval(call, judgement, "dispatch")
    assert isinstance(ending, TargetChanged)
    return ending.failure()


def _needs_approval(call: ToolCall, judgement: Judgement | None, phase: str) -> ToolFailure:
    details = _decision_details(judgement, phase) if judgement is not None else {"dispatched": False}
    if judgement is None or judgement.needs_site_access:
        flags = details.get("flags", [])
        details["flags"] = flags if FLAG_HOST_PERMISSION in flags else [*flags, FLAG_HOST_PERMISSION]
        return ToolFailure(ToolCode.APPROVAL_REQUIRED, no_site_access_here(call.origin), phase="authorize",
                           details=details)
    decision = judgement.decision
    origin = decision.target_origin or call.origin
    return ToolFailure(ToolCode.APPROVAL_REQUIRED, f"needs the user's approval ({decision.code}): {decision.reason}. "
                       f"At the REPL, tw.run asks for it (answer with tw.approve()); or allow it ahead with "
                       f"tw.allow({call.tool!r}, {origin or '*'!r}) or tw.policy = 'auto'",
                       phase="authorize", details=details)


def no_site_access_here(origin: str) -> str:
    """Why a direct call cannot run in a page yet, and the ways to grant the access: a click in
    the side panel (Chrome grants it only from a person's gesture), or, where nobody can click
    (headless), the REPL's `tw.grant_site` or the launch."""
    site = origin if origin.startswith(("http://", "https://")) else "https://example.com"
    return (f"Tabwarden has no access to {quoted(origin) if origin else 'this page'} yet: grant it from the side "
            f"panel, or, where nobody can click (a headless browser), with tw.grant_site({site!r}) at the REPL, "
            f"or start the browser with it: make launch LAUNCH_ARGS=\"--site-access {site}\"")


def _decision_details(judgement: Judgement, phase: str) -> dict[str, Any]:
    decision = judgement.decision
    details: dict[str, Any] = {
        "verdict": decision.verdict, "reasonCode": decision.code, "reason": decision.reason,
        "flags": list(decision.flags), "targetOrigin": decision.target_origin, "authorizePhase": phase,
        "dispatched": False,
    }
    if decision.rule is not None:
        details["rule"] = decision.rule.describe()
    if decision.findings:
        details["findings"] = list(decision.findings)
    return details
