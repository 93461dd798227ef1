"""Provider settings: precise validation errors, defaults, the default-provider choice, and API
keys kept out of SQLite (a 0600 file when no keyring is usable)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from host.config_files import ConfigFileError
from host.providers.config import load_config, parse_config, save_config
from host.providers.secrets import FileKeyStore, SecretError, default_key_store, resolve_key


def test_a_valid_file_loads_with_defaults(tmp_path):
    path = tmp_path / "engine.json"
    path.write_text(json.dumps({"providers": {"local": {"kind": "openai", "baseUrl": "http://127.0.0.1:9/v1/",
                                                       "model": "m", "headers": {"X-A": "b"}}}}))
    config = load_config(path)
    name, provider = config.provider()
    assert name == "local" and provider.base_url == "http://127.0.0.1:9/v1" and provider.max_tokens == 4096
    assert config.approval_timeout_seconds == 300


def test_a_missing_file_means_no_providers(tmp_path):
    config = load_config(tmp_path / "absent.json")
    assert config.providers == {} and config.provider() is None


@pytest.mark.parametrize("data,path", [
    ({"providers": {"a": {"kind": "gemini", "baseUrl": "http://x", "model": "m"}}}, "$.providers.a.kind"),
    ({"providers": {"a": {"kind": "openai", "baseUrl": "ftp://x", "model": "m"}}}, "$.providers.a.baseUrl"),
    ({"providers": {"a": {"kind": "openai", "baseUrl": "http://x", "model": ""}}}, "$.providers.a.model"),
    ({"providers": {"a": {"kind": "openai", "baseUrl": "http://x", "model": "m", "headers": {"X": "a\nb"}}}},
     "$.providers.a.headers"),
    ({"providers": {"a": {"kind": "openai", "baseUrl": "http://x", "model": "m", "apiKey": "sk"}}},
     "$.providers.a.apiKey"),
    ({"approvalTimeoutSeconds": 0}, "$.approvalTimeoutSeconds"),
    ({"defaultProvider": "ghost"}, "$.defaultProvider"),
    ({"providers": {"bad name": {"kind": "openai", "baseUrl": "http://x", "model": "m"}}}, "$.providers"),
])
def test_bad_settings_name_the_field(data, path):
    with pytest.raises(ConfigFileError) as caught:
        parse_config(data)
    assert any(p == path for p, _ in caught.value.problems), caught.value.problems


def test_invalid_json_is_a_config_error(tmp_path):
    path = tmp_path / "engine.json"
    path.write_text("{nope")
    with pytest.raises(ConfigFileError, match="not JSON"):
        load_config(path)


def test_saved_settings_round_trip_with_mode_0600(tmp_path):
    config = parse_config({"defaultProvider": "b", "providers": {
        "a": {"kind": "openai", "baseUrl": "http://a", "model": "m"},
        "b": {"kind": "anthropic", "baseUrl": "https://b", "model": "c", "apiKeyEnv": "B_KEY"}}})
    path = save_config(config, tmp_path / "cfg" / "engine.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = load_config(path)
    assert again == config and again.provider()[0] == "b"


def test_file_key_store_is_private_and_refuses_a_readable_file(tmp_path):
    store = FileKeyStore(tmp_path / "secrets" / "keys.json")
    assert store.get("a") is None
    store.set("a", "sk-1")
    store.set("b", "sk-2")
    store.delete("b")
    assert store.get("a") == "sk-1" and store.get("b") is None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    os.chmod(store.path, 0o644)
    with pytest.raises(SecretError, match="readable by others"):
        store.get("a")


def test_keys_never_land_in_the_database_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path))
    store = default_key_store()
    assert store.backend == "file"
    store.set("p", "sk-secret")
    for path in tmp_path.rglob("*.sqlite3*"):
        assert b"sk-secret" not in path.read_bytes()
    assert resolve_key("p", None, store) == "sk-secret"


def test_an_environment_variable_supplies_a_key_when_none_is_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-env")
    store = FileKeyStore(tmp_path / "k.json")
    assert resolve_key("p", "MY_KEY", store) == "sk-env"
    store.set("p", "sk-stored")
    assert resolve_key("p", "MY_KEY", store) == "sk-stored"
    assert resolve_key("q", None, store) is None
