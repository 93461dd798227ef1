"""`tabwarden install` / `uninstall`: write and remove host manifests, launchers, registry keys."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from protocol.errors import TabwardenError

from host.paths import dirs
from protocol.constants import HOST_NAME

from install import installation, launcher, registrations, repoint
from install.browsers import BROWSERS, Browser, resolve
from install.extension_id import default_extension_id, origin_of
from install.layout import Placement, default_profile_dir, os_family, placement
from install.registry import HostRegistry, system_registry


@dataclass
class Environment:
    """What the installer looks at; tests substitute every part."""

    platform: str = sys.platform
    home: Path = field(default_factory=Path.home)
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    registry: HostRegistry | None = None
    launcher_dir: Path | None = None
    windows_manifest_root: Path | None = None
    python: str = sys.executable

    @property
    def family(self) -> str:
        return os_family(self.platform)

    def launcher_root(self) -> Path:
        return self.launcher_dir or (dirs().data / "bin")

    def launcher_path(self, installation_id: str) -> Path:
        """The launcher of one installation: `<bin>/<installation id>/tabwarden-host`."""
        return self.launcher_root() / installation_id / launcher.launcher_name(self.family)

    def the_registry(self) -> HostRegistry | None:
        return self.registry if self.registry is not None else system_registry()


class InstallError(TabwardenError):
    """Install could not proceed; the message says what to do."""

    code = "install_failed"


def manifest_document(launcher_path: Path, extension_ids: list[str]) -> dict[str, Any]:
    """The host manifest Chrome reads."""
    return {
        "name": HOST_NAME,
        "description": "Tabwarden native host: agent engine and permission gatekeeper",
        "path": str(launcher_path),
        "type": "stdio",
        "allowed_origins": [origin_of(i) for i in extension_ids],
    }


def is_installed(browser: Browser, envr: Environment) -> bool:
    """A browser counts as installed when its profile folder exists or its command is found."""
    profile = Path(str(default_profile_dir(browser, envr.platform, envr.home, envr.env)))
    if profile.exists():
        return True
    if envr.family == "linux" and envr.platform == sys.platform:
        return any(shutil.which(cmd) for cmd in browser.linux_commands)
    return False


def not_found(name: str, envr: Environment) -> str:
    """"" when browser `name` is installed; otherwise that it was not found and where
    `is_installed` looked, in one sentence."""
    browser = BROWSERS[name]
    if is_installed(browser, envr):
        return ""
    places = [f"no profile folder {default_profile_dir(browser, envr.platform, envr.home, envr.env)}"]
    if envr.family == "linux" and envr.platform == sys.platform:
        places.append(f"no {' or '.join(browser.linux_commands)} on PATH")
    return f"{browser.display} was not found: {' and '.join(places)}."


def installed_browsers(envr: Environment) -> list[str]:
    """The keys of the browsers `is_installed` finds."""
    return [key for key, browser in BROWSERS.items() if is_installed(browser, envr)]


def plan(browser_names: list[str] | None, user_data_dir: Path | None, envr: Environment) -> list[Placement]:
    """Where install will write, without writing anything."""
    if user_data_dir is not None:
        names = browser_names if browser_names and "all" not in browser_names else ["chromium"]
        browsers = resolve(names)
        if envr.family != "win32":
            browsers = browsers[:1]  # one folder serves whichever browser runs that profile
    else:
        browsers = resolve(browser_names)
        if not browser_names or "all" in browser_names:
            browsers = [b for b in browsers if is_installed(b, envr)]
    return [
        placement(b, envr.platform, envr.home, envr.env, user_data_dir, envr.windows_manifest_root)
        for b in browsers
    ]


def install(
    browser_names: list[str] | None = None,
    user_data_dir: Path | None = None,
    extension_ids: list[str] | None = None,
    envr: Environment | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Placement]:
    """Write this installation's launcher, a manifest per placement and (Windows) the registry
    keys. Taking a registration over from another installation is reported through `warn`
    (default: standard error)."""
    envr = envr or Environment()
    warn = warn or (lambda text: print(text, file=sys.stderr))
    ids = extension_ids or [default_extension_id()]
    placements = plan(browser_names, user_data_dir, envr)
    if not placements:
        looked = " ".join(not_found(key, envr) for key in BROWSERS)
        raise InstallError(
            f"no supported browser found. {looked} Install one (or start it once, so that it makes its profile "
            "folder), name one with --browser, or use --user-data-dir for a dedicated profile"
        )
    registry = envr.the_registry() if envr.family == "win32" else None
    if envr.family == "win32" and registry is None:
        raise InstallError("the Windows registry is not available")
    this = installation.current(envr.python)
    launcher_path = launcher.write(envr.launcher_path(this.id), envr.family, envr.python)
    installation.write_record(launcher_path.parent, this)
    document = manifest_document(launcher_path, ids)
    entries = [e for e in registrations.load() if e.get("manifest_path") not in {str(p.manifest_path) for p in placements}]
    for where in placements:
        manifest = Path(str(where.manifest_path))
        created = _mkdirs(manifest.parent)
        message = repoint.warning(where, manifest, this)
        if message:
            warn(message)
        manifest.write_text(json.dumps(document, indent=2), encoding="utf-8")
        if registry is not None and where.registry_key:
            registry.set_default(where.registry_key, str(manifest))
        entries.append(
            {
                "browser": where.browser,
                "platform": envr.family,
                "manifest_path": str(manifest),
                "registry_key": where.registry_key,
                "user_data_dir": str(where.user_data_dir) if where.user_data_dir else None,
                "launcher": str(launcher_path),
                "installation": this.id,
                "extension_ids": ids,
                "created_dirs": [str(d) for d in created],
                "installed_at": time.time(),
            }
        )
    registrations.save(entries)
    return placements


def uninstall(
    browser_names: list[str] | None = None,
    user_data_dir: Path | None = None,
    envr: Environment | None = None,
) -> list[str]:
    """Remove what install recorded (filtered by browser / profile); return what was removed."""
    envr = envr or Environment()
    registry = envr.the_registry() if envr.family == "win32" else None
    wanted = None if not browser_names or "all" in browser_names else set(browser_names)
    removed: list[str] = []
    kept: list[dict[str, Any]] = []
    for entry in registrations.load():
        matches = (wanted is None or entry.get("browser") in wanted) and (
            user_data_dir is None or entry.get("user_data_dir") == str(user_data_dir)
        )
        if not matches:
            kept.append(entry)
            continue
        manifest = Path(entry["manifest_path"])
        if _manifest_is_ours(manifest, entry.get("launcher")):
            manifest.unlink()
            removed.append(str(manifest))
        key = entry.get("registry_key")
        if key and registry is not None and registry.get_default(key) == str(manifest):
            registry.delete(key)
            removed.append(f"HKCU\\{key}")
        for folder in reversed(entry.get("created_dirs", [])):
            try:
                Path(folder).rmdir()  # only if empty: never remove what others put there
                removed.append(folder)
            except OSError:
                pass
    registrations.save(kept)
    removed += _remove_unused_launchers(envr, {e.get("launcher") for e in kept})
    return removed


def _remove_unused_launchers(envr: Environment, in_use: set[str | None]) -> list[str]:
    """Remove every launcher of ours (and its record and folder) that no registration runs."""
    root = envr.launcher_root()
    name = launcher.launcher_name(envr.family)
    candidates = [root / name, *(root.glob(f"*/{name}") if root.is_dir() else [])]  # the first: one shared launcher of old
    removed: list[str] = []
    for path in candidates:
        if str(path) in in_use or not path.is_file() or not launcher.is_ours(path):
            continue
        path.unlink()
        removed.append(str(path))
        if path.parent != root:
            (path.parent / installation.RECORD_NAME).unlink(missing_ok=True)
            try:
                path.parent.rmdir()
            except OSError:
                pass
    return removed


def _manifest_is_ours(manifest: Path, launcher_path: str | None) -> bool:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return data.get("name") == HOST_NAME and (launcher_path is None or data.get("path") == launcher_path)


def _mkdirs(folder: Path) -> list[Path]:
    """Create `folder` and missing parents; return the ones created (outermost first)."""
    missing = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    folder.mkdir(parents=True, exist_ok=True)
    return list(reversed(missing))
