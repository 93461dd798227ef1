"""The permission gatekeeper: every tool call is judged here before it runs.

Pure decision: `check(Call, Context) -> Decision` (module `decision`).
Stateful service for the engine: `Gatekeeper` (module `service`).
"""

from host.gatekeeper.decision import CODES, Call, Context, Decision, TraceStep, check
from host.gatekeeper.errors import GatekeeperError, GatekeeperUnavailable, InvalidInput
from host.gatekeeper.rules import Rule, RuleSet

__all__ = [
    "CODES", "Call", "Context", "Decision", "GatekeeperError", "GatekeeperUnavailable", "InvalidInput", "Rule",
    "RuleSet", "TraceStep", "check",
]
