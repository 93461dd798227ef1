"""Exceptions a request to the extension can end with; each carries a stable code."""

from __future__ import annotations

from protocol.errors import ErrorCode, ErrorInfo, TabwardenError


class RequestError(TabwardenError):
    """A request did not produce a result. `info` is the structured reason."""

    def __init__(self, info: ErrorInfo):
        super().__init__(f"{info.code}: {info.message}")
        self.info = info

    @property
    def code(self) -> str:  # type: ignore[override]
        return self.info.code

    @property
    def message(self) -> str:  # type: ignore[override]
        return self.info.message


class RemoteError(RequestError):
    """The extension answered with a failure."""


class RequestTimeout(RequestError):
    def __init__(self, message: str):
        super().__init__(ErrorInfo(code=ErrorCode.TIMEOUT, message=message, retryable=True))


class Disconnected(RequestError):
    def __init__(self, message: str = "the browser link is closed"):
        super().__init__(ErrorInfo(code=ErrorCode.DISCONNECTED, message=message, retryable=True))


class Overloaded(RequestError):
    def __init__(self, message: str):
        super().__init__(ErrorInfo(code=ErrorCode.OVERLOADED, message=message, retryable=True))
