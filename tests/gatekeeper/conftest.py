from __future__ import annotations

from pathlib import Path

import pytest

from host.gatekeeper.decision import Call, Context, check
from host.gatekeeper.rules import Rule, RuleSet
from host.gatekeeper.service import Gatekeeper
from host.store import Store


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Never touch the user's real config, data or managed policy."""
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))


@pytest.fixture
def store(tmp_path) -> Store:
    s = Store(tmp_path / "db.sqlite3")
    yield s
    s.close()


@pytest.fixture
def make_gatekeeper(tmp_path):
    made = []

    def make(store: Store | None = None, *, user: str | None = None, managed: str | None = None, **kw) -> Gatekeeper:
        user_path, managed_path = tmp_path / "user-policy.json", tmp_path / "managed-policy.json"
        if user is not None:
            user_path.write_text(user)
        if managed is not None:
            managed_path.write_text(managed)
        gk = Gatekeeper(store, user_policy=user_path, managed_policy=managed_path, **kw)
        made.append(gk)
        return gk

    return make


def decide(tool: str, params: dict | None = None, *, origin: str = "https://shop.example.com", rules=(),
           effects: str | None = None, level: str | None = None, **ctx):
    """Shortcut for the pure check with rules given as dicts or Rule objects."""
    compiled = RuleSet(r if isinstance(r, Rule) else Rule(**r) for r in rules)
    return check(Call(tool, params or {}, effects, level), Context(origin=origin, rules=compiled, **ctx))


def write_file(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
