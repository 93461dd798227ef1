"""A `tools/call` answer as the model reads it: text content joined, everything else named by
type and size (images, audio and blobs are not passed on), `structuredContent` as JSON when
there is no text. Works on the answer's JSON form, so it needs no SDK types."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

MAX_TEXT_CHARS = 200_000  # the engine clips further for the model; this bounds what is kept


@dataclass(frozen=True)
class CallResult:
    """What a call returned: `is_error` when the server said the tool failed."""

    text: str
    is_error: bool
    blocks: int


def _b64_size(data: Any) -> int:
    return len(data) * 3 // 4 if isinstance(data, str) else 0


def _block(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {_b64_size(block.get('data'))} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '?')} ({block.get('name', '')})]"
    if kind == "resource":
        resource = block.get("resource") or {}
        uri = resource.get("uri", "?")
        if isinstance(resource.get("text"), str):
            return f"[resource {uri}]\n{resource['text']}"
        return f"[resource {uri}, {resource.get('mimeType', '?')}, {_b64_size(resource.get('blob'))} bytes, not shown]"
    return f"[{kind or 'unknown'} content, {len(json.dumps(block, default=str))} bytes, not shown]"


def summarise(answer: Mapping[str, Any]) -> CallResult:
    """The text of a `CallToolResult` (JSON form, camelCase keys)."""
    content = answer.get("content") or []
    parts = [_block(b) for b in content if isinstance(b, Mapping)]
    text = "\n".join(p for p in parts if p)
    structured = answer.get("structuredContent")
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, sort_keys=True)
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + f"\n[cut at {MAX_TEXT_CHARS} characters]"
    return CallResult(text=text or "(no content)", is_error=bool(answer.get("isError")), blocks=len(parts))
