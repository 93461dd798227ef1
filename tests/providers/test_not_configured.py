"""With no usable model, the message says what happened and the one thing to do, in the words
of the settings page; the code stays `not_configured`."""

from __future__ import annotations

import pytest

from host.config_files import ConfigFileError
from host.engine.provider_source import ProviderSource
from host.providers.config import parse_config
from host.providers.errors import ProviderError

PROVIDER = {"kind": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}


def _failure(settings, connection_id=None) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        ProviderSource(load=settings).get(connection_id)
    assert caught.value.kind == "not_configured" and caught.value.code == "not_configured"
    assert caught.value.describe() == caught.value.message  # no developer prefix
    return caught.value


def test_no_provider_at_all():
    error = _failure(lambda: parse_config({}))
    assert error.message == ("No model is set up yet. Open Settings → Model providers (from the side panel), "
                             "add a provider and make it the default.")


def test_several_providers_and_no_default():
    error = _failure(lambda: parse_config({"providers": {"a": PROVIDER, "b": PROVIDER}}))
    assert error.message.startswith("No model is chosen as the default. Open Settings → Model providers")


def test_a_named_provider_that_is_gone():
    error = _failure(lambda: parse_config({"providers": {"a": PROVIDER}}), "gone")
    assert "'gone' is not set up" in error.message and "choose another" in error.message


def test_an_invalid_settings_file_names_the_field():
    def broken():
        raise ConfigFileError("/x/engine.json", [("$.providers.a.kind", "expected openai or anthropic")])

    error = _failure(broken)
    assert "$.providers.a.kind" in error.message and "next message uses the fixed file" in error.message
    for developer_words in ("control method", "engine.set_provider", "no a "):
        assert developer_words not in error.message
