"""Fences around untrusted content (page text, extracted Markdown, fetched pages, MCP results).

    <<<web_content_<16 hex> origin="https://shop.example" tool="read_page">>>
    ...content...
    <<<end_web_content_<same 16 hex>>>>

Only a closing marker with the same nonce ends a block, and the kernel prompt tells the model
that everything inside is data. Before wrapping, anything in the content that looks like a fence
marker (any nonce, any case, with or without `end_`, whatever follows) has its `<<<` turned into
`‹‹‹`, so a page cannot close the block early or open a fake one.

Nonces: live content gets 8 random bytes. Persisted nodes get a nonce derived from the node id
and the block's ordinal with a keyed hash (a per-install secret), so a rebuilt prompt is
byte-identical (provider prefix caches keep working) while a page that learns a node id still
cannot predict the boundary.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from protocol.errors import TabwardenError

_NONCE = re.compile(r"^[0-9a-f]{16}$")
# `<<<`, optional spaces or slash, optional `end_`, then `web_content`: the opening chevrons are
# what a forged marker needs, so they are what gets defanged (no reliance on a closing `>>>`).
_MARKER = re.compile(r"<<<(?=[\s/]*(?:end_)?web_content)", re.IGNORECASE)
_LOOSE_CLOSE = re.compile(r"(web_content[^<>\n]{0,200}?)>>>", re.IGNORECASE)


class FenceError(TabwardenError, ValueError):
    """A nonce that is not 16 lowercase hex characters."""

    code = "invalid_nonce"


def live_nonce() -> str:
    """A fresh random nonce for content that is not persisted."""
    return secrets.token_hex(8)


def stable_nonce(key: bytes, node_id: str, ordinal: int = 0) -> str:
    """The nonce of block `ordinal` of persisted node `node_id` (same inputs, same nonce)."""
    return hmac.new(key, f"{node_id}:{ordinal}".encode(), hashlib.sha256).hexdigest()[:16]


def defang(text: str) -> str:
    """Neutralise every fence-like marker in `text`."""
    text = _MARKER.sub("‹‹‹", text)
    return _LOOSE_CLOSE.sub(lambda m: m.group(1) + "›››", text)


def _attr(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ").replace(">", "›").replace("<", "‹")


def fence(content: str, *, nonce: str, origin: str, tool: str) -> str:
    """Wrap untrusted `content` in a fence with `nonce`."""
    if not _NONCE.match(nonce):
        raise FenceError(f"fence nonce must be 16 lowercase hex characters, got {nonce!r}")
    return (f'<<<web_content_{nonce} origin="{_attr(origin)}" tool="{_attr(tool)}">>>\n'
            f"{defang(content)}\n<<<end_web_content_{nonce}>>>")
