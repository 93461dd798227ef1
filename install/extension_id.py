"""The extension id, derived from the public key fixed in `extension/manifest.json`.

Chrome's id is the first 32 hex digits of SHA-256 over the DER public key, with the digits
0-9a-f written as the letters a-p.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from protocol.bundle import extension_dir as bundled_extension_dir


def id_from_key(key_b64: str) -> str:
    """The extension id for a base64 DER public key."""
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()[:32]
    return "".join(chr(ord("a") + int(c, 16)) for c in digest)


def manifest_key(extension_dir: Path | None = None) -> str:
    """The `key` field of the extension's manifest (default: the bundled extension)."""
    folder = extension_dir if extension_dir is not None else bundled_extension_dir()
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    return manifest["key"]


def default_extension_id(extension_dir: Path | None = None) -> str:
    """The id Chrome gives our unpacked extension."""
    return id_from_key(manifest_key(extension_dir))


def origin_of(extension_id: str) -> str:
    """The `allowed_origins` entry for an extension id."""
    return f"chrome-extension://{extension_id}/"
