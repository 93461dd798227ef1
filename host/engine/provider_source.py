"""Which model a turn talks to: the engine settings file is read at each turn start (so edits
apply without a restart), the key comes from the key store, and clients are reused while their
settings stay the same."""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from pathlib import Path

    from host.providers.config import EngineConfig
    from host.providers.factory import Provider

log = logging.getLogger("tabwarden.engine")


class ProviderSource:
    """Builds (and caches) the provider for a turn's overrides."""

    def __init__(self, load: Callable[[], "EngineConfig"] | None = None, key_store: Any = None,
                 transport: Any = None):
        self._load = load
        self._key_store = key_store
        self._transport = transport
        self._cache: dict[str, "Provider"] = {}
        self._last_used: dict[str, "Provider"] = {}  # provider name -> the client its last turn got

    def settings(self) -> "EngineConfig":
        """The current engine settings (raises host.providers.config.ConfigFileError)."""
        if self._load is not None:
            return self._load()
        from host.providers.config import load_config

        return load_config()

    def settings_file(self) -> "Path | None":
        """The file the settings come from (engine.json); None when a loader was given instead."""
        from host.providers.config import config_path

        return config_path() if self._load is None else None

    def key_store(self) -> Any:
        """The key store (created on first use)."""
        if self._key_store is None:
            from host.providers.secrets import default_key_store

            self._key_store = default_key_store()
        return self._key_store

    def get(self, connection_id: str | None = None) -> "Provider":
        """The provider named `connection_id` (else the default). Raises ProviderError
        `not_configured` when there is none or its settings are invalid."""
        from host.config_files import ConfigFileError
        from host.providers.errors import ProviderError
        from host.providers.factory import make_provider
        from host.providers.secrets import SecretError, resolve_key

        try:
            config = self.settings()
        except ConfigFileError as exc:
            raise ProviderError("not_configured", f"The model settings file has a mistake ({exc}). Fix that field in "
                                "the file; your next message uses the fixed file.") \
                from None
        chosen = config.provider(connection_id)
        if chosen is None:
            raise ProviderError("not_configured", _no_provider(config, connection_id), provider=connection_id or "")
        name, provider_config = chosen
        try:
            key = resolve_key(name, provider_config.api_key_env, self.key_store())
        except SecretError as exc:
            raise ProviderError("not_configured", f"The API key of the model provider {name!r} cannot be read "
                                f"({exc}). Enter it again in Settings → Model providers.", provider=name) from None
        digest = hashlib.sha256(json.dumps([name, provider_config.model_dump(), key or ""], sort_keys=True,
                                           default=str).encode()).hexdigest()
        cached = self._cache.get(digest)
        if cached is None:
            cached = self._cache[digest] = make_provider(name, provider_config, key, transport=self._transport)
        self._last_used[name] = cached
        return cached

    def left_out(self, name: str) -> list[Any]:
        """The tools (`LeftOut`: name, reason) the last request to provider `name` in this process
        had to leave out: the adapters fit the tool list to what each API accepts."""
        provider = self._last_used.get(name)
        return list(getattr(provider, "left_out", None) or [])

    async def close(self) -> None:
        """Close every cached provider client."""
        for provider in self._cache.values():
            try:
                await provider.aclose()
            except Exception:
                log.debug("closing a provider failed", exc_info=True)
        self._cache.clear()
        self._last_used.clear()


_SETTINGS = "Open Settings → Model providers (from the side panel)"


def _no_provider(config: "EngineConfig", wanted: str | None) -> str:
    """Why no model can answer, and the one thing to do, in the words of the settings page."""
    if wanted is not None:
        return (f"The model provider {wanted!r} is not set up (it may have been removed). {_SETTINGS} and "
                "choose another.")
    if not config.providers:
        return f"No model is set up yet. {_SETTINGS}, add a provider and make it the default."
    return f"No model is chosen as the default. {_SETTINGS} and make one the default."
