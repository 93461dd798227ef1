"""Providers from the settings page: saved to engine.json with the key in the key store (never
in the file, never sent back), chosen as default, and verified with a real request to a fake
OpenAI-compatible server."""

from __future__ import annotations

import json

from tests.support.fake_model import FakeOpenAI, Reply


async def test_a_saved_provider_keeps_its_key_out_of_the_file_and_the_page(settings):
    with FakeOpenAI() as model:
        answer = await settings.op({"type": "providers.save", "name": "work", "kind": "openai", "baseUrl": model.url,
                                    "model": "m-1", "apiKey": "sk-test-123456", "makeDefault": True})
        assert answer["type"] == "command.ack"
        written = (settings.config / "engine.json").read_text()
        assert "sk-test-123456" not in written
        assert json.loads(written)["defaultProvider"] == "work"
        assert settings.engine.providers.key_store().get("work") == "sk-test-123456"
        state = await settings.state()
        assert state["providers"] == [{"name": "work", "kind": "openai", "baseUrl": model.url, "model": "m-1",
                                       "isDefault": True, "key": "stored"}]
        assert state["defaultProvider"] == "work"
        assert "sk-test-123456" not in json.dumps(settings.recorder.events)


async def test_saving_again_without_a_key_keeps_the_stored_key(settings):
    await settings.op({"type": "providers.save", "name": "a", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                       "model": "m-1", "apiKey": "k-1"})
    await settings.op({"type": "providers.save", "name": "a", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                       "model": "m-2"})
    state = await settings.state()
    assert state["providers"][0]["model"] == "m-2" and state["providers"][0]["key"] == "stored"


async def test_the_default_provider_is_chosen_among_saved_ones(settings):
    for name in ("a", "b"):
        await settings.op({"type": "providers.save", "name": name, "kind": "anthropic",
                           "baseUrl": "https://api.example", "model": f"model-{name}"})
    assert (await settings.state()).get("defaultProvider") is None  # two providers, none chosen
    assert (await settings.op({"type": "providers.setDefault", "name": "b"}))["type"] == "command.ack"
    state = await settings.state()
    assert state["defaultProvider"] == "b" and [p.get("isDefault", False) for p in state["providers"]] == [False, True]
    missing = await settings.op({"type": "providers.setDefault", "name": "c"})
    assert missing["code"] == "provider_not_found"


async def test_an_invalid_provider_is_refused_and_nothing_is_written(settings):
    answer = await settings.op({"type": "providers.save", "name": "bad", "kind": "openai", "baseUrl": "ftp://x",
                                "model": "m"})
    assert answer["type"] == "command.rejected" and answer["code"] == "invalid_provider"
    assert "baseUrl" in answer["message"]
    assert not (settings.config / "engine.json").exists()


async def test_verify_sends_a_real_request_and_reports_the_answer(settings):
    with FakeOpenAI([Reply(text="OK")]) as model:
        await settings.op({"type": "providers.save", "name": "fake", "kind": "openai", "baseUrl": model.url,
                           "model": "m-1", "apiKey": "sk-verify"})
        answer = await settings.op({"type": "providers.verify", "name": "fake"})
        assert answer["type"] == "providers.verified" and answer["ok"] is True
        assert answer["message"] == "m-1 answered: OK" and answer["model"] == "m-1"
        request = model.requests[0]
        assert request["headers"]["Authorization"] == "Bearer sk-verify" and request["body"]["model"] == "m-1"


async def test_verify_reports_why_a_provider_fails(settings):
    with FakeOpenAI([Reply(status=401, error_body={"error": {"message": "bad key"}})]) as model:
        await settings.op({"type": "providers.save", "name": "fake", "kind": "openai", "baseUrl": model.url,
                           "model": "m-1"})
        answer = await settings.op({"type": "providers.verify", "name": "fake"})
        assert answer["ok"] is False and answer["errorKind"] == "auth" and "bad key" in answer["message"]
    unknown = await settings.op({"type": "providers.verify", "name": "nobody"})
    assert unknown["ok"] is False and unknown["errorKind"] == "not_configured"


async def test_a_removed_provider_takes_its_stored_key_with_it(settings):
    for name, key in (("a", "k-a"), ("b", "k-b")):
        await settings.op({"type": "providers.save", "name": name, "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                           "model": "m-1", "apiKey": key})
    assert (await settings.op({"type": "providers.remove", "name": "a"}))["type"] == "command.ack"
    state = await settings.state()
    assert [p["name"] for p in state["providers"]] == ["b"]
    assert settings.engine.providers.key_store().get("a") is None
    assert settings.engine.providers.key_store().get("b") == "k-b"
    assert "\"a\"" not in (settings.config / "engine.json").read_text()


async def test_removing_the_default_provider_leaves_no_default(settings):
    for name in ("a", "b", "c"):
        await settings.op({"type": "providers.save", "name": name, "kind": "anthropic",
                           "baseUrl": "https://api.example", "model": f"model-{name}", "makeDefault": name == "a"})
    assert (await settings.state())["defaultProvider"] == "a"
    assert (await settings.op({"type": "providers.remove", "name": "a"}))["type"] == "command.ack"
    state = await settings.state()
    assert state.get("defaultProvider") is None and [p["name"] for p in state["providers"]] == ["b", "c"]
    assert not any(p.get("isDefault") for p in state["providers"])
    assert "defaultProvider" not in json.loads((settings.config / "engine.json").read_text())


async def test_removing_an_unknown_provider_is_refused_and_changes_nothing(settings):
    await settings.op({"type": "providers.save", "name": "a", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1",
                       "model": "m-1", "apiKey": "k-a", "makeDefault": True})
    before = (settings.config / "engine.json").read_text()
    answer = await settings.op({"type": "providers.remove", "name": "nobody"})
    assert answer["type"] == "command.rejected" and answer["code"] == "provider_not_found"
    assert "'nobody'" in answer["message"] and "providers: a" in answer["message"]
    assert (settings.config / "engine.json").read_text() == before
    assert settings.engine.providers.key_store().get("a") == "k-a"
    bad = await settings.op({"type": "providers.remove", "name": ""})
    assert bad["type"] == "command.rejected"
