"""Calls made outside a conversation (the REPL's `tw.run`, the control socket's `tools.call`):
the same path as the loop's, but nobody can be asked, so a call that needs an approval is
refused with `approval_required` (flagged `host_permission` when it is the extension's site
access that is missing). Every ending is a ToolResult.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from host.calls.authorize import (FLAG_HOST_PERMISSION, Approved, Authorizer, Changed, Context, Denied, Ending,
                                  NoSiteAccess, Ran, Refused, Stopped, TargetChanged, Unavailable, Judgement)
from host.tools.call import ToolCall
from host.tools.failure import ToolCode, ToolFailure
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


async def call_directly(authorizer: Authorizer, tool: str, params: Any, *, thread_id: str = "default",
                        policy: str | None = None) -> ToolResult:
    """Run one call with nobody to ask; always returns a ToolResult (failures included)."""
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
        ending = await authorizer.process(call, ctx, _Refuse())
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a bug must still produce a structured answer
        log.exception("tool %s failed", tool)
        return failure(str(tool), ToolFailure(ToolCode.UNKNOWN, f"internal error: {type(exc).__name__}: {exc}",
                                              phase="validate"))
    if isinstance(ending, Stopped):
        authorizer.audit(call, ctx, ToolCode.APPROVAL_REQUIRED)
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
        return ToolFailure(ToolCode.APPROVAL_REQUIRED, f"Tabwarden has no access to {call.origin or 'this page'} yet; "
                           "the user must grant it from the side panel", phase="authorize", details=details)
    decision = judgement.decision
    return ToolFailure(ToolCode.APPROVAL_REQUIRED, f"needs the user's approval ({decision.code}): {decision.reason}",
                       phase="authorize", details=details)


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
