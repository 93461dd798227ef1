"""Where a value from outside (a page, a site, a server, the browser) reached the model outside
a fence without being quoted as data, in the requests a fake model recorded.

Every text of a request's conversation (the system prompt and every message part, tool results
included; not the tool declarations) is read as the model reads it: each fenced block
(`<<<web_content_N ...>>>` to `<<<end_web_content_N>>>`, same nonce) is data and is skipped;
what is left is Tabwarden's own words, where an outside value may appear only inside a JSON
string literal (`host.tools.quoting.quoted`) and no invisible or line-breaking character may
appear at all (a line break or a tab aside).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, Iterator

FENCED = re.compile(r"<<<web_content_([0-9a-f]{16}) [^\n]*>>>\n.*?\n<<<end_web_content_\1>>>", re.DOTALL)
LITERAL = re.compile(r'"(?:[^"\\\n]|\\.)*"')
INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"})
ALLOWED_CONTROLS = frozenset("\n\t")


def texts(body: dict[str, Any]) -> Iterator[str]:
    """Every string of a request's system prompt and messages (either API's shape)."""
    yield from _strings(body.get("system"))
    yield from _strings(body.get("messages"))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def outside_fences(text: str) -> str:
    """`text` without its fenced blocks."""
    return FENCED.sub("\n", text)


def _unquoted(text: str) -> str:
    def drop(found: re.Match[str]) -> str:
        try:
            json.loads(found.group(0))
        except ValueError:
            return found.group(0)  # not a JSON string: it quotes nothing
        return '""'

    return LITERAL.sub(drop, text)


def leaks(bodies: list[dict[str, Any]], marker: str) -> list[str]:
    """Each place where `marker` (any case) stands in our own words unquoted, or an invisible
    character does; empty when there is none."""
    found = []
    wanted = marker.lower()
    for body in bodies:
        for text in texts(body):
            ours = outside_fences(text)
            hidden = sorted({f"U+{ord(c):04X}" for c in ours
                             if c not in ALLOWED_CONTROLS and unicodedata.category(c) in INVISIBLE})
            if hidden:
                found.append(f"invisible characters {hidden} outside a fence in {ours[:300]!r}")
            bare = _unquoted(ours)
            at = bare.lower().find(wanted)
            if at >= 0:
                found.append(f"{marker} unquoted outside a fence: ...{bare[max(0, at - 160):at + 80]!r}...")
    return found


def mentions(bodies: list[dict[str, Any]], marker: str) -> bool:
    """Whether the model was shown `marker` at all (fenced, quoted or not): a leak test whose
    marker never reached the model would prove nothing."""
    return any(marker.lower() in text.lower() for body in bodies for text in texts(body))
