"""A `tools/call` answer split between the model and the user. Works on the answer's JSON form,
so it needs no SDK types.

- Text content is joined for the model. `structuredContent` is used when there is no text.
- Content annotated for the user only (`audience` without "assistant") is not sent to the model:
  it goes to the tool card (`for_user`). When the text is over its bound, the blocks of lowest
  `priority` are left out first (and the model is told how many).
- Images are shown to the user on the card (bounded in number and size, common raster types
  only) and kept in the result's details, from where the engine sends them to a model that takes
  images (see host/engine/result_images.py). Audio of common types is played to the user on the
  card (bounded likewise) and named for the model with its type and size; other binary blobs
  are named, not shown.
- Embedded resources with `text` are included; a `blob` whose type is text is decoded and
  included too.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

MAX_TEXT_CHARS = 200_000  # the engine clips further for the model; this bounds what is kept
MAX_USER_TEXT_CHARS = 20_000
MAX_IMAGES = 4
MAX_IMAGE_B64 = 400_000  # per image, base64 characters (about 300 KB)
# All images of one answer: the event carrying them to the side panel must stay well under the
# 1 MB a native message may hold.
MAX_IMAGES_B64 = 512_000
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/wave", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/webm",
                         "audio/mp4", "audio/aac", "audio/flac"})
MAX_AUDIO = 2
# Audio shares the native message with the images: together they stay under about 900 KB.
MAX_AUDIO_B64 = 380_000
TEXT_BLOB_TYPES = ("text/", "application/json", "application/xml", "application/yaml", "application/javascript")
MAX_TEXT_BLOB_B64 = 400_000


@dataclass(frozen=True)
class CallResult:
    """What a call returned: `text` for the model, `for_user` and `images` for the card only;
    `is_error` when the server said the tool failed."""

    text: str
    is_error: bool
    blocks: int
    for_user: str = ""
    images: list[dict[str, str]] = field(default_factory=list)
    audio: list[dict[str, str]] = field(default_factory=list)


@dataclass
class _Block:
    text: str
    priority: float
    order: int


def _b64_size(data: Any) -> int:
    return len(data) * 3 // 4 - (len(data) - len(data.rstrip("="))) if isinstance(data, str) else 0


def _audience(block: Mapping[str, Any]) -> set[str] | None:
    annotations = block.get("annotations")
    audience = annotations.get("audience") if isinstance(annotations, Mapping) else None
    if not isinstance(audience, list):
        return None
    return {a for a in audience if isinstance(a, str)}


def _priority(block: Mapping[str, Any]) -> float:
    annotations = block.get("annotations")
    value = annotations.get("priority") if isinstance(annotations, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1 else 0.5


def _text_blob(resource: Mapping[str, Any]) -> str | None:
    mime = str(resource.get("mimeType") or "")
    blob = resource.get("blob")
    if not mime.startswith(TEXT_BLOB_TYPES) or not isinstance(blob, str) or len(blob) > MAX_TEXT_BLOB_B64:
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _image(block: Mapping[str, Any], types: frozenset[str] = IMAGE_TYPES, limit: int = MAX_IMAGE_B64) -> dict[str, str] | None:
    """The block's media as {mimeType, data} when its type is one of `types` and its data is
    checked base64 within `limit` characters; else None."""
    mime, data = block.get("mimeType"), block.get("data")
    if mime not in types or not isinstance(data, str) or not data or len(data) > limit:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return {"mimeType": mime, "data": data}


def _describe(block: Mapping[str, Any], shown: bool) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        # Whether the model sees the image too depends on its connection: the engine says so.
        where = ("played to the user" if kind == "audio" else "shown to the user") if shown else "not shown"
        return f"[{kind} {block.get('mimeType', '?')}, {_b64_size(block.get('data'))} bytes, {where}]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri', '?')} ({block.get('name', '')})]"
    if kind == "resource":
        resource = block.get("resource") if isinstance(block.get("resource"), Mapping) else {}
        uri = resource.get("uri", "?")
        if isinstance(resource.get("text"), str):
            return f"[resource {uri}]\n{resource['text']}"
        decoded = _text_blob(resource)
        if decoded is not None:
            return f"[resource {uri}, {resource.get('mimeType')}]\n{decoded}"
        return f"[resource {uri}, {resource.get('mimeType', '?')}, {_b64_size(resource.get('blob'))} bytes, not shown]"
    return f"[{kind or 'unknown'} content, {len(json.dumps(block, default=str))} bytes, not shown]"


def _fit(blocks: list[_Block], limit: int) -> tuple[str, int]:
    """The blocks' text in their order, leaving out the lowest-priority ones while over `limit`."""
    kept = list(blocks)
    dropped = 0
    while len(kept) > 1 and sum(len(b.text) + 1 for b in kept) > limit:
        lowest = min(kept, key=lambda b: (b.priority, -b.order))
        kept.remove(lowest)
        dropped += 1
    return "\n".join(b.text for b in kept if b.text), dropped


def summarise(answer: Mapping[str, Any]) -> CallResult:
    """The model's and the user's parts of a `CallToolResult` (JSON form, camelCase keys)."""
    content = [b for b in (answer.get("content") or []) if isinstance(b, Mapping)]
    model: list[_Block] = []
    user: list[str] = []
    images: list[dict[str, str]] = []
    audio: list[dict[str, str]] = []
    for order, block in enumerate(content):
        audience = _audience(block)
        to_user = audience is None or "user" in audience
        to_model = audience is None or "assistant" in audience
        image = _image(block) if block.get("type") == "image" and to_user and len(images) < MAX_IMAGES else None
        if image is not None and sum(len(i["data"]) for i in images) + len(image["data"]) > MAX_IMAGES_B64:
            image = None
        if image is not None:
            images.append(image)
        sound = _image(block, AUDIO_TYPES, MAX_AUDIO_B64) if block.get("type") == "audio" and to_user \
            and len(audio) < MAX_AUDIO else None
        if sound is not None and sum(len(a["data"]) for a in audio) + len(sound["data"]) > MAX_AUDIO_B64:
            sound = None
        if sound is not None:
            audio.append(sound)
        media = image if image is not None else sound
        text = _describe(block, shown=media is not None)
        if to_model:
            model.append(_Block(text, _priority(block), order))
        elif to_user and media is None:
            user.append(text)
    text, dropped = _fit(model, MAX_TEXT_CHARS)
    structured = answer.get("structuredContent")
    if not text and structured is not None:
        text = json.dumps(structured, ensure_ascii=False, sort_keys=True)
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + f"\n[cut at {MAX_TEXT_CHARS} characters]"
    if dropped:
        text += f"\n[{dropped} lower-priority part(s) left out to fit]"
    if not text and (user or images or audio):
        text = "(the server's answer was for the user only; it is shown to them)"
    for_user = "\n".join(user)[:MAX_USER_TEXT_CHARS]
    return CallResult(text=text or "(no content)", is_error=bool(answer.get("isError")), blocks=len(content),
                      for_user=for_user, images=images, audio=audio)
