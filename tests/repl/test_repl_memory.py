"""The model's memory from the REPL: `tw.remember`, `tw.memory`, `tw.forget`, `tw.clear_memory`
typed at the console, against a real host over its control socket. A write the host refuses
shows its structured error and stores nothing."""

from __future__ import annotations

import json
import re

from host.builtins.settings import settings_path


def stored(tw_console) -> dict[str, str]:
    """What the host holds, read without the REPL's rendering."""
    return {e["key"]: e["value"] for e in tw_console.call("memory.list")}


def test_remember_list_forget_and_clear(tw_console):
    out = tw_console("tw.remember('shirt size', 'M')",
                     "tw.remember('address', 'Main Street 1\\nSpringfield')",
                     "tw.remember('shirt size', 'L')",  # replaces
                     "tw.memory()")
    assert "remembered 'shirt size' (1 char, by user): M" in out
    assert "remembered 'address' (25 chars, by user): Main Street 1 Springfield" in out
    assert re.search(r"^key +value +size +by +updated$", out, re.M), out
    assert re.search(r"^address +Main Street 1 Springfield +25 chars +user +\d\d:\d\d:\d\d$", out, re.M), out
    assert re.search(r"^shirt size +L +1 char +user +\d\d:\d\d:\d\d$", out, re.M), out
    assert "2 entries, 26 chars" in out
    assert stored(tw_console) == {"shirt size": "L", "address": "Main Street 1\nSpringfield"}

    out = tw_console("tw.memory('spring')")
    assert "address" in out and "shirt size" not in out and "1 entry, 25 chars" in out

    out = tw_console("tw.forget('shirt size')", "tw.forget('shirt size')")
    assert "forgot 'shirt size'" in out and "there was no memory 'shirt size'" in out
    assert stored(tw_console) == {"address": "Main Street 1\nSpringfield"}

    out = tw_console("tw.clear_memory()", "tw.memory()")
    assert "forgot 1 memory" in out and "(none)" in out and "0 entries, 0 chars" in out
    assert stored(tw_console) == {}


def test_refused_writes_show_the_hosts_error_and_store_nothing(tw_console):
    tw_console("tw.clear_memory()", "tw.remember('kept', 'v1')")
    out = tw_console("tw.remember('kept', 'x' * 3000)")
    assert ("error invalid_message: a memory holds at most 2000 characters; this value has 3000. "
            "Keep only what a later task needs.  {'reason': 'value_too_long'}") in out
    out = tw_console("tw.remember('bad\\x01key', 'v')", "tw.forget('')")
    assert "error invalid_message: a memory key is 1-100 characters without control characters" in out
    assert "{'reason': 'invalid_key'}" in out
    assert "error invalid_message: invalid params: Expected `str` of length >= 1 - at `$.key`" in out
    assert stored(tw_console) == {"kept": "v1"}  # nothing changed, the old value stands


def test_a_full_memory_refuses_new_keys_but_replaces_old_ones(tw_console):
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"memoryMaxEntries": 2}))
    try:
        tw_console("tw.clear_memory()", "tw.remember('a', '1')", "tw.remember('b', '2')")
        out = tw_console("tw.remember('c', '3')", "tw.remember('a', 'one')")
        assert "error invalid_message: memory is full (2 of 2 entries)" in out and "{'reason': 'memory_full'}" in out
        assert "remembered 'a' (3 chars, by user): one" in out
        assert stored(tw_console) == {"a": "one", "b": "2"}
    finally:
        path.unlink()
