"""Where Tabwarden keeps its files.

platformdirs gives each OS its conventional folders. `TABWARDEN_HOME` puts every folder under
one root instead: tests and dedicated profiles use it so they never touch the user's real state.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "tabwarden"
HOME_ENV = "TABWARDEN_HOME"


@dataclass(frozen=True)
class Dirs:
    config: Path
    data: Path
    log: Path
    runtime: Path


def dirs() -> Dirs:
    """The folders for config, data, logs and runtime files (not created)."""
    root = os.environ.get(HOME_ENV)
    if root:
        base = Path(root)
        return Dirs(base / "config", base / "data", base / "log", base / "run")
    import platformdirs

    pd = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    if sys.platform.startswith("linux") and not os.environ.get("XDG_RUNTIME_DIR"):
        # platformdirs would fall back to a folder under $TMPDIR, and a browser may run with a
        # TMPDIR of its own: the host and its clients must agree on where the host publishes.
        runtime = Path(pd.user_data_dir) / "run"
    else:
        try:
            runtime = Path(pd.user_runtime_dir)
        except Exception:  # some platforms have no runtime dir
            runtime = Path(pd.user_data_dir) / "run"
    return Dirs(Path(pd.user_config_dir), Path(pd.user_data_dir), Path(pd.user_log_dir), runtime)


def ensure(path: Path, mode: int = 0o700) -> Path:
    """Create a private folder (and its parents) if missing; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path
