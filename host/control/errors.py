"""`ControlError`: how a control method fails, apart from the server that reports it, so the
methods and their parameter decoding need not import the server."""

from __future__ import annotations

from typing import Any

from protocol.errors import ErrorInfo, TabwardenError


class ControlError(TabwardenError):
    """A method's structured failure."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.info = ErrorInfo(code=code, message=message, details=details)
        self.code, self.message = code, message
