"""Exceptions the gatekeeper raises, each naming what was wrong and where."""

from __future__ import annotations

from protocol.errors import TabwardenError


class GatekeeperError(TabwardenError):
    """Base class of the gatekeeper's own errors."""


class InvalidInput(GatekeeperError, ValueError):
    """A rule, pattern, policy file or case that cannot be used.

    `code` is a stable machine-readable string, `path` points inside the input (`$.rules[2].args.path`)
    and `source` names the file when there is one.
    """

    def __init__(self, code: str, message: str, path: str = "$", source: str | None = None) -> None:
        self.code = code
        self.message = message
        self.path = path
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{message} - at `{path}`")

    def to_dict(self) -> dict[str, str]:
        """A JSON-ready form: code, message, path (and source when known)."""
        out = {"code": self.code, "message": self.message, "path": self.path}
        if self.source:
            out["source"] = self.source
        return out


class GatekeeperUnavailable(GatekeeperError, RuntimeError):
    """Permission state could not be loaded or saved: nothing may run until it is repaired.

    Callers must treat this like a denial (fail closed), never retry the tool around it. Its code
    is `storage_unavailable` when the database failed (that heals by itself), else
    `gatekeeper_unavailable`.
    """

    @property
    def code(self) -> str:  # type: ignore[override]
        return "storage_unavailable" if is_storage_error(self) else "gatekeeper_unavailable"

    @property
    def message(self) -> str:  # type: ignore[override]
        return str(self)


def is_storage_error(exc: BaseException | None) -> bool:
    """Whether `exc` (or what caused it) is a failure of the database, which may pass."""
    import sqlite3

    from host.store.db import StoreError

    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, (StoreError, sqlite3.Error)):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False
