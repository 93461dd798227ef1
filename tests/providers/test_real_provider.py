"""Against a real model endpoint, when one is configured; skipped (with the reason) otherwise.

    TABWARDEN_REAL_PROVIDER_KIND      openai | anthropic
    TABWARDEN_REAL_PROVIDER_BASE_URL  e.g. https://api.openai.com/v1, https://api.anthropic.com
    TABWARDEN_REAL_PROVIDER_MODEL     e.g. gpt-4.1-mini, claude-haiku-4-5
    TABWARDEN_REAL_PROVIDER_API_KEY   the key (or OPENAI_API_KEY / ANTHROPIC_API_KEY)
"""

from __future__ import annotations

import os

import pytest

from host.providers.model import Completion, Message, ModelRequest, Text, TextDelta

KIND = os.environ.get("TABWARDEN_REAL_PROVIDER_KIND", "")
BASE_URL = os.environ.get("TABWARDEN_REAL_PROVIDER_BASE_URL", "")
MODEL = os.environ.get("TABWARDEN_REAL_PROVIDER_MODEL", "")
KEY = os.environ.get("TABWARDEN_REAL_PROVIDER_API_KEY") or os.environ.get(
    "ANTHROPIC_API_KEY" if KIND == "anthropic" else "OPENAI_API_KEY", "")

pytestmark = pytest.mark.skipif(
    KIND not in ("openai", "anthropic") or not BASE_URL or not MODEL,
    reason="no real provider configured: set TABWARDEN_REAL_PROVIDER_KIND, _BASE_URL, _MODEL and _API_KEY "
           "to run these tests against a live endpoint",
)


def settings():
    from host.providers.config import parse_config

    entry = {"kind": KIND, "baseUrl": BASE_URL, "model": MODEL, "maxTokens": 1024}
    if KEY:
        entry["apiKeyEnv"] = "TABWARDEN_REAL_PROVIDER_KEY_FOR_TEST"
    return parse_config({"providers": {"real": entry}})


def provider():
    from host.providers.factory import make_provider

    return make_provider("real", settings().providers["real"], KEY or None)


async def test_a_real_endpoint_streams_an_answer():
    client = provider()
    try:
        request = ModelRequest(model="", system="Answer in one word.",
                               messages=(Message("user", (Text("Say the word: ready"),)),), max_tokens=64)
        events = [e async for e in client.stream(request)]
    finally:
        await client.aclose()
    assert isinstance(events[-1], Completion) and events[-1].stop_reason in ("end", "max_tokens")
    assert events[-1].text.strip() and any(isinstance(e, TextDelta) for e in events)
    assert events[-1].usage.input > 0


async def test_a_real_endpoint_calls_a_tool_and_reads_its_fenced_result(tmp_path, monkeypatch):
    from tests.support.engine_harness import Harness

    monkeypatch.setenv("TABWARDEN_REAL_PROVIDER_KEY_FOR_TEST", KEY)
    harness = Harness(tmp_path, BASE_URL, kind=KIND)
    harness.settings = settings
    harness.executor.results["read_page"] = '# Page Snapshot\nTitle: Price list\n- text: "The price is 42 euros"'
    await harness.start()
    try:
        thread = await harness.new_thread()
        await harness.submit(thread, "Use the read_page tool once to read the current page, then tell me the "
                                     "price it shows.")
        done = await harness.recorder.wait_for("turn.complete", timeout=120)
        assert done["stopReason"] == "end", harness.recorder.of("error")
        assert "read_page" in [tool for tool, _ in harness.executor.executed]
        answer = [n for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "assistant_message"][-1]
        assert "42" in answer.body["text"]
    finally:
        await harness.stop()
