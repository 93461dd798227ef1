"""Values from outside inside Tabwarden's own words.

The rule: whatever the model reads outside a fence is Tabwarden's own words. When such a text
has to name a value that a page, a site, a server or the extension chose (a URL, a title, an
origin, a file name, a schema's key, a message the browser or a server reported), the value
appears only as `quoted(value)`: one JSON string, cut to a length, with every control, format
(bidi, zero-width, tag), line-separator, private-use and unassigned character escaped and any
fence marker defanged. It cannot end its quotes early, start a line of its own, reorder the words
around it or pass for a fence, and the kernel prompt tells the model that such a value is data.

A text whose body is content from outside (a page's text, a fetched document, an MCP server's
answer, a tab list) is not quoted piece by piece: it is stored as an untrusted result and fenced
whole (`host.tools.fence`), and nothing outside the fence may carry outside values unquoted.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from host.tools.fence import defang

DEFAULT_LIMIT = 300
CUT = "…"
# Cc controls (C0, DEL, C1), Cf formats (bidi overrides and isolates, zero-width characters,
# tag characters), Zl/Zp separators, private use, lone surrogates, unassigned code points.
_ESCAPED = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
# What JSON escapes in printable ASCII, and what fence markers are made of.
_NOT_PLAIN = frozenset('"\\<>')


def _escape(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:  # JSON spells these as a surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def quoted(value: Any, limit: int = DEFAULT_LIMIT) -> str:
    """`value` as a JSON string literal safe to embed in Tabwarden's own words: at most `limit`
    characters of it (then `…`), invisible and line-breaking characters escaped, fence markers
    defanged. Its output always parses with `json.loads`."""
    text = str(value)
    if text.isascii() and text.isprintable() and _NOT_PLAIN.isdisjoint(text):
        # Most origins and URLs: no fence marker to defang, nothing JSON or we would escape.
        return '"' + (text[:limit] + CUT if len(text) > limit else text) + '"'
    text = defang(text)
    if len(text) > limit:
        text = text[:limit] + CUT
    inner = json.dumps(text, ensure_ascii=False)[1:-1]  # escapes quotes, backslashes and C0
    if inner.isascii() and "\x7f" not in inner:  # most origins and URLs: nothing left to escape
        return '"' + inner + '"'
    return '"' + "".join(_escape(c) if unicodedata.category(c) in _ESCAPED else c for c in inner) + '"'
