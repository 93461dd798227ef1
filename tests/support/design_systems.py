"""Real design-system packages from npm, pinned, installed once into a cache folder and served
beside the pages that use them: the widgets a user meets on real sites, not our imitations."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

# Web components that set their role and states through ElementInternals; React component
# libraries, with esbuild to bundle the React pages as a site's build does; and their versions.
PACKAGES = {
    "@fluentui/web-components": "3.1.3", "@material/web": "2.5.0",
    "react": "18.3.1", "react-dom": "18.3.1", "@mui/material": "5.16.7", "@emotion/react": "11.13.3",
    "@emotion/styled": "11.13.0", "@radix-ui/react-checkbox": "1.1.1", "@radix-ui/react-label": "2.1.0",
    "@radix-ui/react-radio-group": "1.2.0", "@radix-ui/react-slider": "1.2.0", "@radix-ui/react-switch": "1.1.0",
    "@radix-ui/react-tabs": "1.1.0", "esbuild": "0.24.0",
}
INSTALL_TIMEOUT_S = 300
BUNDLE_TIMEOUT_S = 120


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


def bundle(sources: Path, into: Path, modules: Path) -> None:
    """Each `*.jsx` page script in `sources` bundled for the browser as `into/<name>.js`, its
    packages imported by name from `modules` (the pinned ones)."""
    into.mkdir(parents=True, exist_ok=True)
    for source in sorted(sources.glob("*.jsx")):
        try:
            built = subprocess.run(
                [str(modules / ".bin" / "esbuild"), str(source), "--bundle", "--format=iife", "--jsx=automatic",
                 "--minify", '--define:process.env.NODE_ENV="production"', f"--outfile={into / (source.stem + '.js')}",
                 "--log-level=warning"],
                capture_output=True, text=True, timeout=BUNDLE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                env={**os.environ, "NODE_PATH": str(modules)})
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"esbuild took over {BUNDLE_TIMEOUT_S} s on {source.name}") from exc
        if built.returncode != 0:
            raise RuntimeError(f"esbuild could not bundle {source.name}: {built.stderr.strip()[-800:]}")


def served_root(pages: Path, into: Path) -> Path:
    """A folder to serve: `pages` as `l1/` (where the test drivers look), the packages as
    `/node_modules/` and the pages' React scripts, bundled, as `/bundles/`."""
    into.mkdir(parents=True, exist_ok=True)
    (into / "l1").symlink_to(pages, target_is_directory=True)
    modules = node_modules()
    (into / "node_modules").symlink_to(modules, target_is_directory=True)
    bundle(pages, into / "bundles", modules)
    return into
