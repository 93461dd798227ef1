"""JSON Schema of the wire contract and its hash.

The hash covers every message shape, the UI catalogue, the limits and the fixed constants, so
any change on either side that the other side would misread changes the hash, and the
handshake refuses the session instead of misbehaving later.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import msgspec

from protocol import constants as C
from protocol import control, ui
from protocol.errors import ErrorCode
from protocol.limits import BROWSER_LIMITS, UI_OP_LIMITS
from protocol.messages import EXTENSION_MESSAGE_TYPES, HOST_MESSAGE_TYPES, ExtensionMessage, HostMessage, tag_of


def error_codes() -> dict[str, str]:
    """Every ErrorCode constant, NAME → value."""
    return {k: v for k, v in vars(ErrorCode).items() if k.isupper()}


@functools.cache
def document() -> dict[str, Any]:
    """The full contract: JSON Schemas plus catalogue and limits."""
    (host, extension, ops, events, control_in, control_out), defs = msgspec.json.schema_components(
        [HostMessage, ExtensionMessage, ui.UiOpMessage, ui.UiEventMessage,
         control.ControlClientMessage, control.ControlServerMessage]
    )
    return {
        "protocol": C.PROTOCOL_NAME,
        "protocolVersion": C.PROTOCOL_VERSION,
        "hostName": C.HOST_NAME,
        "frames": {
            "maxHostFrame": C.MAX_HOST_FRAME,
            "maxBrowserFrame": C.MAX_BROWSER_FRAME,
            "chunkRawBytes": C.CHUNK_RAW_BYTES,
            "maxChunkedMessage": C.MAX_CHUNKED_MESSAGE,
            "maxPartialMessages": C.MAX_PARTIAL_MESSAGES,
        },
        "limits": {"browser": BROWSER_LIMITS.as_dict(), "uiOp": UI_OP_LIMITS.as_dict()},
        "errorCodes": error_codes(),
        "hostMessages": [tag_of(c) for c in HOST_MESSAGE_TYPES],
        "extensionMessages": [tag_of(c) for c in EXTENSION_MESSAGE_TYPES],
        "ui": {
            "protocol": ui.ENGINE_PROTOCOL,
            "ops": list(ui.OP_TYPES),
            "events": list(ui.EVENT_TYPES),
            "decisionKinds": list(ui.DECISION_KINDS),
            "stopReasons": list(ui.STOP_REASONS),
            "errorCodes": list(ui.ERROR_CODES),
            "permissionPolicies": list(ui.PERMISSION_POLICIES),
            "approvalFlags": list(ui.APPROVAL_FLAGS),
        },
        "schemas": {
            "host": host,
            "extension": extension,
            "uiOps": ops,
            "uiEvents": events,
            "controlClient": control_in,
            "controlServer": control_out,
        },
        "$defs": defs,
    }


def canonical_json(value: Any) -> bytes:
    """Deterministic JSON: sorted keys, no whitespace."""
    return msgspec.json.encode(value, order="sorted")


@functools.cache
def schema_hash() -> str:
    """SHA-256 (hex) of the canonical contract document."""
    return hashlib.sha256(canonical_json(document())).hexdigest()
