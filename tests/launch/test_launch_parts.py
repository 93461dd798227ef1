"""The pieces of a launch that need no real browser: flags, the load route, folders, the
extension copy, the profile lock."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from host.launch import profile
from host.launch.errors import LaunchError
from host.launch.find_browser import FoundBrowser
from host.launch.flags import browser_argv
from host.launch.runner import browser_env, loads_via_pipe, no_display
from install.extension_id import default_extension_id

CHROME = FoundBrowser("chrome", "Google Chrome", Path("/opt/google/chrome/chrome"))
CHROMIUM = FoundBrowser("chromium", "Chromium", Path("/usr/lib/chromium/chromium"))


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "tw"))
    return tmp_path / "tw"


def test_headed_flag_loading_by_default_headless_and_pipe_on_request(tmp_path):
    headed = browser_argv(CHROMIUM.executable, tmp_path / "p", tmp_path / "ext", headless=False, load_via_pipe=False)
    assert headed[0] == str(CHROMIUM.executable) and headed[-1] == "about:blank"
    assert f"--user-data-dir={tmp_path / 'p'}" in headed and f"--load-extension={tmp_path / 'ext'}" in headed
    assert not any(a.startswith("--headless") for a in headed)
    piped = browser_argv(CHROME.executable, tmp_path / "p", tmp_path / "ext", headless=True, load_via_pipe=True,
                         start_url="http://127.0.0.1:1/")
    assert "--headless=new" in piped and "--remote-debugging-pipe" in piped
    assert not any(a.startswith("--load-extension") for a in piped) and piped[-1] == "http://127.0.0.1:1/"
    assert ("--no-sandbox" in piped) == (os.geteuid() == 0)


def test_branded_chrome_loads_over_the_pipe_others_by_flag(monkeypatch):
    assert loads_via_pipe("auto", CHROME) is True
    assert loads_via_pipe("auto", CHROMIUM) is False
    assert loads_via_pipe("pipe", CHROMIUM) is True and loads_via_pipe("flag", CHROME) is False
    monkeypatch.setattr("sys.platform", "win32")
    with pytest.raises(LaunchError, match="use Chromium, Edge or Brave"):
        loads_via_pipe("auto", CHROME)
    with pytest.raises(LaunchError, match="--load-via must be one of"):
        loads_via_pipe("socket", CHROMIUM)


def test_folders_profile_per_browser_run_per_launch(home):
    dirs = profile.prepare("brave")
    assert dirs.profile == (home / "data" / "profiles" / "brave").resolve() and dirs.profile.is_dir()
    assert dirs.run.name.startswith("tw-launch-") and dirs.tmp.is_dir()
    assert (dirs.run.stat().st_mode & 0o777) == 0o700
    # Chromium puts a socket in TMPDIR: its path must stay below the ~107-byte limit.
    assert len(str(dirs.tmp / "org.chromium.Chromium.XXXXXX" / "SingletonSocket")) < 100
    env = browser_env(dirs)
    assert env["TMPDIR"] == env["TEMP"] == str(dirs.tmp) and env["TABWARDEN_LAUNCH_RUN"] == str(dirs.run)
    profile.remove_run(dirs)
    assert not dirs.run.exists() and dirs.profile.is_dir()


def test_site_access_copy_keeps_the_extension_id(home):
    dirs = profile.prepare("chromium")
    copy = profile.extension_with_site_access(profile.bundled_extension(), dirs.run, ["http://127.0.0.1/*"])
    manifest = json.loads((copy / "manifest.json").read_text())
    assert manifest["host_permissions"] == ["http://127.0.0.1/*"]
    assert default_extension_id(copy) == default_extension_id()
    assert json.loads((profile.bundled_extension() / "manifest.json").read_text())["host_permissions"] == []
    profile.remove_run(dirs)


def test_a_profile_held_by_a_live_browser_is_reported(tmp_path):
    assert profile.profile_in_use(tmp_path) is None
    (tmp_path / "SingletonLock").symlink_to(f"somehost-{os.getpid()}")
    assert profile.profile_in_use(tmp_path) == os.getpid()
    (tmp_path / "SingletonLock").unlink()
    (tmp_path / "SingletonLock").symlink_to("somehost-999999999")
    assert profile.profile_in_use(tmp_path) is None


def test_without_a_display_a_headed_launch_would_fail_so_it_goes_headless():
    assert no_display("linux", {}) is True
    assert no_display("linux", {"DISPLAY": ":0"}) is False and no_display("linux", {"WAYLAND_DISPLAY": "w-0"}) is False
    assert no_display("darwin", {}) is False and no_display("win32", {}) is False
