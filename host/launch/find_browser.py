"""Finding a Chrome-family browser on this machine: Chromium, Chrome, Edge or Brave, or the
executable the user names with `--browser PATH`."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath

from host.launch.errors import LaunchError
from install.browsers import BROWSERS, Browser
from install.layout import os_family

# Chromium first: it honours --load-extension; branded Chrome ignores that flag and needs the
# extension loaded over a debugging pipe instead (see cdp_pipe.py).
SEARCH_ORDER = ("chromium", "chrome", "edge", "brave")

# Where Linux packages put the binaries when the command is not on PATH (or is only a wrapper).
LINUX_PATHS = {
    "chromium": ("/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser", "/snap/bin/chromium"),
    "chrome": ("/opt/google/chrome/chrome",),
    "edge": ("/opt/microsoft/msedge/msedge",),
    "brave": ("/opt/brave.com/brave/brave",),
}


class BrowserNotFound(LaunchError):
    """No usable browser; the message says what was looked for."""


@dataclass(frozen=True)
class FoundBrowser:
    key: str  # chrome | chromium | edge | brave
    display: str
    executable: Path


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def candidates(browser: Browser, platform: str = sys.platform, env: dict[str, str] | None = None,
               home: Path | None = None) -> list[Path]:
    """Where `browser` may be installed on this OS, most likely first (existing or not)."""
    env = dict(os.environ) if env is None else env
    home = home or Path.home()
    family = os_family(platform)
    if family == "darwin":
        return [root / app for app in browser.mac_apps for root in (Path("/Applications"), home / "Applications")]
    if family == "win32":
        roots = [env.get(name) for name in ("PROGRAMFILES", "PROGRAMFILES(X86)", "LOCALAPPDATA")]
        return [Path(str(PureWindowsPath(root) / exe)) for root in roots if root for exe in browser.windows_exes]
    found = [Path(p) for p in (shutil.which(cmd, path=env.get("PATH")) for cmd in browser.linux_commands) if p]
    return found + [Path(p) for p in LINUX_PATHS.get(browser.key, ())]


def key_for_path(path: Path) -> str:
    """Which browser an executable is, judged by its path (Chromium when it cannot tell)."""
    text = str(path).lower().replace("\\", "/")
    name = text.rsplit("/", 1)[-1]
    if "edge" in name or name == "msedge.exe" or "/microsoft/edge" in text:
        return "edge"
    if "brave" in name or "/bravesoftware/" in text:
        return "brave"
    if "chromium" in text:
        return "chromium"
    if "chrome" in name or "google" in text:
        return "chrome"
    return "chromium"


def find_browser(choice: str | None = None, platform: str = sys.platform, env: dict[str, str] | None = None) -> FoundBrowser:
    """The browser to launch: `choice` may be a path, a browser key, or None for the first one
    found in SEARCH_ORDER. Raises BrowserNotFound."""
    if choice and (os.sep in choice or "/" in choice or Path(choice).suffix.lower() == ".exe"):
        path = Path(choice).expanduser()
        if not _executable(path):
            raise BrowserNotFound(f"{path} is not an executable file")
        key = key_for_path(path)
        return FoundBrowser(key, BROWSERS[key].display, path)
    if choice and choice not in BROWSERS:
        raise BrowserNotFound(f"unknown browser {choice!r}; name one of {', '.join(SEARCH_ORDER)} or give a path")
    keys = [choice] if choice else list(SEARCH_ORDER)
    looked: list[str] = []
    for key in keys:
        browser = BROWSERS[key]
        for path in candidates(browser, platform, env):
            if _executable(path):
                return FoundBrowser(key, browser.display, path)
            looked.append(str(path))
    what = BROWSERS[choice].display if choice else "Chromium, Chrome, Edge or Brave"
    hint = " (on Debian/Ubuntu: apt-get install chromium)" if os_family(platform) == "linux" else ""
    raise BrowserNotFound(f"{what} not found{hint}; pass --browser PATH. Looked at: {', '.join(looked) or 'nothing'}")
