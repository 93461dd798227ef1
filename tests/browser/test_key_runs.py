"""The host's record of keys pressed one call at a time: what they typed so far, per tab and
field, ended by any other write, taken back by Backspace."""

from __future__ import annotations

from host.browser.key_runs import MAX_RUN, KeyRuns


def test_keys_pressed_one_by_one_add_up_per_tab_and_field():
    runs = KeyRuns()
    for key in "DE89":
        runs.pressed(7, "s1_1_4", key)
    runs.pressed(8, None, "x")
    assert runs.typed(7, "s1_1_4") == "DE89" and runs.typed(7, None) == "" and runs.typed(8, None) == "x"
    runs.pressed(7, "s1_1_4", "Shift")  # a modifier is part of typing
    runs.pressed(7, "s1_1_4", "3", times=2)
    runs.pressed(7, "s1_1_4", "Backspace")
    assert runs.typed(7, "s1_1_4") == "DE893"
    runs.pressed(7, "s1_1_5", "A")  # another field starts its own run
    assert runs.typed(7, "s1_1_4") == "" and runs.typed(7, "s1_1_5") == "A"


def test_enter_tab_or_any_other_write_ends_the_run():
    runs = KeyRuns()
    runs.pressed(7, None, "1")
    runs.pressed(7, None, "Tab")
    assert runs.typed(7, None) == ""
    runs.pressed(7, None, "2")
    runs.other_write(7)
    assert runs.typed(7, None) == ""
    runs.pressed(7, None, "9")
    runs.forget(7)
    assert runs.typed(7, None) == ""


def test_a_run_is_bounded():
    runs = KeyRuns()
    for _ in range(MAX_RUN + 50):
        runs.pressed(1, None, "7")
    assert len(runs.typed(1, None)) == MAX_RUN
