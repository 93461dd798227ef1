"""Tabwarden's wire contract between the native host and the browser extension.

Everything that crosses the native-messaging port is one of the msgspec Structs in
`protocol.messages` (and the UI catalogue in `protocol.ui`), framed by `protocol.framing`.
The JSON Schema and its hash (`protocol.schema`) are what both sides compare at hello time;
`extension/generated/protocol.js` is generated from the same source (`protocol.generate`).
The messages between the extension's service worker and its content scripts, which never reach
the host, are declared in `protocol.content` and generated beside it.
"""

from protocol.constants import (
    HOST_NAME,
    MAX_BROWSER_FRAME,
    MAX_HOST_FRAME,
    PROTOCOL_NAME,
    PROTOCOL_VERSION,
)
from protocol.errors import ErrorCode, ErrorInfo, ProtocolError

__all__ = [
    "HOST_NAME",
    "MAX_BROWSER_FRAME",
    "MAX_HOST_FRAME",
    "PROTOCOL_NAME",
    "PROTOCOL_VERSION",
    "ErrorCode",
    "ErrorInfo",
    "ProtocolError",
]
