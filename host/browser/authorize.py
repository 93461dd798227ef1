"""The one place a browser tool call is authorised: the gatekeeper's verdict, plus the
extension's site access for calls that must run inside a page.

ALLOW returns the decision. DENY raises `denied`. ASK raises `approval_required` (approvals are
answered by the engine, which does not exist yet); so does a call on an origin the extension may
not access, with the `host_permission` flag, so the side panel can ask the user for that
origin. A gatekeeper that cannot be trusted raises `gatekeeper_unavailable`: nothing runs.
"""

from __future__ import annotations

from typing import Any, Literal

from host.browser.errors import Code, ToolFailure
from host.gatekeeper.decision import Decision
from host.gatekeeper.errors import GatekeeperUnavailable
from host.gatekeeper.service import CheckRequest, Gatekeeper

FLAG_HOST_PERMISSION = "host_permission"


def _decision_details(decision: Decision, phase: str) -> dict[str, Any]:
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


def authorize(
    gatekeeper: Gatekeeper,
    *,
    thread_id: str,
    tool: str,
    params: dict[str, Any],
    origin: str,
    policy: str | None,
    target: dict[str, Any] | None,
    site_access: bool | None,
    phase: Literal["initial", "dispatch"],
) -> Decision:
    """Authorise one call; returns the ALLOW decision or raises ToolFailure.

    `site_access` is whether the extension may script `origin` right now (None when the call
    does not run inside a page).
    """
    try:
        decision = gatekeeper.check(CheckRequest(
            thread_id=thread_id, tool=tool, params=params, origin=origin, policy=policy, target=target, phase=phase,
        ))
    except GatekeeperUnavailable as exc:
        raise ToolFailure(Code.GATEKEEPER_UNAVAILABLE, f"permission state is unavailable, so nothing runs: {exc}",
                          phase="authorize", details={"dispatched": False}) from None
    details = _decision_details(decision, phase)
    if decision.verdict == "deny":
        raise ToolFailure(Code.DENIED, f"denied ({decision.code}): {decision.reason}", phase="authorize", details=details)
    if site_access is False:
        details["flags"] = [*details["flags"], FLAG_HOST_PERMISSION]
        raise ToolFailure(
            Code.APPROVAL_REQUIRED,
            f"Tabwarden has no access to {origin or 'this page'} yet; the user must grant it from the side panel",
            phase="authorize", details=details,
        )
    if decision.verdict == "ask":
        raise ToolFailure(Code.APPROVAL_REQUIRED, f"needs the user's approval ({decision.code}): {decision.reason}",
                          phase="authorize", details=details)
    return decision
