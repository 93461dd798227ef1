"""How the user-written settings files (engine.json, mcp.json, builtins.json, policy files edited
from pages) fail: a file that cannot be used, and an edit that is refused. One pair for every
file, so pages, the REPL and `doctor` report them the same way."""

from __future__ import annotations

from protocol.errors import TabwardenError


class ConfigFileError(TabwardenError, ValueError):
    """A settings file cannot be used; `problems` are `(path, message)` pairs such as
    `("$.servers.github.url", "must be an http:// or https:// URL with a host")`."""

    code = "invalid_settings"

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = problems
        self.message = "; ".join(f"{path}: {message}" for path, message in problems)
        super().__init__(f"{source}: {self.message}")


class EditRefused(TabwardenError):
    """A change to a settings file that cannot be made; nothing was written."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message
