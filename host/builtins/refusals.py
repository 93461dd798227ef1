"""`BuiltinRefused`: the one root of the built-in tools' own failures (a fetch that produced no
page, a memory change or an artifact that was refused). The built-ins' service turns it into the
call's failure in one place."""

from __future__ import annotations

from typing import Any

from protocol.errors import TabwardenError


class BuiltinRefused(TabwardenError):
    """A built-in tool's refusal: a stable `code`, a readable `message`, and `details` for the
    result. `dispatched` says whether anything left the host before it (a fetch may have)."""

    dispatched = False

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = dict(details or {})
