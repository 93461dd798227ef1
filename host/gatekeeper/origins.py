"""Origins and destinations, normalised the way the browser sees them.

Everything the gatekeeper compares goes through here first, so that spelling tricks cannot split
one site into two: schemes and hosts are lowercased, IDN hosts become punycode, IPv4 literals in
any form become dotted quads, default ports and trailing dots disappear, and the wrappers
`view-source:`, `blob:` and `filesystem:` are unwrapped to the URL they carry. Parsing is the
WHATWG URL standard (`ada-url`), which is what Chrome itself implements.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from ada_url import URL

# `data:` counts as script: a data: document runs whatever script it carries.
SCRIPT_SCHEMES = frozenset({"javascript", "data", "vbscript"})
WRAPPER_SCHEMES = frozenset({"view-source", "blob", "filesystem"})
# Schemes whose origin is scheme://host[:port] (WHATWG "special" schemes, file aside).
NETWORK_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
MAX_UNWRAP = 4

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_C0_AND_SPACE = "".join(chr(i) for i in range(33))


class Origin(NamedTuple):
    """A normalised origin. `text` is the canonical string compared and reported."""

    text: str
    scheme: str = ""  # without the colon; "" when unknown
    host: str = ""  # lowercase, punycode, no trailing dot; IPv6 in brackets
    port: str = ""  # "" for the scheme's default port


NO_ORIGIN = Origin("")


class Destination(NamedTuple):
    """Where a URL-bearing call goes."""

    origin: Origin
    href: str  # the normalised URL the tool should load (what was judged); "" if invalid
    scheme: str  # innermost scheme after unwrapping
    script: bool  # javascript:, data:, vbscript: (in any case, wrapped or not)
    valid: bool  # False when the text is no URL at all


def clean(text: str) -> str:
    """Drop what the WHATWG parser ignores: leading/trailing C0 controls and spaces, and any
    tab or newline inside (so `java\\tscript:` is `javascript:`)."""
    return _TAB_NEWLINE.sub("", text).strip(_C0_AND_SPACE)


def _parse(text: str) -> URL | None:
    match = _SCHEME.match(text)
    if match is None or "." in match.group(1):
        # No scheme (or `example.com:8080`, which would read as a scheme): a scheme-less
        # destination is opened as https, like the address bar does.
        text = "https://" + text
    try:
        return URL(text)
    except ValueError:
        return None


def _origin_of(url: URL) -> Origin:
    scheme = url.protocol[:-1]
    host = url.hostname.lower().rstrip(".")
    port = url.port
    if scheme in NETWORK_SCHEMES or host:
        text = f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"
        return Origin(text, scheme, host, port)
    if scheme == "file":
        return Origin("file://", scheme)
    if scheme == "about":
        return Origin("about:" + url.pathname.lower(), scheme)
    return Origin(scheme + ":", scheme)


@lru_cache(maxsize=8192)
def destination(url: str) -> Destination:
    """Normalise a destination URL (the argument a tool declares as its `url_param`)."""
    text = clean(url)
    parsed = _parse(text)
    for _ in range(MAX_UNWRAP):
        if parsed is None:
            break
        scheme = parsed.protocol[:-1]
        if scheme not in WRAPPER_SCHEMES:
            break
        parsed = _parse(clean(parsed.href[len(scheme) + 1:]))
    else:
        parsed = None  # wrapped more deeply than anything legitimate
    if parsed is None:
        return Destination(Origin(text), "", "", False, False)
    scheme = parsed.protocol[:-1]
    if scheme in SCRIPT_SCHEMES:
        return Destination(Origin(scheme + ":", scheme), parsed.href, scheme, True, True)
    return Destination(_origin_of(parsed), parsed.href, scheme, False, True)


@lru_cache(maxsize=8192)
def normalize_origin(text: str) -> Origin:
    """Normalise an origin or a URL to its origin (`""` stays the empty, origin-less value).

    Unparseable text is kept as is: it can only match a `*` pattern.
    """
    if not text or text == "null":
        return NO_ORIGIN if not text else Origin("null")
    return destination(text).origin


def is_ip_host(host: str) -> bool:
    """True for an IPv6 literal (bracketed) or a dotted-quad IPv4 host (already normalised)."""
    if host.startswith("["):
        return True
    parts = host.split(".")
    return len(parts) == 4 and all(p.isdigit() for p in parts)


def host_suffixes(host: str) -> list[str]:
    """`a.b.c` → `[a.b.c, b.c, c]`: the keys a `*.domain` pattern may be indexed under."""
    out = [host]
    index = host.find(".")
    while index != -1:
        out.append(host[index + 1:])
        index = host.find(".", index + 1)
    return out
