"""Fixtures: the fake OpenAI-compatible model server and the engine harness with built-ins."""

from __future__ import annotations

import pytest

from tests.support.builtin_harness import BuiltinHarness
from tests.support.fake_bridge import FakeBridge
from tests.support.fake_model import FakeOpenAI


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def bridge():
    return FakeBridge()


@pytest.fixture
async def harness(tmp_path, server, bridge):
    from host.builtins.netguard import MappedResolver

    h = BuiltinHarness(tmp_path, server.url, bridge=bridge,
                       resolver=MappedResolver({"pages.test": ("127.0.0.2", True)}))
    await h.start()
    try:
        yield h
    finally:
        await h.stop()
