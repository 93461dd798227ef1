"""The `settings` fixture: a settings engine (tests/support/settings_harness.py) over a throw-away
Tabwarden home."""

from __future__ import annotations

import pytest

from tests.support.settings_harness import Settings


@pytest.fixture
async def settings(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("TABWARDEN_HOME", str(home))
    s = await Settings(home).start()
    try:
        yield s
    finally:
        await s.stop()
