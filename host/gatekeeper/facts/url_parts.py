"""URLs inside a text, taken apart for the payload checks: the password of the userinfo, the
keys and values of the query and of a `key=value` fragment, and the path segments, each
percent-decoded on its own (so an encoded `&` or `=` cannot merge or split parts)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

from host.gatekeeper.facts.normalize import percent_decode

# A scheme-led URL, or a bare query string (`?password=x` typed somewhere).
_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,15}://[^\s\"'<>]+|(?<![^\s\"'(])\?[^\s\"'<>]*=[^\s\"'<>]*")
MAX_URLS = 32


@dataclass(slots=True)
class UrlParts:
    """What the URLs of one text carry."""

    keys: list[str] = field(default_factory=list)  # query and fragment keys
    texts: list[str] = field(default_factory=list)  # values, path segments, userinfo
    userinfo_password: bool = False  # `user:secret@host`


def url_parts(text: str) -> UrlParts | None:
    """The parts of every URL in `text` (None when it holds none)."""
    if "://" not in text and "?" not in text:
        return None
    found: UrlParts | None = None
    for index, match in enumerate(_URL.finditer(text)):
        if index >= MAX_URLS:
            break
        found = found or UrlParts()
        _add(match.group(), found)
    return found


def _add(url: str, into: UrlParts) -> None:
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        into.texts.append(url)
        return
    if "@" in netloc:
        userinfo = netloc.rpartition("@")[0]
        user, colon, password = userinfo.partition(":")
        into.texts.append(percent_decode(user))
        if colon and password:
            into.userinfo_password = True
    for segment in parts.path.split("/"):
        if segment:
            into.texts.append(percent_decode(segment))
    for section in (parts.query, parts.fragment):
        if not section:
            continue
        if "=" not in section:
            into.texts.append(percent_decode(section))
            continue
        for key, value in _pairs(section):
            into.keys.append(key)
            if value:
                into.texts.append(value)


def _pairs(section: str) -> list[tuple[str, str]]:
    # parse_qsl decodes once; a value encoded several times is decoded the rest of the way.
    pairs = parse_qsl(section.replace(";", "&"), keep_blank_values=True, errors="replace")
    return [(percent_decode(key), percent_decode(value)) for key, value in pairs]
