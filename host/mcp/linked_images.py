"""Links to images in a tool's answer (a screenshot a server saved as a resource), read and put
after the link as image blocks, so that the card and a model that takes images see them."""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable

# At most this many links of one answer are read.
MAX_LINKED_IMAGES = 4
_IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                   ".webp": "image/webp"}


async def with_linked_images(answer: dict[str, Any], read: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    """`answer` (JSON form) with each link to an image read with `read(uri)` (the server's
    `resources/read`) and put after the link as an image block with the link's annotations; a
    link that cannot be read stays a link."""
    content = answer.get("content")
    if not isinstance(content, list):
        return answer
    links = [i for i, block in enumerate(content) if isinstance(block, dict) and block.get("type") == "resource_link"
             and _image_type(block)][:MAX_LINKED_IMAGES]
    if not links:
        return answer
    results = await asyncio.gather(*(read(str(content[i].get("uri"))) for i in links), return_exceptions=True)
    out = list(content)
    for i, result in sorted(zip(links, results), reverse=True):
        image = _image_from(result, _image_type(content[i]))
        if image is not None:
            if isinstance(content[i].get("annotations"), dict):
                image["annotations"] = content[i]["annotations"]
            out.insert(i + 1, image)
    return {**answer, "content": out}


def _image_type(link: dict[str, Any]) -> str:
    """The image type a resource link names (its mimeType, else its URI's suffix), or ""."""
    mime = link.get("mimeType")
    if isinstance(mime, str) and mime.startswith("image/"):
        return mime
    uri = str(link.get("uri") or "").split("?", 1)[0].lower()
    return next((kind for suffix, kind in _IMAGE_SUFFIXES.items() if uri.endswith(suffix)), "")


def _image_from(result: Any, expected: str) -> dict[str, Any] | None:
    """An image block from a `resources/read` answer that holds an image blob, or None."""
    if isinstance(result, BaseException):
        return None
    for item in getattr(result, "contents", None) or ():
        blob = getattr(item, "blob", None)
        mime = getattr(item, "mime_type", None) or expected
        if isinstance(blob, str) and blob and isinstance(mime, str) and mime.startswith("image/"):
            return {"type": "image", "data": blob, "mimeType": mime}
    return None
