"""Where each supported browser keeps its profile and looks for native-messaging hosts."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Browser:
    key: str  # chrome | chromium | edge | brave
    display: str
    linux_dir: str  # under ~/.config
    mac_dir: str  # under ~/Library/Application Support
    windows_key: str  # under HKCU\Software
    linux_commands: tuple[str, ...]
    mac_apps: tuple[str, ...]
    windows_exes: tuple[str, ...]  # relative to Program Files / LocalAppData


BROWSERS: dict[str, Browser] = {
    b.key: b
    for b in (
        Browser(
            "chrome", "Google Chrome", "google-chrome", "Google/Chrome", r"Google\Chrome",
            ("google-chrome", "google-chrome-stable"),
            ("Google Chrome.app/Contents/MacOS/Google Chrome",),
            (r"Google\Chrome\Application\chrome.exe",),
        ),
        Browser(
            "chromium", "Chromium", "chromium", "Chromium", "Chromium",
            ("chromium", "chromium-browser"),
            ("Chromium.app/Contents/MacOS/Chromium",),
            (r"Chromium\Application\chrome.exe",),
        ),
        Browser(
            "edge", "Microsoft Edge", "microsoft-edge", "Microsoft Edge", r"Microsoft\Edge",
            ("microsoft-edge", "microsoft-edge-stable"),
            ("Microsoft Edge.app/Contents/MacOS/Microsoft Edge",),
            (r"Microsoft\Edge\Application\msedge.exe",),
        ),
        Browser(
            "brave", "Brave", "BraveSoftware/Brave-Browser", "BraveSoftware/Brave-Browser",
            r"BraveSoftware\Brave-Browser",
            ("brave-browser", "brave"),
            ("Brave Browser.app/Contents/MacOS/Brave Browser",),
            (r"BraveSoftware\Brave-Browser\Application\brave.exe",),
        ),
    )
}


def resolve(names: list[str] | None) -> list[Browser]:
    """The browsers named (`all` or None means every one)."""
    if not names or "all" in names:
        return list(BROWSERS.values())
    unknown = [n for n in names if n not in BROWSERS]
    if unknown:
        raise ValueError(f"unknown browser {', '.join(unknown)}; choose from {', '.join(BROWSERS)} or all")
    return [BROWSERS[n] for n in names]
