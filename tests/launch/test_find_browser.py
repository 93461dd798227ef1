"""Finding the browser per OS, and what a given executable is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from host.launch.find_browser import BrowserNotFound, candidates, find_browser, key_for_path
from install.browsers import BROWSERS


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_candidates_follow_each_os_layout(tmp_path):
    mac = candidates(BROWSERS["brave"], "darwin", {}, Path("/Users/u"))
    assert mac == [Path("/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"),
                   Path("/Users/u/Applications/Brave Browser.app/Contents/MacOS/Brave Browser")]
    win = candidates(BROWSERS["edge"], "win32", {"PROGRAMFILES(X86)": r"C:\Program Files (x86)"}, Path("C:/Users/u"))
    assert [str(p).replace("\\", "/") for p in win] == ["C:/Program Files (x86)/Microsoft/Edge/Application/msedge.exe"]
    tool = executable(tmp_path / "bin" / "chromium-browser")
    linux = candidates(BROWSERS["chromium"], "linux", {"PATH": str(tool.parent)})
    assert linux[0] == tool and Path("/usr/lib/chromium/chromium") in linux


@pytest.mark.parametrize("path, key", [
    ("/usr/bin/google-chrome-stable", "chrome"),
    ("/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "chrome"),
    (r"C:\Program Files\Google\Chrome\Application\chrome.exe", "chrome"),
    (r"C:\Users\u\AppData\Local\Chromium\Application\chrome.exe", "chromium"),
    ("/usr/lib/chromium/chromium", "chromium"),
    ("/opt/microsoft/msedge/msedge", "edge"),
    ("/usr/bin/brave-browser", "brave"),
    ("/opt/custom/thorium", "chromium"),
])
def test_an_executable_is_recognised_by_its_path(path, key):
    assert key_for_path(Path(path)) == key


def test_a_named_path_is_used_as_is(tmp_path):
    chrome = executable(tmp_path / "google-chrome")
    found = find_browser(str(chrome))
    assert (found.key, found.executable) == ("chrome", chrome)


def test_bad_choices_say_what_was_wrong(tmp_path):
    with pytest.raises(BrowserNotFound, match="is not an executable file"):
        find_browser(str(tmp_path / "missing" / "chrome"))
    with pytest.raises(BrowserNotFound, match="unknown browser 'firefox'"):
        find_browser("firefox")
    with pytest.raises(BrowserNotFound, match="Brave not found .* Looked at: "):
        find_browser("brave", "linux", {"PATH": str(tmp_path)})


def test_a_browser_on_the_path_is_found_by_name(tmp_path):
    edge = executable(tmp_path / "microsoft-edge")
    found = find_browser("edge", "linux", {"PATH": str(tmp_path)})
    assert (found.key, found.display, found.executable) == ("edge", "Microsoft Edge", edge)
    assert os.access(found.executable, os.X_OK)
