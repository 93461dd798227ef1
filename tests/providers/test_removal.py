"""The one removal operation behind the settings page, the REPL and the CLI: the entry and its
key go together, a removed default leaves no default, and a refusal changes nothing."""

from __future__ import annotations

import json

import pytest

from host.config_files import EditRefused
from host.providers.removal import remove_provider
from host.providers.secrets import FileKeyStore, SecretError


def _write(path, providers, default=None):
    data = {"providers": {n: {"kind": "openai", "baseUrl": "https://api.example/v1", "model": "m"} for n in providers}}
    if default:
        data["defaultProvider"] = default
    path.write_text(json.dumps(data))


def test_the_default_goes_with_its_key_and_the_message_says_so(tmp_path):
    config, store = tmp_path / "engine.json", FileKeyStore(tmp_path / "keys.json")
    _write(config, ["a", "b", "c"], default="a")
    store.set("a", "k-a")
    removed = remove_provider("a", store, config)
    assert removed.was_default and removed.key == "removed" and removed.remaining == ("b", "c")
    assert removed.default_provider is None
    assert removed.message() == ("Removed provider 'a' and its stored API key. It was the default provider: no provider "
                                 "is the default now; choose one of b, c as the default before the next task.")
    assert "defaultProvider" not in json.loads(config.read_text()) and store.get("a") is None
    assert remove_provider("b", store, config).message() == "Removed provider 'b' (it had no stored API key)."
    _write(config, ["c", "d"], default="d")
    alone = remove_provider("d", store, config)
    assert alone.default_provider == "c" and alone.message().endswith("'c', the only one left, is the default now.")
    assert remove_provider("c", store, config).message().endswith("no provider is left: add one before the next task.")


def test_an_unknown_name_is_a_structured_refusal(tmp_path):
    config, store = tmp_path / "engine.json", FileKeyStore(tmp_path / "keys.json")
    _write(config, ["a"])
    with pytest.raises(EditRefused) as caught:
        remove_provider("x", store, config)
    assert caught.value.code == "provider_not_found" and "providers: a" in caught.value.message


def test_a_key_that_cannot_be_deleted_keeps_the_provider(tmp_path):
    config = tmp_path / "engine.json"
    _write(config, ["a"], default="a")
    before = config.read_text()

    class Stuck:
        def get(self, name):
            return "k"

        def delete(self, name):
            raise SecretError("locked")

    with pytest.raises(EditRefused) as caught:
        remove_provider("a", Stuck(), config)
    assert caught.value.code == "key_store" and "kept" in caught.value.message
    assert config.read_text() == before
