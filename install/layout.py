"""Where the host manifest (and, on Windows, the registry key) goes for one browser.

Everything here is a pure function of the OS name, the home folder and the environment, so
every OS's layout can be tested on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from protocol.constants import HOST_NAME

from install.browsers import Browser


@dataclass(frozen=True)
class Placement:
    browser: str
    manifest_path: PurePath
    # HKCU subkey whose default value must name the manifest (Windows only).
    registry_key: str | None
    # The browser profile folder this placement belongs to, when it is a dedicated profile.
    user_data_dir: PurePath | None = None

    def describe(self) -> str:
        where = str(self.manifest_path)
        if self.registry_key:
            where += f" (HKCU\\{self.registry_key})"
        return where


def os_family(platform: str) -> str:
    """'linux', 'darwin' or 'win32' for a sys.platform value."""
    if platform.startswith("win"):
        return "win32"
    if platform == "darwin":
        return "darwin"
    return "linux"


def default_profile_dir(browser: Browser, platform: str, home: PurePath, env: dict[str, str]) -> PurePath:
    """The browser's default user-data folder."""
    family = os_family(platform)
    if family == "darwin":
        return PurePosixPath(home) / "Library" / "Application Support" / browser.mac_dir
    if family == "win32":
        local = PureWindowsPath(env.get("LOCALAPPDATA") or PureWindowsPath(home) / "AppData" / "Local")
        return local / PureWindowsPath(browser.windows_key) / "User Data"
    config = env.get("XDG_CONFIG_HOME") or str(PurePosixPath(home) / ".config")
    return PurePosixPath(config) / browser.linux_dir


def placement(
    browser: Browser,
    platform: str,
    home: PurePath,
    env: dict[str, str],
    user_data_dir: Path | None = None,
    windows_manifest_root: PurePath | None = None,
) -> Placement:
    """Where `install` writes the manifest for `browser`.

    With a dedicated profile (`user_data_dir`) Chrome on Linux and macOS reads
    `<user-data-dir>/NativeMessagingHosts/`; Windows always goes through the registry.
    """
    family = os_family(platform)
    file_name = f"{HOST_NAME}.json"
    if family == "win32":
        # Tests pass a real folder as the root; the path then keeps that folder's flavour.
        root = windows_manifest_root if windows_manifest_root is not None else (
            PureWindowsPath(env.get("LOCALAPPDATA") or PureWindowsPath(home) / "AppData" / "Local") / "Tabwarden"
        )
        manifest = root / "NativeMessagingHosts" / browser.key / file_name
        key = f"Software\\{browser.windows_key}\\NativeMessagingHosts\\{HOST_NAME}"
        return Placement(browser.key, manifest, key, PureWindowsPath(user_data_dir) if user_data_dir else None)
    if user_data_dir is not None:
        return Placement(browser.key, PurePosixPath(user_data_dir) / "NativeMessagingHosts" / file_name, None, PurePosixPath(user_data_dir))
    profile = default_profile_dir(browser, platform, home, env)
    return Placement(browser.key, PurePosixPath(profile) / "NativeMessagingHosts" / file_name, None)
