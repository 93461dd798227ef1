"""The HTTP part every adapter shares: POST a JSON body, read Server-Sent Events back, retry
what can be retried before the first event, and turn every failure into a `ProviderError`."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, aconnect_sse

from host.providers.errors import ProviderError, classify_status

log = logging.getLogger("tabwarden.providers")

MAX_RETRY_WAIT_S = 20.0


def error_message(body: bytes) -> tuple[str, dict[str, Any]]:
    """The provider's own error text from a JSON (OpenAI or Anthropic shaped) or plain body."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500], {}
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        details = {k: error[k] for k in ("type", "code", "param") if isinstance(error.get(k), (str, int))}
        return str(error.get("message") or text)[:500], details
    if isinstance(error, str):
        return error[:500], {}
    return text[:500], {}


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


class SseClient:
    """One provider's HTTP client (connection pool, timeouts, retries)."""

    def __init__(self, provider: str, *, timeout_s: float, max_retries: int,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.provider = provider
        self.max_retries = max_retries
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 15.0)),
                                         transport=transport, follow_redirects=False)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def events(self, url: str, headers: dict[str, str], body: dict[str, Any]) -> AsyncIterator[ServerSentEvent]:
        """The events of one streamed answer. Failures before the first event are retried
        (rate limits, overload, server errors, network) up to `max_retries` times."""
        attempt = 0
        while True:
            started = False
            try:
                async with aconnect_sse(self._client, "POST", url, json=body, headers=headers) as source:
                    response = source.response
                    if response.status_code >= 400:
                        message, details = error_message(await response.aread())
                        raise classify_status(response.status_code, message, provider=self.provider,
                                              retry_after=_retry_after(response), details=details)
                    content_type = response.headers.get("content-type", "")
                    if "text/event-stream" not in content_type:
                        body_bytes = await response.aread()
                        message, _ = error_message(body_bytes)
                        raise ProviderError("protocol", f"expected an event stream, got {content_type or 'no content type'}"
                                            f": {message[:200]}", provider=self.provider, status=response.status_code)
                    async for event in source.aiter_sse():
                        started = True
                        yield event
                return
            except ProviderError as exc:
                if started or not exc.retryable or attempt >= self.max_retries:
                    raise
                wait = exc.retry_after if exc.retry_after is not None else 0.5 * 2 ** attempt
            except httpx.TimeoutException as exc:
                error = ProviderError("network", f"timed out ({type(exc).__name__})", provider=self.provider)
                if started or attempt >= self.max_retries:
                    raise error from None
                wait = 0.5 * 2 ** attempt
            except (httpx.TransportError, httpx.StreamError) as exc:
                error = ProviderError("network", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                                      provider=self.provider)
                if started or attempt >= self.max_retries:
                    raise error from None
                wait = 0.5 * 2 ** attempt
            attempt += 1
            log.info("provider %s: retrying in %.1f s (attempt %d)", self.provider, wait, attempt + 1)
            await asyncio.sleep(min(wait, MAX_RETRY_WAIT_S))


def decode_data(event: ServerSentEvent, provider: str) -> Any:
    """The JSON payload of one event; a ProviderError `protocol` when it is not JSON."""
    try:
        return json.loads(event.data)
    except ValueError:
        raise ProviderError("protocol", f"an event that is not JSON: {event.data[:200]!r}", provider=provider) from None
