"""Structured errors: a stable machine-readable code plus readable text."""

from __future__ import annotations

from typing import Any

import msgspec


class ErrorCode:
    """Stable error codes used on the wire and in logs."""

    # framing and decoding
    BAD_FRAME = "bad_frame"  # not UTF-8 JSON, or not an object
    FRAME_TOO_LARGE = "frame_too_large"
    CORRUPT_STREAM = "corrupt_stream"  # length prefix cannot be trusted; the link closes
    UNKNOWN_TYPE = "unknown_type"
    INVALID_MESSAGE = "invalid_message"  # known type, bad field
    TOO_DEEP = "too_deep"
    STRING_TOO_LONG = "string_too_long"
    ARRAY_TOO_LONG = "array_too_long"
    TOO_MANY_KEYS = "too_many_keys"
    TOO_MANY_NODES = "too_many_nodes"
    CHUNK_ERROR = "chunk_error"
    # session
    PROTOCOL_MISMATCH = "protocol_mismatch"
    NOT_READY = "not_ready"  # a request before the handshake
    FORBIDDEN_ORIGIN = "forbidden_origin"
    # requests
    OVERLOADED = "overloaded"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DISCONNECTED = "disconnected"
    UNSUPPORTED = "unsupported"
    NOT_FOUND = "not_found"
    INTERNAL = "internal"


class ErrorInfo(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True, kw_only=True):
    """The error object carried by failures and protocol_error frames."""

    code: str
    message: str
    retryable: bool = False
    # Where in a multi-step action the failure happened (resolve, precheck, execute, ...).
    phase: str | None = None
    details: dict[str, Any] | None = None


class ProtocolError(Exception):
    """A frame or message that violates the contract; carries the request id when known."""

    def __init__(self, code: str, message: str, request_id: int | None = None, *, fatal: bool = False):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.request_id = request_id
        # True when the byte stream can no longer be trusted and the link must close.
        self.fatal = fatal

    def info(self) -> ErrorInfo:
        """The wire form of this error."""
        return ErrorInfo(code=self.code, message=self.message)
