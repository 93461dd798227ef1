"""The run state machine: the store refuses every move outside the table, whatever the sequence."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import ui

from host.engine import runs
from host.engine.store import EngineStore
from host.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = Store(tmp_path_factory.mktemp("runs") / "db.sqlite3")
    engine_store = EngineStore(db)
    with engine_store.transaction() as conn:
        engine_store.create_thread(conn, thread_id="t")
    yield engine_store
    db.close()


def test_the_table_is_closed_and_terminal_states_are_final():
    assert set(runs.TRANSITIONS) == set(runs.STATES)
    for targets in runs.TRANSITIONS.values():
        assert targets <= set(runs.STATES)
    for state in runs.TERMINAL:
        assert runs.TRANSITIONS[state] == frozenset()
    # waiting_approval moves only on to dispatch, the model, another approval, or an end.
    assert runs.TRANSITIONS[runs.WAITING_APPROVAL] == {runs.EXECUTING, runs.STREAMING, runs.WAITING_APPROVAL,
                                                      runs.INTERRUPTED, runs.FAILED}
    assert runs.COMPLETED not in runs.TRANSITIONS[runs.EXECUTING]  # a tool result always goes back to the model


def test_each_state_name_stands_for_the_state_it_names():
    # The names are unpacked from the protocol's RunState in its order: a reordered declaration
    # must fail here, not swap two states.
    names = ("QUEUED", "PREPARING", "STREAMING", "WAITING_APPROVAL", "WAITING_INTERACTION", "EXECUTING",
             "PAUSED_BUDGET", "PAUSED_UNCERTAIN", "INTERRUPTED", "FAILED", "COMPLETED")
    for name in names:
        assert getattr(runs, name).upper().startswith(name), name
    assert {getattr(runs, name) for name in names} == set(ui.RUN_STATES) == set(runs.STATES)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(runs.STATES), min_size=1, max_size=12))
def test_only_allowed_moves_are_stored(store, moves):
    with store.transaction() as conn:
        run = store.insert_run(conn, "t", state=runs.QUEUED, input={"text": "x"})
    current = runs.QUEUED
    for wanted in moves:
        allowed = runs.can_transition(current, wanted)
        try:
            with store.transaction() as conn:
                store.update_run(conn, run.id, state=wanted)
        except runs.InvalidTransition:
            assert not allowed
        else:
            assert allowed
            current = wanted
        assert store.run(run.id).state == current


def test_a_stale_revision_is_refused(store):
    with store.transaction() as conn:
        run = store.insert_run(conn, "t", state=runs.QUEUED, input={"text": "x"})
        store.update_run(conn, run.id, state=runs.PREPARING)
    with pytest.raises(runs.InvalidTransition):
        with store.transaction() as conn:
            store.update_run(conn, run.id, state=runs.STREAMING, expected_revision=run.revision)
    assert store.run(run.id).state == runs.PREPARING
