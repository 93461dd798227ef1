"""Run states and the strict table of moves between them.

A run is one turn's life. Every state change goes through `check_transition`, and the store
refuses a move that is not in `TRANSITIONS`, so an impossible sequence (an approval resuming a
finished run, a replay of a write after a crash) is an error, never a silent state.

    queued ─▶ preparing ─▶ streaming_model ─┬─▶ executing_tool ──┐
                                            ├─▶ waiting_approval ┤ (next call of the batch)
                                            ├─▶ waiting_interaction
                                            ├─▶ paused_budget
                                            └─▶ completed
    executing_tool / waiting_approval ─▶ streaming_model (the batch is done)
    executing_tool ─▶ paused_uncertain (found there after a crash, with a write in flight)
    every live state ─▶ interrupted | failed
"""

from __future__ import annotations

from protocol.errors import TabwardenError
from protocol.ui.turns import RUN_STATES

# The states by name, in the order of their one declaration (`protocol.ui.turns.RunState`).
(QUEUED, PREPARING, STREAMING, WAITING_APPROVAL, WAITING_INTERACTION, EXECUTING, PAUSED_BUDGET, PAUSED_UNCERTAIN,
 INTERRUPTED, FAILED, COMPLETED) = RUN_STATES

TERMINAL = frozenset({INTERRUPTED, FAILED, COMPLETED})
PAUSED = frozenset({PAUSED_BUDGET, PAUSED_UNCERTAIN})
# States in which a run owns its thread (new turns queue behind it).
ACTIVE = frozenset({PREPARING, STREAMING, WAITING_APPROVAL, WAITING_INTERACTION, EXECUTING, PAUSED_BUDGET,
                    PAUSED_UNCERTAIN})

TRANSITIONS: dict[str, frozenset[str]] = {
    QUEUED: frozenset({PREPARING, INTERRUPTED}),
    PREPARING: frozenset({STREAMING, INTERRUPTED, FAILED}),
    # STREAMING → STREAMING: a model call restarted after a host restart (nothing had acted yet).
    STREAMING: frozenset({STREAMING, EXECUTING, WAITING_APPROVAL, WAITING_INTERACTION, PAUSED_BUDGET, COMPLETED,
                          INTERRUPTED, FAILED}),
    WAITING_APPROVAL: frozenset({EXECUTING, WAITING_APPROVAL, STREAMING, INTERRUPTED, FAILED}),
    WAITING_INTERACTION: frozenset({STREAMING, INTERRUPTED, FAILED}),
    EXECUTING: frozenset({EXECUTING, WAITING_APPROVAL, WAITING_INTERACTION, STREAMING, PAUSED_UNCERTAIN,
                          INTERRUPTED, FAILED}),
    PAUSED_BUDGET: frozenset({STREAMING, INTERRUPTED, FAILED}),
    # retry → EXECUTING; mark_done → STREAMING; fail → FAILED.
    PAUSED_UNCERTAIN: frozenset({EXECUTING, STREAMING, INTERRUPTED, FAILED}),
    INTERRUPTED: frozenset(),
    FAILED: frozenset(),
    COMPLETED: frozenset(),
}
STATES: tuple[str, ...] = tuple(TRANSITIONS)


class InvalidTransition(TabwardenError, RuntimeError):
    """A state change the table does not allow (a programming error or a stale actor)."""

    code = "invalid_state"

    def __init__(self, run_id: str, current: str, wanted: str):
        self.run_id = run_id
        self.current = current
        self.wanted = wanted
        super().__init__(f"run {run_id}: {current} → {wanted} is not an allowed transition")


def can_transition(current: str, wanted: str) -> bool:
    """True when `current → wanted` is in the table."""
    return wanted in TRANSITIONS.get(current, frozenset())


def check_transition(run_id: str, current: str, wanted: str) -> None:
    """Raise InvalidTransition unless `current → wanted` is allowed."""
    if not can_transition(current, wanted):
        raise InvalidTransition(run_id, current, wanted)
