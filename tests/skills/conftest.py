"""Fixtures: the engine harness with the built-ins, the skills service and the plugins, as the
host wires them, over a fake OpenAI-compatible model server."""

from __future__ import annotations

import pytest

from host.calls.router import Router
from host.plugins.installer import attach_plugins
from host.skills.service import SkillTools
from tests.support.builtin_harness import BuiltinHarness
from tests.support.fake_model import FakeOpenAI


class SkillHarness(BuiltinHarness):
    """The built-in harness plus `load_skill` and the plugins."""

    def router(self) -> Router:
        made = super().router()
        self.skills = SkillTools()
        made.add("skills", self.skills)
        return made

    def connect(self, engine) -> None:
        super().connect(engine)
        self.skills.attach(engine)
        self.plugins = attach_plugins(self.skills, engine)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
async def harness(tmp_path, server):
    h = SkillHarness(tmp_path, server.url)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()
