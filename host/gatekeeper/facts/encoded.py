"""Encoded tokens in a text: what base64 (standard or URL-safe) and hex tokens decode to, so that
the payload checks see a card number or a key however it was wrapped.

Only decodings that read as text are kept (random identifiers and hashes decode to bytes that
do not), except for a DER structure that is a private key, which is reported as such.
"""

from __future__ import annotations

import base64
import binascii
import re

# Long enough to hold 12 encoded bytes; shorter tokens are ordinary words and ids.
_BASE64_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{16,}={0,2}")
# Hex bytes, run together or as a dump shows them (`34 31`, `34:31`, `\x34\x31`), `0x` allowed.
_HEX_TOKEN = re.compile(r"(?<![0-9A-Za-z])(?:0x|\\x)?[0-9a-fA-F]{2}(?:(?:[ :\-]|\\x)?[0-9a-fA-F]{2}){11,}(?![0-9A-Za-z])")
_HEX_NOISE = re.compile(r"^0x|\\x|[ :\-]")
MAX_TOKENS = 64  # per text: a page of base64 is no reason to spend seconds
MAX_TOKEN_LENGTH = 16384
_PRINTABLE_SHARE = 0.9


def decoded_texts(text: str) -> list[str]:
    """The texts that the base64 and hex tokens of `text` decode to (readable ones only)."""
    out: list[str] = []
    seen = 0
    for match in _HEX_TOKEN.finditer(text):
        seen += 1
        if seen > MAX_TOKENS:
            return out
        readable = _readable(_from_hex(match.group()))
        if readable is not None:
            out.append(readable)
    for match in _BASE64_TOKEN.finditer(text):
        seen += 1
        if seen > MAX_TOKENS:
            break
        token = match.group()
        # A character or three glued in front would shift every later one: try those cuts too.
        for cut in range(4 if len(token) >= 20 else 1):
            readable = _readable(from_base64(token[cut:]))
            if readable is not None:
                out.append(readable)
                break
    return out


def decoded_private_key(text: str) -> bool:
    """True when a base64 token of `text` decodes to a private key (PKCS#1/#8, SEC 1 DER) or to an
    OpenSSH private key body."""
    if "b3BlbnNzaC1rZXktdjE" in text:  # "openssh-key-v1" encoded: the private key format's magic
        return True
    for index, match in enumerate(_BASE64_TOKEN.finditer(text)):
        if index >= MAX_TOKENS:
            break
        token = match.group()
        if len(token) >= 64 and _is_private_der(from_base64(token)):
            return True
    return False


def from_base64(token: str) -> bytes | None:
    """The bytes of a standard or URL-safe base64 token (padding optional), else None."""
    if len(token) > MAX_TOKEN_LENGTH:
        token = token[:MAX_TOKEN_LENGTH - MAX_TOKEN_LENGTH % 4]
    body = token.rstrip("=")
    if len(body) % 4 == 1:
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if "-" in body or "_" in body:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None


def _from_hex(token: str) -> bytes | None:
    try:
        return bytes.fromhex(_HEX_NOISE.sub("", token[:MAX_TOKEN_LENGTH]))
    except ValueError:
        return None


def _readable(data: bytes | None) -> str | None:
    if not data or len(data) < 8:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(1 for ch in text if ch.isprintable() or ch in "\n\r\t")
    return text if printable >= _PRINTABLE_SHARE * len(text) else None


def _is_private_der(data: bytes | None) -> bool:
    # A private key structure is a SEQUENCE whose first member is the INTEGER version 0 or 1;
    # public keys and certificates open with a nested SEQUENCE instead.
    if not data or len(data) < 48 or data[0] != 0x30:
        return False
    head = data[1]
    offset = 2 if head < 0x80 else 2 + (head & 0x7F)
    return data[offset:offset + 3] in (b"\x02\x01\x00", b"\x02\x01\x01")
