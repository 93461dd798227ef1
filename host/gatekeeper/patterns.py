"""Tool and origin patterns: parsing, normalising and indexed matching.

Origin patterns:
  `*`                    any origin, the empty (origin-less) one included
  `""`                   only origin-less calls (memory, questions to the user...)
  `https://x.com[:port]` exactly that origin (scheme, host and effective port)
  `x.com[:port]`         that host under any scheme (and any port unless one is given)
  `*.x.com`              x.com and every subdomain, any scheme and port
  `https://*.x.com`      the same, under one scheme
  `chrome://*`, `about:*`  every origin of a scheme

Tool patterns: an exact name, a prefix ending in `*` (`mcp__github__*`), `category:<name>`,
`effect:<class>` (what a write commits: `effect:pay`), or `*`.

All patterns are normalised like origins (see `origins`), so `*.X.COM.` matches `a.x.com`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Generic, NamedTuple, TypeVar

from ada_url import URL

from host.gatekeeper.errors import GatekeeperError
from host.gatekeeper.origins import Origin, clean, host_suffixes, is_ip_host, normalize_origin
from host.tools.catalog import ALIASES
from host.tools.spec import CATEGORIES

T = TypeVar("T")

_SCHEME_WILDCARD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(?://)?\*")
_SCHEME_SUFFIX = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://\*\.(.+)")
_HOST_PORT = re.compile(r"(.+?)(?::(\d{1,5}))?")
_TOOL_NAME = re.compile(r"[^\s\x00-\x1f*]+")


class PatternError(GatekeeperError, ValueError):
    """A pattern that cannot mean anything; the message says what was expected."""

    code = "invalid_pattern"


class OriginPattern(NamedTuple):
    """A parsed origin pattern. `text` is its normalised spelling."""

    text: str
    kind: str  # any | none | exact | host | suffix | scheme
    scheme: str = ""
    host: str = ""
    port: str = ""

    @property
    def specificity(self) -> int:
        """2 for one origin (or one host, or "no origin"), 1 for a family, 0 for `*`."""
        return _ORIGIN_SPECIFICITY[self.kind]


_ORIGIN_SPECIFICITY = {"any": 0, "none": 2, "exact": 2, "host": 2, "suffix": 1, "scheme": 1}


def _normalize_host(text: str, original: str) -> str:
    try:
        url = URL("http://" + text)
    except ValueError:
        raise PatternError(f"{original!r} is not a host name") from None
    if url.pathname not in ("", "/") or url.search or url.hash or url.username or url.password or url.port:
        raise PatternError(f"{original!r}: a host pattern holds only a host name")
    host = url.hostname.rstrip(".")
    if not host:
        raise PatternError(f"{original!r} has an empty host")
    return host


def parse_origin_pattern(text: object) -> OriginPattern:
    """Parse and normalise an origin pattern; raise `PatternError` saying what was expected."""
    if not isinstance(text, str):
        raise PatternError(f"an origin pattern must be a string, got {type(text).__name__}")
    raw = clean(text)
    if raw == "*":
        return OriginPattern("*", "any")
    if raw == "":
        return OriginPattern("", "none")
    match = _SCHEME_WILDCARD.fullmatch(raw)
    if match:
        scheme = match.group(1).lower()
        return OriginPattern(f"{scheme}://*" if "//" in raw else f"{scheme}:*", "scheme", scheme)
    match = _SCHEME_SUFFIX.fullmatch(raw)
    if match:
        scheme, host = match.group(1).lower(), _normalize_host(match.group(2), text)
        return OriginPattern(f"{scheme}://*.{host}", "suffix", scheme, host)
    if raw.startswith("*."):
        host = _normalize_host(raw[2:], text)
        return OriginPattern(f"*.{host}", "suffix", "", host)
    if "*" in raw:
        raise PatternError(f"{text!r}: `*` may stand alone, lead a domain (`*.example.com`) or "
                           "follow a scheme (`chrome://*`)")
    if "://" in raw or raw.lower().startswith("about:"):
        origin = normalize_origin(raw)
        if not origin.scheme:
            raise PatternError(f"{text!r} is not a valid origin")
        return OriginPattern(origin.text, "exact", origin.scheme, origin.host, origin.port)
    match = _HOST_PORT.fullmatch(raw)
    assert match is not None
    host_text, port = match.group(1), match.group(2) or ""
    if host_text.startswith("[") and not host_text.endswith("]"):  # `[::1]` has colons of its own
        host_text, port = raw, ""
    if port and not 0 < int(port) < 65536:
        raise PatternError(f"{text!r}: port {port} is out of range")
    host = _normalize_host(host_text, text)
    return OriginPattern(f"{host}:{port}" if port else host, "host", "", host, str(int(port)) if port else "")


class OriginIndex(Generic[T]):
    """Values filed under origin patterns; `lookup` finds every value whose pattern matches an
    origin with a handful of dictionary probes, whatever the number of patterns."""

    __slots__ = ("_any", "_none", "_exact", "_host", "_suffix", "_scheme", "size")

    def __init__(self) -> None:
        self._any: list[T] = []
        self._none: list[T] = []
        self._exact: dict[str, list[T]] = {}
        self._host: dict[str, list[tuple[OriginPattern, T]]] = {}
        self._suffix: dict[str, list[tuple[OriginPattern, T]]] = {}
        self._scheme: dict[str, list[T]] = {}
        self.size = 0

    def add(self, pattern: OriginPattern, value: T) -> None:
        """File `value` under `pattern`."""
        kind = pattern.kind
        if kind == "any":
            self._any.append(value)
        elif kind == "none":
            self._none.append(value)
        elif kind == "exact":
            self._exact.setdefault(pattern.text, []).append(value)
        elif kind == "host":
            self._host.setdefault(pattern.host, []).append((pattern, value))
        elif kind == "suffix":
            self._suffix.setdefault(pattern.host, []).append((pattern, value))
        else:
            self._scheme.setdefault(pattern.scheme, []).append(value)
        self.size += 1

    def lookup(self, origin: Origin) -> list[T]:
        """Every value whose pattern matches `origin`."""
        out = list(self._any)
        if not origin.text:
            out.extend(self._none)
            return out
        found = self._exact.get(origin.text)
        if found:
            out.extend(found)
        host = origin.host
        if host:
            for pattern, value in self._host.get(host, ()):
                if not pattern.port or pattern.port == origin.port:
                    out.append(value)
            if self._suffix and not is_ip_host(host):
                for suffix in host_suffixes(host):
                    for pattern, value in self._suffix.get(suffix, ()):
                        if not pattern.scheme or pattern.scheme == origin.scheme:
                            out.append(value)
        if origin.scheme:
            found = self._scheme.get(origin.scheme)
            if found:
                out.extend(found)
        return out


class OriginSet:
    """A set of origin patterns answering "which pattern matches this origin?" (cached)."""

    __slots__ = ("patterns", "_index", "_cache")

    def __init__(self, patterns: Iterable[OriginPattern]) -> None:
        self.patterns: tuple[OriginPattern, ...] = tuple(dict.fromkeys(patterns))
        self._index: OriginIndex[OriginPattern] = OriginIndex()
        for pattern in self.patterns:
            self._index.add(pattern, pattern)
        self._cache: dict[str, OriginPattern | None] = {}

    @classmethod
    def parse(cls, texts: Iterable[str]) -> "OriginSet":
        """Build from pattern strings (raises `PatternError` on the first bad one)."""
        return cls(parse_origin_pattern(t) for t in texts)

    def match(self, origin: Origin) -> OriginPattern | None:
        """The most specific pattern matching `origin`, or None."""
        cached = self._cache.get(origin.text, self)
        if cached is not self:
            return cached  # type: ignore[return-value]
        found = self._index.lookup(origin)
        best = max(found, key=lambda p: p.specificity) if found else None
        if len(self._cache) >= 4096:
            self._cache.clear()
        self._cache[origin.text] = best
        return best

    def __len__(self) -> int:
        return len(self.patterns)


class ToolPattern(NamedTuple):
    """A parsed tool pattern."""

    text: str
    kind: str  # any | exact | prefix | category | effect
    value: str = ""

    @property
    def specificity(self) -> int:
        """2 for one tool, 1 for a prefix, category or effect, 0 for `*`."""
        return 0 if self.kind == "any" else 2 if self.kind == "exact" else 1


def parse_tool_pattern(text: object) -> ToolPattern:
    """Parse a tool pattern; raise `PatternError` saying what was expected."""
    if not isinstance(text, str):
        raise PatternError(f"a tool pattern must be a string, got {type(text).__name__}")
    raw = text.strip()
    if raw == "*":
        return ToolPattern("*", "any")
    if raw.startswith("category:"):
        name = raw[len("category:"):]
        if name not in CATEGORIES:
            raise PatternError(f"unknown category {name!r}; expected one of {', '.join(CATEGORIES)}")
        return ToolPattern(raw, "category", name)
    if raw.startswith("effect:"):
        from host.gatekeeper.facts.consequence import EFFECTS

        name = raw[len("effect:"):]
        if name not in EFFECTS:
            raise PatternError(f"unknown effect {name!r}; expected one of {', '.join(EFFECTS)}")
        return ToolPattern(raw, "effect", name)
    if raw.endswith("*"):
        prefix = raw[:-1]
        if not _TOOL_NAME.fullmatch(prefix):
            raise PatternError(f"{text!r}: a prefix pattern is a tool-name prefix followed by one `*`")
        return ToolPattern(raw, "prefix", prefix)
    if not _TOOL_NAME.fullmatch(raw):
        raise PatternError(f"{text!r} is not a tool name (no spaces, control characters or `*`)")
    name = ALIASES.get(raw, raw)
    return ToolPattern(name, "exact", name)
