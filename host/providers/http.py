"""The HTTP part every adapter shares: POST a JSON body, read Server-Sent Events back, retry
what can be retried before the first event, and turn every failure into a `ProviderError`."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from host.providers.errors import ProviderError, classify_status
from host.providers.model import RetryWait
from host.providers.sse import Comment, Event, SseTooLarge, read_events

log = logging.getLogger("tabwarden.providers")

# A wait the provider asks for up to this long is waited out (and shown); a longer one ends the
# call with the provider's own figure, rather than retrying sooner than it said.
MAX_RETRY_WAIT_S = 60.0


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


def retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a `Retry-After` header: a number of seconds, or an HTTP date."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return max(0.0, seconds) if seconds == seconds and seconds != float("inf") else None


class SseClient:
    """One provider's HTTP client (connection pool, timeouts, retries).

    `timeout_s` bounds the connection, each read, and the quiet time of a stream: only an event
    with content resets it, so a server that sends nothing but keep-alive comments (or events the
    adapter calls keep-alive, like `ping`) times out like a silent one."""

    def __init__(self, provider: str, *, timeout_s: float, max_retries: int,
                 transport: httpx.AsyncBaseTransport | None = None):
        self.provider = provider
        self.max_retries = max_retries
        self.idle_s = timeout_s
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 15.0)),
                                         transport=transport, follow_redirects=False)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()

    async def events(self, url: str, headers: dict[str, str], body: dict[str, Any], *,
                     keepalive: Callable[[Event], bool] = lambda event: False) -> AsyncIterator[Event | RetryWait]:
        """The events of one streamed answer, and a `RetryWait` before each wait for a retry.
        Failures before the first event are retried (rate limits, overload, server errors,
        network) up to `max_retries` times, after the wait the provider asked for when it said."""
        attempt = 0
        while True:
            started = False
            try:
                async with self._client.stream("POST", url, json=body, headers=headers) as response:
                    if response.status_code >= 400:
                        message, details = error_message(await response.aread())
                        raise classify_status(response.status_code, message, provider=self.provider,
                                              retry_after=retry_after(response.headers.get("retry-after")),
                                              details=details)
                    content_type = response.headers.get("content-type", "")
                    if "text/event-stream" not in content_type:
                        message, _ = error_message(await response.aread())
                        raise ProviderError("protocol", f"expected an event stream, got {content_type or 'no content type'}"
                                            f": {message[:200]}", provider=self.provider, status=response.status_code)
                    async for event in self._content(response, keepalive):
                        started = True
                        yield event
                return
            except ProviderError as exc:
                if started or not exc.retryable or attempt >= self.max_retries:
                    raise
                if exc.retry_after is not None and exc.retry_after > MAX_RETRY_WAIT_S:
                    raise ProviderError(exc.kind, f"{exc.message} (it asks to wait {exc.retry_after:.0f} s before trying "
                                        "again; try again later)", provider=self.provider, status=exc.status,
                                        retry_after=exc.retry_after, details=exc.details) from None
                wait = exc.retry_after if exc.retry_after is not None else 0.5 * 2 ** attempt
                reason = KIND_WAIT.get(exc.kind, exc.kind)
            except httpx.TimeoutException as exc:
                error = ProviderError("network", f"timed out ({type(exc).__name__})", provider=self.provider)
                if started or attempt >= self.max_retries:
                    raise error from None
                wait, reason = 0.5 * 2 ** attempt, "timed out"
            except (httpx.TransportError, httpx.StreamError) as exc:
                error = ProviderError("network", f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                                      provider=self.provider)
                if started or attempt >= self.max_retries:
                    raise error from None
                wait, reason = 0.5 * 2 ** attempt, "could not be reached"
            attempt += 1
            log.info("provider %s: %s; retrying in %.1f s (attempt %d)", self.provider, reason, wait, attempt + 1)
            yield RetryWait(wait, reason, attempt + 1)
            await asyncio.sleep(wait)

    async def _content(self, response: httpx.Response,
                       keepalive: Callable[[Event], bool]) -> AsyncIterator[Event]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.idle_s
        reader = read_events(response.aiter_lines())
        try:
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        item = await anext(reader)
                except StopAsyncIteration:
                    return
                except TimeoutError:
                    raise ProviderError("network", f"no content for {self.idle_s:g} s (the stream only kept itself "
                                        "alive)", provider=self.provider, details={"stream": True}) from None
                except SseTooLarge as exc:
                    raise ProviderError("protocol", str(exc), provider=self.provider) from None
                if isinstance(item, Comment) or keepalive(item):
                    continue
                deadline = loop.time() + self.idle_s
                yield item
        finally:
            await reader.aclose()


KIND_WAIT = {"rate_limit": "rate limited", "overloaded": "overloaded", "server": "server error",
             "network": "could not be reached"}


def decode_data(event: Event, provider: str) -> Any:
    """The JSON payload of one event; a ProviderError `protocol` when it is not JSON."""
    try:
        return json.loads(event.data)
    except ValueError:
        raise ProviderError("protocol", f"an event that is not JSON: {event.data[:200]!r}", provider=provider) from None
