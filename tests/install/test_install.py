"""Registration for every OS layout and browser, uninstall, and the doctor's diagnoses."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path, PureWindowsPath

import pytest

from install import doctor, registrations
from install.browsers import BROWSERS
from install.extension_id import default_extension_id, id_from_key, manifest_key, origin_of
from install.installation import installation_id
from install.installer import Environment, InstallError, install, uninstall
from install.launcher import render
from install.layout import default_profile_dir, placement
from install.registry import FakeWinreg, HostRegistry

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def tw_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "tw"))
    return tmp_path / "tw"


def launcher_of(envr: Environment) -> Path:
    """Where install puts the launcher of the installation that runs the tests."""
    return envr.launcher_path(installation_id(envr.python))


def env_for(tmp_path: Path, platform: str, **kw) -> Environment:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Environment(platform=platform, home=home, env={}, launcher_dir=tmp_path / "bin", **kw)


def test_extension_id_is_derived_from_the_manifest_key():
    ext_id = default_extension_id()
    assert len(ext_id) == 32 and set(ext_id) <= set("abcdefghijklmnop")
    assert id_from_key(manifest_key()) == ext_id
    # SHA-256 of no bytes starts e3b0c442 98fc1c14 9afbf4c8 996fb924: digit d becomes letter a+d
    assert id_from_key("") == "odlameecjipmbmbejkplpemijjgpljce"


@pytest.mark.parametrize("browser, expected", [
    ("chrome", ".config/google-chrome/NativeMessagingHosts"),
    ("chromium", ".config/chromium/NativeMessagingHosts"),
    ("edge", ".config/microsoft-edge/NativeMessagingHosts"),
    ("brave", ".config/BraveSoftware/Brave-Browser/NativeMessagingHosts"),
])
def test_linux_per_user_locations(tmp_path, browser, expected):
    envr = env_for(tmp_path, "linux")
    placements = install([browser], envr=envr)
    manifest = envr.home / expected / "com.tabwarden.host.json"
    assert [Path(str(p.manifest_path)) for p in placements] == [manifest]
    doc = json.loads(manifest.read_text())
    assert doc == {
        "name": "com.tabwarden.host",
        "description": doc["description"],
        "path": str(launcher_of(envr)),
        "type": "stdio",
        "allowed_origins": [origin_of(default_extension_id())],
    }
    launcher = Path(doc["path"])
    assert launcher.stat().st_mode & stat.S_IXUSR
    text = launcher.read_text()
    assert text.startswith("#!/bin/sh\n") and f"exec '{sys.executable}' -I -m host host \"$@\"" in text


@pytest.mark.parametrize("browser, expected", [
    ("chrome", "Library/Application Support/Google/Chrome/NativeMessagingHosts"),
    ("chromium", "Library/Application Support/Chromium/NativeMessagingHosts"),
    ("edge", "Library/Application Support/Microsoft Edge/NativeMessagingHosts"),
    ("brave", "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts"),
])
def test_macos_per_user_locations(tmp_path, browser, expected):
    envr = env_for(tmp_path, "darwin")
    install([browser], envr=envr)
    assert (envr.home / expected / "com.tabwarden.host.json").is_file()


@pytest.mark.parametrize("browser, key", [
    ("chrome", r"Software\Google\Chrome\NativeMessagingHosts\com.tabwarden.host"),
    ("chromium", r"Software\Chromium\NativeMessagingHosts\com.tabwarden.host"),
    ("edge", r"Software\Microsoft\Edge\NativeMessagingHosts\com.tabwarden.host"),
    ("brave", r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\com.tabwarden.host"),
])
def test_windows_manifest_and_registry_key(tmp_path, browser, key):
    fake = FakeWinreg(tmp_path / "registry.json")
    envr = env_for(tmp_path, "win32", registry=HostRegistry(fake), windows_manifest_root=tmp_path / "LocalAppData" / "Tabwarden")
    install([browser], envr=envr)
    manifest = tmp_path / "LocalAppData" / "Tabwarden" / "NativeMessagingHosts" / browser / "com.tabwarden.host.json"
    assert manifest.is_file()
    assert HostRegistry(fake).get_default(key) == str(manifest)
    launcher = Path(json.loads(manifest.read_text())["path"])
    assert launcher.name == "tabwarden-host.cmd"
    assert launcher.read_bytes().startswith(b"@echo off\r\n") and b"-I -m host host %*\r\n" in launcher.read_bytes()
    removed = uninstall([browser], envr=envr)
    assert not manifest.exists() and HostRegistry(fake).get_default(key) is None
    assert f"HKCU\\{key}" in removed and not launcher.exists()


def test_windows_default_locations_follow_localappdata():
    browser = BROWSERS["edge"]
    env = {"LOCALAPPDATA": r"C:\Users\ana\AppData\Local"}
    where = placement(browser, "win32", PureWindowsPath(r"C:\Users\ana"), env)
    assert str(where.manifest_path) == r"C:\Users\ana\AppData\Local\Tabwarden\NativeMessagingHosts\edge\com.tabwarden.host.json"
    assert str(default_profile_dir(browser, "win32", PureWindowsPath(r"C:\Users\ana"), env)) == \
        r"C:\Users\ana\AppData\Local\Microsoft\Edge\User Data"


def test_windows_launcher_quotes_paths_with_spaces():
    text = render("win32", r"C:\Program Files\Tabwarden\.venv\Scripts\python.exe", r"C:\Users\a b\tw")
    assert '"C:\\Program Files\\Tabwarden\\.venv\\Scripts\\python.exe" -I -m host host %*' in text
    assert 'set "TABWARDEN_HOME=C:\\Users\\a b\\tw"' in text


def test_posix_launcher_quotes_awkward_paths():
    text = render("linux", "/opt/it's here/python", None)
    assert "exec '/opt/it'\\''s here/python' -I -m host host \"$@\"" in text


def test_dedicated_profile_goes_into_its_user_data_dir(tmp_path):
    envr = env_for(tmp_path, "linux")
    profile = tmp_path / "profile"
    install(None, profile, envr=envr)
    manifest = profile / "NativeMessagingHosts" / "com.tabwarden.host.json"
    assert manifest.is_file()
    entry = registrations.load()[0]
    assert entry["user_data_dir"] == str(profile) and entry["manifest_path"] == str(manifest)


def test_default_install_only_targets_installed_browsers(tmp_path):
    envr = env_for(tmp_path, "darwin")
    (envr.home / "Library/Application Support/BraveSoftware/Brave-Browser").mkdir(parents=True)
    placements = install(None, envr=envr)
    assert [p.browser for p in placements] == ["brave"]


def test_no_browser_found_is_a_clear_error(tmp_path):
    with pytest.raises(InstallError, match="no supported browser"):
        install(None, envr=env_for(tmp_path, "darwin"))


def test_extra_extension_ids_are_allowed_and_recorded(tmp_path):
    envr = env_for(tmp_path, "linux")
    extra = "b" * 32
    install(["chromium"], extension_ids=[default_extension_id(), extra], envr=envr)
    doc = json.loads((envr.home / ".config/chromium/NativeMessagingHosts/com.tabwarden.host.json").read_text())
    assert origin_of(extra) in doc["allowed_origins"]
    assert extra in registrations.allowed_extension_ids()


def test_uninstall_removes_exactly_what_install_wrote(tmp_path):
    envr = env_for(tmp_path, "linux")
    config = envr.home / ".config" / "chromium"
    config.mkdir(parents=True)
    foreign = config / "NativeMessagingHosts" / "com.other.host.json"
    foreign.parent.mkdir()
    foreign.write_text("{}")
    install(["chromium", "chrome"], envr=envr)
    removed = uninstall(["chrome"], envr=envr)
    assert not (envr.home / ".config/google-chrome/NativeMessagingHosts/com.tabwarden.host.json").exists()
    assert not (envr.home / ".config/google-chrome").exists()  # folders install created are gone
    assert (config / "NativeMessagingHosts" / "com.tabwarden.host.json").exists()
    assert launcher_of(envr).exists()  # still used by chromium
    uninstall(None, envr=envr)
    assert foreign.exists() and foreign.parent.exists()  # never touches what others put there
    assert not launcher_of(envr).exists()
    assert registrations.load() == []
    assert removed


def test_uninstall_leaves_a_manifest_someone_else_rewrote(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], envr=envr)
    manifest = envr.home / ".config/chromium/NativeMessagingHosts/com.tabwarden.host.json"
    manifest.write_text(json.dumps({"name": "com.tabwarden.host", "path": "/elsewhere/host"}))
    uninstall(None, envr=envr)
    assert manifest.exists()


# ---------------------------------------------------------------- doctor


def checks_by_name(envr: Environment) -> dict[str, doctor.Check]:
    return {c.name: c for c in doctor.run(envr, timeout=5)}


def test_doctor_is_green_for_a_working_registration(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(None, tmp_path / "profile", envr=envr)
    checks = checks_by_name(envr)
    assert all(c.ok for c in checks.values()), checks
    assert set(checks) == {"manifest exists", "manifest parses", "launcher runnable", "runs installation",
                           "extension allowed", "host answers ping"}


def test_doctor_without_registration_says_how_to_register(tmp_path):
    checks = doctor.run(env_for(tmp_path, "linux"))
    assert len(checks) == 1 and not checks[0].ok and "tabwarden install" in checks[0].fix


def test_doctor_names_a_missing_manifest_like_chrome_does(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], envr=envr)
    (envr.home / ".config/chromium/NativeMessagingHosts/com.tabwarden.host.json").unlink()
    check = checks_by_name(envr)["manifest exists"]
    assert not check.ok and "Specified native messaging host not found" in check.detail
    assert check.fix == "tabwarden install --browser chromium"


def test_doctor_finds_a_launcher_that_cannot_run(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], envr=envr)
    launcher_of(envr).chmod(0o644)
    check = checks_by_name(envr)["launcher runnable"]
    assert not check.ok and "Native host has exited" in check.detail


def test_doctor_finds_a_missing_allowed_origin(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], extension_ids=["c" * 32], envr=envr)
    check = checks_by_name(envr)["extension allowed"]
    assert not check.ok and "forbidden" in check.detail


def test_doctor_finds_a_host_that_writes_garbage(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], envr=envr)
    launcher = launcher_of(envr)
    launcher.write_text("#!/bin/sh\necho hello from a broken host\nsleep 5\n")
    check = checks_by_name(envr)["host answers ping"]
    assert not check.ok
    assert "Error when communicating with the native messaging host" in check.detail or "no pong" in check.detail


def test_doctor_finds_a_host_that_exits(tmp_path):
    envr = env_for(tmp_path, "linux")
    install(["chromium"], envr=envr)
    launcher_of(envr).write_text("#!/bin/sh\necho oops >&2\nexit 3\n")
    check = checks_by_name(envr)["host answers ping"]
    assert not check.ok and "Native host has exited" in check.detail and "oops" in check.detail


def test_doctor_checks_the_windows_registry_value(tmp_path):
    fake = FakeWinreg(tmp_path / "registry.json")
    envr = env_for(tmp_path, "win32", registry=HostRegistry(fake), windows_manifest_root=tmp_path / "LAD")
    install(["chrome"], envr=envr)
    key = r"Software\Google\Chrome\NativeMessagingHosts\com.tabwarden.host"
    HostRegistry(fake).set_default(key, r"C:\somewhere\else.json")
    entry = registrations.load()[0]
    found = {c.name: c for c in doctor.check_entry(entry, envr)}
    assert not found["registry key"].ok


def test_cli_install_and_doctor_round_trip(tmp_path, tw_home):
    env = dict(os.environ, TABWARDEN_HOME=str(tw_home), HOME=str(tmp_path / "home"))
    profile = tmp_path / "profile"
    run = lambda *a: subprocess.run([sys.executable, "-m", "host", *a], env=env, capture_output=True, text=True, cwd=ROOT, timeout=60)
    out = run("install", "--user-data-dir", str(profile), "--create")
    assert out.returncode == 0, out.stderr
    assert "registered for chromium" in out.stdout
    doc = run("doctor")
    assert doc.returncode == 0 and "11 passed, 0 failed" in doc.stdout, doc.stdout  # 6 registration, 5 settings
    bad = run("install", "--extension-id", "not-an-id")
    assert bad.returncode == 2 and "not an extension id" in bad.stderr
    gone = run("uninstall", "--user-data-dir", str(profile))
    assert gone.returncode == 0 and "removed" in gone.stdout
    doc = run("doctor")
    assert doc.returncode == 1 and "fix: tabwarden install" in doc.stdout


def test_doctor_names_a_bad_settings_file_and_its_field(tmp_path, tw_home):
    env = dict(os.environ, TABWARDEN_HOME=str(tw_home), HOME=str(tmp_path / "home"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "host", *a], env=env, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run("install", "--user-data-dir", str(tmp_path / "profile"), "--create").returncode == 0
    config = tw_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "mcp.json").write_text('{"servers": {"gh": {"url": "ftp://example.com"}}}')
    (config / "engine.json").write_text('{"providers": {"x": {"kind": "openai", "baseUrl": "https://a.example"}}}')
    doc = run("doctor")
    assert doc.returncode == 1, doc.stdout
    assert "[FAIL] settings: mcp.json (MCP servers)" in doc.stdout and "$.servers.gh.url" in doc.stdout
    assert "[FAIL] settings: engine.json (providers)" in doc.stdout and "model" in doc.stdout
    assert "[ok  ] settings: builtins.json (limits)" in doc.stdout and "9 passed, 2 failed" in doc.stdout
