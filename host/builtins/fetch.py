"""A host-side fetch: one HTTP GET from the host, through the SSRF guard.

    check_url(url) → connect only to checked addresses (netguard) → redirects: each target
    checked again (check_url), followed only within the origin the gatekeeper judged (another
    origin is reported back for the model to fetch, and be judged, on its own) → body read up
    to the size cap, within the time limit → HTML to Markdown/text, other text as is.

No cookies, no credentials, no proxy. The caller fences the result as untrusted page content.
"""

from __future__ import annotations

import asyncio
import codecs
import re
from dataclasses import dataclass, field

import httpx

from host.builtins.html_text import html_to_text
from host.builtins.refusals import BuiltinRefused
from host.builtins.netguard import GuardedTransport, Resolver
from host.gatekeeper.origins import normalize_origin
from host.gatekeeper.ssrf import SsrfBlocked, check_url

MAX_REDIRECTS = 5
USER_AGENT = "Tabwarden/0.1 (fetch_url)"
ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5"
_TEXT_TYPES = re.compile(r"^(text/.+|application/(json|xml|javascript|ecmascript|x-ndjson|[\w.+-]+\+(json|xml)))$")
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE)


class FetchFailed(BuiltinRefused):
    """A fetch that produced no page; `code` is stable: ssrf_blocked, too_many_redirects,
    timeout, network_error, not_text, invalid_url. The request may have left the host."""

    dispatched = True

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class Fetched:
    """What came back: the final URL, status, type, and the readable text (whole)."""

    url: str
    status: int
    content_type: str
    title: str = ""
    text: str = ""
    truncated: bool = False  # the body was cut at the size cap
    redirected_to: str | None = None  # a redirect to another origin, not followed
    redirects: list[str] = field(default_factory=list)


def _origin(url: str) -> str:
    return normalize_origin(url).text


def _charset(declared: str | None, body: bytes, html: bool) -> str:
    candidates = [declared]
    if html:
        found = _META_CHARSET.search(body[:4096])
        candidates.append(found.group(1).decode("ascii") if found else None)
    for name in candidates:
        if name:
            try:
                return codecs.lookup(name).name
            except LookupError:
                continue
    return "utf-8"


def _kind(content_type: str, body: bytes) -> str:
    """html, text or binary."""
    if content_type in _HTML_TYPES:
        return "html"
    if _TEXT_TYPES.match(content_type):
        return "text"
    if not content_type:
        head = body[:512].lstrip().lower()
        if head.startswith((b"<!doctype html", b"<html")):
            return "html"
        if b"\x00" not in body[:4096]:
            return "text"
    return "binary"


async def fetch(url: str, *, resolver: Resolver | None = None, timeout_s: float = 20.0, max_bytes: int = 2 << 20,
                markdown: bool = True) -> Fetched:
    """GET `url` through the guard; raises FetchFailed. HTTP error statuses are returned (the
    caller reports them), not raised."""
    try:
        async with asyncio.timeout(timeout_s):
            return await _fetch(url, resolver, timeout_s, max_bytes, markdown)
    except TimeoutError:
        raise FetchFailed("timeout", f"no complete answer within {timeout_s:g} s") from None


async def _fetch(url: str, resolver: Resolver | None, timeout_s: float, max_bytes: int, markdown: bool) -> Fetched:
    judged = _origin(url)
    current = url
    hops: list[str] = []
    transport = GuardedTransport(resolver)
    async with httpx.AsyncClient(transport=transport, follow_redirects=False, trust_env=False,
                                 timeout=httpx.Timeout(timeout_s),
                                 headers={"User-Agent": USER_AGENT, "Accept": ACCEPT}) as client:
        for _ in range(MAX_REDIRECTS + 1):
            reason = check_url(current)
            if reason is not None:
                where = "redirect target" if hops else "URL"
                raise FetchFailed("ssrf_blocked", f"the {where} {current} may not be fetched: {reason}")
            try:
                request = client.build_request("GET", current)
            except (httpx.InvalidURL, ValueError) as exc:
                raise FetchFailed("invalid_url", f"{current}: {exc}") from None
            try:
                response = await client.send(request, stream=True)
            except SsrfBlocked as exc:
                raise FetchFailed("ssrf_blocked", f"{current} may not be fetched: {exc.reason}") from None
            except httpx.TimeoutException:
                raise FetchFailed("timeout", f"{current} did not answer within {timeout_s:g} s") from None
            except httpx.HTTPError as exc:
                raise FetchFailed("network_error", f"{current}: {exc or type(exc).__name__}") from None
            try:
                location = response.headers.get("location")
                if response.is_redirect and location:
                    try:
                        target = str(response.url.join(location))
                    except (httpx.InvalidURL, ValueError):
                        raise FetchFailed("invalid_url", f"{current} redirects to an invalid URL") from None
                    hops.append(target)
                    reason = check_url(target)
                    if reason is not None:
                        raise FetchFailed("ssrf_blocked", f"{current} redirects to {target}, which may not be "
                                                          f"fetched: {reason}")
                    if _origin(target) != judged:
                        return Fetched(url=current, status=response.status_code, content_type="",
                                       redirected_to=target, redirects=hops)
                    current = target
                    continue
                return await _read(response, current, hops, max_bytes, markdown)
            finally:
                await response.aclose()
    raise FetchFailed("too_many_redirects", f"more than {MAX_REDIRECTS} redirects from {url}")


async def _read(response: httpx.Response, url: str, hops: list[str], max_bytes: int, markdown: bool) -> Fetched:
    body = bytearray()
    truncated = False
    try:
        async for chunk in response.aiter_bytes():
            body.extend(chunk)
            if len(body) >= max_bytes:
                del body[max_bytes:]
                truncated = True
                break
    except SsrfBlocked as exc:
        raise FetchFailed("ssrf_blocked", exc.reason) from None
    except httpx.TimeoutException:
        raise FetchFailed("timeout", f"{url} stopped sending") from None
    except httpx.HTTPError as exc:
        raise FetchFailed("network_error", f"{url}: {exc or type(exc).__name__}") from None
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    kind = _kind(content_type, bytes(body))
    if kind == "binary":
        raise FetchFailed("not_text", f"{url} is {content_type or 'binary data'}, not text; use download to save it")
    text = bytes(body).decode(_charset(response.charset_encoding, bytes(body), kind == "html"), errors="replace")
    title = ""
    if kind == "html":
        # Parsing a large page takes a while: not on the event loop.
        readable = await asyncio.to_thread(html_to_text, text, url, markdown=markdown)
        title, text = readable.title, readable.text
    return Fetched(url=url, status=response.status_code, content_type=content_type or "text/plain", title=title,
                   text=text.strip(), truncated=truncated, redirects=hops)
