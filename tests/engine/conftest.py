"""Fixtures: a fake model server of each kind (real HTTP + SSE) and an engine harness on it."""

from __future__ import annotations

import pytest

from tests.support.engine_harness import Harness
from tests.support.fake_model import FakeAnthropic, FakeOpenAI


@pytest.fixture(params=["openai", "anthropic"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def server(kind):
    with (FakeOpenAI() if kind == "openai" else FakeAnthropic()) as fake:
        yield fake


@pytest.fixture
async def harness(tmp_path, server, kind):
    h = Harness(tmp_path, server.url, kind=kind)
    await h.start()
    try:
        yield h
    finally:
        await h.stop()
