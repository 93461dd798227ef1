"""Real design-system packages from npm, pinned, installed once into a cache folder and served
beside the pages that use them: the widgets a user meets on real sites, not our imitations."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# Web components that set their role and states through ElementInternals, and their versions.
PACKAGES = {"@fluentui/web-components": "3.1.3", "@material/web": "2.5.0"}
INSTALL_TIMEOUT_S = 300


class PackagesUnavailable(RuntimeError):
    """npm is missing, or the packages could not be fetched."""


def cache_folder() -> Path:
    """Where the pinned packages are installed (one folder per set of versions)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    pinned = " ".join(f"{name}@{version}" for name, version in sorted(PACKAGES.items()))
    return base / "tabwarden-tests" / f"design-systems-{hashlib.sha256(pinned.encode()).hexdigest()[:12]}"


def node_modules() -> Path:
    """The `node_modules` folder holding the pinned packages, installed when missing."""
    folder = cache_folder()
    done = folder / ".installed"
    if done.is_file():
        return folder / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        raise PackagesUnavailable("npm is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
    try:
        done_run = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", str(folder),
                                   *specs], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise PackagesUnavailable(f"npm install took over {INSTALL_TIMEOUT_S} s") from exc
    if done_run.returncode != 0:
        raise PackagesUnavailable(f"npm install failed: {done_run.stderr.strip()[-500:]}")
    done.write_text(" ".join(specs))
    return folder / "node_modules"


def served_root(pages: Path, into: Path) -> Path:
    """A folder to serve: `pages` as `l1/` (where the test drivers look) and the packages as
    `/node_modules/`."""
    into.mkdir(parents=True, exist_ok=True)
    (into / "l1").symlink_to(pages, target_is_directory=True)
    (into / "node_modules").symlink_to(node_modules(), target_is_directory=True)
    return into
