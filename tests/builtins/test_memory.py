"""The profile's memory: create, replace, list, search, forget, clear; limits refuse a change
without changing anything; settings files are validated with the path of each bad field."""

from __future__ import annotations

import json

import pytest

from host.builtins.memory import MemoryRefused, MemoryStore
from host.builtins.settings import defaults, load_settings, parse_settings
from host.config_files import ConfigFileError
from host.store import Store


@pytest.fixture
def memory(tmp_path):
    db = Store(tmp_path / "db.sqlite3")
    clock = iter(range(1, 1000))
    yield MemoryStore(db, clock=lambda: float(next(clock)))
    db.close()


def put(memory, key, value, *, entries=3, chars=20, source="model"):
    return memory.put(key, value, source=source, max_entries=entries, max_value_chars=chars)


def test_round_trip_and_listing(memory):
    first = put(memory, "airline", "KLM")
    assert (first.key, first.value, first.source) == ("airline", "KLM", "model")
    again = put(memory, " airline ", "Lufthansa", source="user")
    assert again.created_at == first.created_at and again.updated_at > first.updated_at
    put(memory, "seat", "aisle")
    assert [(e.key, e.value, e.source) for e in memory.entries()] == [("airline", "Lufthansa", "user"),
                                                                        ("seat", "aisle", "model")]
    assert [e.key for e in memory.entries("AISLE")] == ["seat"]
    assert memory.get("seat").value == "aisle" and memory.get("meal") is None
    assert memory.delete("seat") is True and memory.delete("seat") is False
    assert memory.clear() == 1 and memory.entries() == []


@pytest.mark.parametrize("key,value,code", [
    ("k4", "v", "memory_full"),
    ("airline", "x" * 21, "value_too_long"),
    ("", "v", "invalid_key"),
    ("line\nbreak", "v", "invalid_key"),
    ("k" * 101, "v", "invalid_key"),
])
def test_limits_refuse_and_change_nothing(memory, key, value, code):
    for n in range(1, 4):
        put(memory, f"k{n}", "v")
    put(memory, "k3", "replaced")  # replacing at the limit is fine
    before = [e.wire() for e in memory.entries()]
    with pytest.raises(MemoryRefused) as refused:
        put(memory, key, value)
    assert refused.value.code == code
    assert [e.wire() for e in memory.entries()] == before


def test_settings_file(tmp_path):
    assert defaults().memory_max_entries == 200
    with pytest.raises(ConfigFileError) as bad:
        parse_settings({"memoryMaxEntries": 0, "surprise": 1})
    assert [p for p, _ in bad.value.problems] == ["$.memoryMaxEntries", "$.surprise"]
    path = tmp_path / "builtins.json"
    path.write_text(json.dumps({"fetchWindowChars": 5000}))
    assert load_settings(path).fetch_window_chars == 5000
    path.write_text("{not json")
    assert load_settings(path) == defaults()  # an unusable file: the defaults, logged
    assert load_settings(tmp_path / "missing.json") == defaults()
