"""Where Tabwarden keeps its files.

platformdirs gives each OS its conventional folders. `TABWARDEN_HOME` puts every folder under
one root instead: tests and dedicated profiles use it so they never touch the user's real state.
"""

from __future__ import annotations

import os
import warnings
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
    try:
        # Without XDG_RUNTIME_DIR platformdirs falls back to a private temp folder and warns;
        # the fallback is fine for us and the warning would only reach the browser's log.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runtime = Path(pd.user_runtime_dir)
    except Exception:  # some platforms have no runtime dir
        runtime = Path(pd.user_data_dir) / "run"
    return Dirs(Path(pd.user_config_dir), Path(pd.user_data_dir), Path(pd.user_log_dir), runtime)


def ensure(path: Path, mode: int = 0o700) -> Path:
    """Create a private folder (and its parents) if missing; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path
