"""History and tab completion for the REPL, when the platform has `readline`.

Completion knows Python names and attributes (through rlcompleter) and, inside the first string
argument of `tw.run(...)`, `tw.explain(...)`, the rule helpers and `tw.call(...)`, the host's
tool and control-method names.
"""

from __future__ import annotations

import os
import re
import rlcompleter
from pathlib import Path
from typing import Callable, Iterable

HISTORY_LENGTH = 5000
_TOOL_ARG = re.compile(r"tw\.(run|explain|allow|ask|deny|add_rule)\(\s*['\"]$")
_METHOD_ARG = re.compile(r"tw\.call\(\s*['\"]$")
# A line that may hold a secret typed in clear: never written to the history file.
_SECRET_LINE = re.compile(r"token|api_?key|password|secret|bearer", re.IGNORECASE)


class Completer(rlcompleter.Completer):
    """Python completion plus host names inside the right string arguments."""

    def __init__(self, namespace: dict, tools: Iterable[str] = (), methods: Iterable[str] = (),
                 line_before: Callable[[], str] = lambda: ""):
        super().__init__(namespace)
        self.tools = sorted(tools)
        self.methods = sorted(methods)
        self._line_before = line_before
        self._matches: list[str] = []

    def complete(self, text: str, state: int) -> str | None:
        if state == 0:
            names = self._names_for(self._line_before())
            if names is not None:
                self._matches = [n for n in names if n.startswith(text)]
            else:
                self._matches = []
                while True:
                    found = super().complete(text, len(self._matches))
                    if found is None:
                        break
                    self._matches.append(found)
        return self._matches[state] if state < len(self._matches) else None

    def _names_for(self, before: str) -> list[str] | None:
        if _TOOL_ARG.search(before):
            return self.tools
        if _METHOD_ARG.search(before):
            return self.methods
        return None


def setup(completer: Completer, history_path: Path | None) -> Callable[[], None]:
    """Turn on completion and history; returns the function that saves the history."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input
        return lambda: None
    completer._line_before = lambda: readline.get_line_buffer()[:readline.get_begidx()]
    readline.set_completer(completer.complete)
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    if history_path is None:
        return lambda: None
    readline.set_history_length(HISTORY_LENGTH)
    try:
        readline.read_history_file(str(history_path))
    except OSError:
        pass

    def save() -> None:
        # Lines that carry a secret (a token, a key, a password) are not kept, and the file is the
        # user's alone either way.
        for index in range(readline.get_current_history_length(), 0, -1):
            line = readline.get_history_item(index) or ""
            if _SECRET_LINE.search(line):
                readline.remove_history_item(index - 1)
        try:
            history_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            readline.write_history_file(str(history_path))
            os.chmod(history_path, 0o600)
        except OSError:
            pass

    return save
