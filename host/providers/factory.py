"""From a validated `ProviderConfig` and a key to a streaming client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from host.providers.model import ModelRequest, StreamEvent

if TYPE_CHECKING:
    import httpx

    from host.providers.config import ProviderConfig


class Provider(Protocol):
    """What the engine needs from a model connection."""

    name: str
    model: str
    kind: str
    accepts_images: bool  # tool results' images go to the model (else a note says they did not)
    accepts_audio: bool  # tool results' audio likewise

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one answer; the last event is the Completion."""

    async def aclose(self) -> None:
        """Close the connection pool."""


def make_provider(name: str, config: "ProviderConfig", api_key: str | None, *,
                  transport: "httpx.AsyncBaseTransport | None" = None) -> Provider:
    """The adapter for `config.kind` (`openai` or `anthropic`)."""
    options = dict(base_url=config.base_url, model=config.model, api_key=api_key, headers=dict(config.headers),
                   max_tokens=config.max_tokens, timeout_s=config.timeout_seconds, max_retries=config.max_retries,
                   transport=transport, accepts_images=config.accepts_images())
    if config.kind == "anthropic":
        from host.providers.anthropic_messages import AnthropicMessages

        return AnthropicMessages(name, **options)  # type: ignore[arg-type]
    options["accepts_audio"] = config.accepts_audio()
    from host.providers.openai_chat import OpenAIChat

    return OpenAIChat(name, **options)  # type: ignore[arg-type]
