"""The browser session the host is serving: who connected and whether the handshake matched."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from protocol.constants import PROTOCOL_NAME, PROTOCOL_VERSION
from protocol.errors import ErrorCode, ErrorInfo
from protocol.messages import Hello
from protocol.schema import schema_hash


@dataclass
class BrowserSession:
    extension_id: str
    browser_session_id: str
    extension_version: str
    browser: str
    connected_at: float = field(default_factory=time.time)


def check_hello(hello: Hello) -> ErrorInfo | None:
    """None when the extension speaks our protocol and schema, else why not."""
    if hello.protocol != PROTOCOL_NAME or hello.protocol_version != PROTOCOL_VERSION:
        return ErrorInfo(
            code=ErrorCode.PROTOCOL_MISMATCH,
            message=f"extension speaks {hello.protocol} v{hello.protocol_version}, host speaks {PROTOCOL_NAME} v{PROTOCOL_VERSION}",
        )
    if hello.schema_hash != schema_hash():
        return ErrorInfo(
            code=ErrorCode.PROTOCOL_MISMATCH,
            message=f"schema {hello.schema_hash[:16]}… differs from the host's {schema_hash()[:16]}…; "
            "reload the extension after updating both sides",
        )
    return None
