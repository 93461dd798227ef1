"""Which installation of Tabwarden a registration runs.

Each installation (a checkout's venv, a pipx venv, any dedicated venv) gets a launcher of its own,
in a folder named by a stable id of the environment its interpreter belongs to (the launcher runs
that interpreter and nothing else). So another
installation never silently re-points the browsers this one registered, and deleting one breaks
only the registrations that ran it. A small record beside each launcher says whose it is, for the
doctor and for the warning when a registration moves from one installation to another.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shlex
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

RECORD_NAME = "installation.json"
ID_LENGTH = 12
# The interpreter line of a launcher (POSIX sh or Windows cmd), as `launcher.render` writes it.
_PYTHON_LINE = re.compile(r"""^(?:exec (?P<sh>'(?:[^']|'\\'')*')|"(?P<cmd>[^"]+)") -I -m host host""", re.M)


@dataclass(frozen=True)
class Installation:
    id: str
    python: str  # the interpreter its launcher runs
    location: str  # the folder its `host` package is imported from ("" when not known)
    version: str = ""

    def describe(self) -> str:
        """One line naming the installation for people."""
        where = self.location or "an installation of unknown location"
        return f"{where} (python {self.python}" + (f", tabwarden {self.version})" if self.version else ")")

    def is_present(self) -> bool:
        """Whether its interpreter still exists (a deleted checkout or venv leaves it dangling)."""
        return Path(self.python).is_file()

    def install_command(self, browser: str, user_data_dir: str | None) -> str:
        """The command, run with this installation's interpreter, that registers it again."""
        cmd = f"{_quote(self.python)} -m host install --browser {browser}"
        if user_data_dir:
            cmd += f" --user-data-dir {_quote(user_data_dir)}"
        return cmd


def installation_id(python: str) -> str:
    """A stable id for the installation whose interpreter is `python`: a hash of its environment's
    folder, so `bin/python` and `bin/python3` of one venv are one installation. The path is not
    resolved: a venv's interpreter links to the base one, which many venvs share."""
    folder = os.path.dirname(os.path.abspath(python))
    if os.path.basename(folder).lower() in ("bin", "scripts"):  # a venv's (or prefix's) bin/ or Scripts\
        folder = os.path.dirname(folder)
    return hashlib.sha256(os.path.normcase(folder).encode("utf-8")).hexdigest()[:ID_LENGTH]


def current(python: str | None = None) -> Installation:
    """The installation this process belongs to (`python` overrides the interpreter, for tests)."""
    from host import __version__

    python = os.path.abspath(python or sys.executable)
    spec = importlib.util.find_spec("host")
    folders = list(spec.submodule_search_locations or []) if spec else []
    location = str(Path(folders[0]).resolve().parent) if folders else ""
    return Installation(installation_id(python), python, location, __version__)


def write_record(folder: Path, installation: Installation) -> Path:
    """Write the record beside a launcher; returns its path."""
    path = folder / RECORD_NAME
    path.write_text(json.dumps(asdict(installation), indent=2, sort_keys=True), encoding="utf-8")
    return path


def of_launcher(launcher_path: Path) -> Installation | None:
    """The installation a launcher runs: from the record beside it, else (a launcher written
    before records existed) from its interpreter line; None when it is not one of ours."""
    try:
        data = json.loads((launcher_path.parent / RECORD_NAME).read_text(encoding="utf-8"))
        if isinstance(data, dict) and all(isinstance(data.get(k), str) for k in ("id", "python", "location")):
            return Installation(data["id"], data["python"], data["location"], str(data.get("version", "")))
    except (OSError, ValueError):
        pass
    try:
        match = _PYTHON_LINE.search(launcher_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if match is None:
        return None
    python = shlex.split(match["sh"])[0] if match["sh"] else match["cmd"]
    return Installation(installation_id(python), python, "")


def _quote(text: str) -> str:
    if sys.platform == "win32":
        return f'"{text}"' if " " in text else text
    return shlex.quote(text)
