"""`tabwarden install` refuses what is most likely a mistake, before writing anything, in words a
new user can act on: a `--user-data-dir` that is a file or does not exist (without `--create`),
and a browser named with `--browser` that is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def machine(tmp_path):
    """A home without any browser, a PATH without any browser command, a Tabwarden home."""
    (tmp_path / "home").mkdir()
    (tmp_path / "bin").mkdir()
    return tmp_path


def tabwarden(machine: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(machine / "home"), PATH=str(machine / "bin"), TABWARDEN_HOME=str(machine / "tw"))
    return subprocess.run([sys.executable, "-m", "host", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60)


def written(machine: Path) -> list[Path]:
    """Every file under the home and the Tabwarden home (what a refused install must not leave)."""
    return sorted(p for base in (machine / "home", machine / "tw") if base.exists() for p in base.rglob("*"))


def test_a_file_given_as_the_profile_folder_is_a_clear_error(machine):
    profile = machine / "home" / "profile.txt"
    profile.write_text("not a folder")
    refused = tabwarden(machine, "install", "--user-data-dir", str(profile))
    assert refused.returncode == 2 and refused.stdout == "" and "Traceback" not in refused.stderr
    assert refused.stderr.strip() == (f"tabwarden install: --user-data-dir {profile} is a file, not a folder: give the "
                                      "browser profile folder (the one the browser's --user-data-dir names)")
    inside = tabwarden(machine, "install", "--user-data-dir", str(profile / "sub"))
    assert inside.returncode == 2 and f"{profile} is a file" in inside.stderr and "Traceback" not in inside.stderr
    assert written(machine) == [profile]


def test_a_folder_that_does_not_exist_needs_create(machine):
    typo = machine / "home" / "profiels" / "tabwarden"
    refused = tabwarden(machine, "install", "--user-data-dir", str(typo))
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"tabwarden install: the folder {typo} does not exist, so nothing was registered; "
                                      "check its spelling, or add --create to make it as a new profile folder")
    assert written(machine) == []
    made = tabwarden(machine, "install", "--user-data-dir", str(typo), "--create")
    assert made.returncode == 0, made.stderr
    assert (typo / "NativeMessagingHosts" / "com.tabwarden.host.json").is_file()
    again = tabwarden(machine, "install", "--user-data-dir", str(typo))  # it exists now: no flag needed
    assert again.returncode == 0, again.stderr


def test_a_browser_that_is_not_installed_is_named_with_where_install_looked(machine):
    refused = tabwarden(machine, "install", "--browser", "chrome")
    assert refused.returncode == 1 and refused.stdout == ""
    profile = machine / "home" / ".config" / "google-chrome"
    assert refused.stderr.splitlines() == [
        f"tabwarden install: Google Chrome was not found: no profile folder {profile} and no google-chrome or "
        "google-chrome-stable on PATH.",
        "Nothing was registered. Install it and run this again (installed somewhere else? start it once, so that it "
        "makes its profile folder), or register a dedicated profile folder with --user-data-dir DIR."]
    assert written(machine) == []

    (machine / "home" / ".config" / "chromium").mkdir(parents=True)  # Chromium is here
    both = tabwarden(machine, "install", "--browser", "chrome", "--browser", "chromium")
    assert both.returncode == 1 and "register one that is installed (found: chromium, e.g. --browser chromium)" \
        in both.stderr
    assert not (machine / "home" / ".config" / "chromium" / "NativeMessagingHosts").exists()
    assert tabwarden(machine, "install", "--browser", "chromium").returncode == 0


def test_no_browser_at_all_says_where_install_looked(machine):
    refused = tabwarden(machine, "install")
    assert refused.returncode == 1
    assert "no supported browser found. Google Chrome was not found: no profile folder" in refused.stderr
    assert "Brave was not found" in refused.stderr and "--user-data-dir" in refused.stderr
