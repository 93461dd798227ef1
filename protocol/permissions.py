"""How the contract names permission choices: the policies a thread runs under, the verdicts of
rules and decisions, the user's two origin lists, and the flags an approval request carries.

Apart from the UI catalogue and free of heavy imports (like `protocol.tools`), so the gatekeeper
reads the same declarations without loading the catalogue.
"""

from __future__ import annotations

from typing import Literal, get_args

# In the order the pages offer them (the composer's menu, the settings page's choices).
PolicyName = Literal["always", "untrusted", "auto"]
PERMISSION_POLICIES: tuple[str, ...] = get_args(PolicyName)
# The policy of a thread, turn or installation that sets none.
DEFAULT_POLICY: PolicyName = "untrusted"
# What a person reads for each policy, in every place that names one (pages, cards, decision
# reasons, REPL and CLI output); the codes above stay what files and ops carry.
POLICY_LABELS: dict[str, str] = {"always": "Ask always", "untrusted": "Ask before changes", "auto": "Automatic"}


def describe_policy(value: str | None) -> str:
    """A policy as terminal output names it: its name for people, then the code files and
    commands take (`Ask before changes (untrusted)`); anything else as given."""
    if value in POLICY_LABELS:
        return f"{POLICY_LABELS[value]} ({value})"
    return str(value)


Verdict = Literal["allow", "ask", "deny"]
VERDICTS: tuple[str, ...] = get_args(Verdict)

# Where the agent has no access (no reads, no changes), and where changes ask.
OriginList = Literal["blocked", "guarded"]
ORIGIN_LISTS: tuple[str, ...] = get_args(OriginList)

ApprovalFlag = Literal["sensitive_payload", "escalation_l2", "host_permission", "guarded_origin", "credential_target",
                       "untrusted_value", "commit"]
APPROVAL_FLAGS: tuple[str, ...] = get_args(ApprovalFlag)
(FLAG_SENSITIVE_PAYLOAD, FLAG_ESCALATION_L2, FLAG_HOST_PERMISSION, FLAG_GUARDED_ORIGIN, FLAG_CREDENTIAL_TARGET,
 FLAG_UNTRUSTED_VALUE, FLAG_COMMIT) = APPROVAL_FLAGS
# How the approval card lists the flags a request carries: access to the site first, then what
# the call sends (values the user did not give first), then where and how it acts.
APPROVAL_FLAG_DISPLAY_ORDER: tuple[str, ...] = (
    FLAG_HOST_PERMISSION, FLAG_COMMIT, FLAG_UNTRUSTED_VALUE, FLAG_SENSITIVE_PAYLOAD, FLAG_CREDENTIAL_TARGET, FLAG_GUARDED_ORIGIN, FLAG_ESCALATION_L2)
