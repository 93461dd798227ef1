"""A registration names the installation it runs: each installation has its own launcher, taking
a registration over from another one warns and says how to go back, and the doctor names it."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from install import doctor, installation, registrations
from install.installer import Environment, install, uninstall
from install.launcher import render


@pytest.fixture(autouse=True)
def tw_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "tw"))


def other_python(tmp_path: Path) -> str:
    """An interpreter path of a second installation (a link, as in a venv)."""
    path = tmp_path / "other-venv" / "bin" / "python"
    path.parent.mkdir(parents=True)
    path.symlink_to(sys.executable)
    return str(path)


def env_for(tmp_path: Path, python: str = sys.executable) -> Environment:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return Environment(platform="linux", home=home, env={}, launcher_dir=tmp_path / "bin", python=python)


def manifest_launcher(profile: Path) -> Path:
    doc = json.loads((profile / "NativeMessagingHosts" / "com.tabwarden.host.json").read_text())
    return Path(doc["path"])


def test_the_id_is_stable_and_tells_interpreters_apart(tmp_path):
    other = other_python(tmp_path)
    assert installation.installation_id(sys.executable) == installation.installation_id(sys.executable)
    assert installation.installation_id(sys.executable) != installation.installation_id(other)
    assert len(installation.installation_id(other)) == installation.ID_LENGTH


def test_each_installation_registers_its_own_launcher(tmp_path):
    first, second = env_for(tmp_path), env_for(tmp_path, other_python(tmp_path))
    install(None, tmp_path / "p1", envr=first, warn=pytest.fail)
    install(None, tmp_path / "p2", envr=second, warn=pytest.fail)
    one, two = manifest_launcher(tmp_path / "p1"), manifest_launcher(tmp_path / "p2")
    assert one != two and one.is_file() and two.is_file()
    assert one.parent.name == installation.installation_id(first.python)
    assert installation.of_launcher(two).python == second.python
    assert {e["installation"] for e in registrations.load()} == {one.parent.name, two.parent.name}


def test_registering_again_from_the_same_installation_is_silent(tmp_path):
    envr = env_for(tmp_path)
    install(None, tmp_path / "p", envr=envr, warn=pytest.fail)
    install(None, tmp_path / "p", envr=envr, warn=pytest.fail)


def test_taking_over_a_registration_warns_and_says_how_to_go_back(tmp_path):
    first, second = env_for(tmp_path), env_for(tmp_path, other_python(tmp_path))
    profile = tmp_path / "p"
    install(None, profile, envr=first)
    first_launcher = manifest_launcher(profile)
    warnings: list[str] = []
    install(None, profile, envr=second, warn=warnings.append)
    assert len(warnings) == 1
    text = warnings[0]
    assert text.startswith("warning: the chromium (profile") and f"python {os.path.abspath(sys.executable)}" in text
    assert f"now runs this installation at {installation.current(second.python).describe()}" in text
    assert text.endswith(f"\n  To go back, run: {sys.executable} -m host install --browser chromium --user-data-dir {profile}")
    assert manifest_launcher(profile).parent.name == installation.installation_id(second.python)
    assert first_launcher.is_file()  # the other installation's own launcher is left alone


def test_the_default_warning_goes_to_standard_error(tmp_path, capsys):
    install(None, tmp_path / "p", envr=env_for(tmp_path))
    install(None, tmp_path / "p", envr=env_for(tmp_path, other_python(tmp_path)))
    assert "To go back, run:" in capsys.readouterr().err


def test_a_launcher_of_old_shared_by_every_installation_is_recognised_and_replaced(tmp_path):
    envr = env_for(tmp_path)
    legacy = tmp_path / "bin" / "tabwarden-host"
    legacy.parent.mkdir(parents=True)
    legacy.write_text(render("linux", "/gone/venv/bin/python", None))
    assert installation.of_launcher(legacy).python == "/gone/venv/bin/python"
    profile = tmp_path / "p"
    (profile / "NativeMessagingHosts").mkdir(parents=True)
    (profile / "NativeMessagingHosts" / "com.tabwarden.host.json").write_text(json.dumps({"path": str(legacy)}))
    warnings: list[str] = []
    install(None, profile, envr=envr, warn=warnings.append)
    assert "whose interpreter is gone" in warnings[0] and "cannot be restored" in warnings[0]
    uninstall(None, envr=envr)
    assert not legacy.exists()  # nothing runs it any more


def test_a_foreign_manifest_is_reported_when_replaced(tmp_path):
    profile = tmp_path / "p"
    (profile / "NativeMessagingHosts").mkdir(parents=True)
    (profile / "NativeMessagingHosts" / "com.tabwarden.host.json").write_text(json.dumps({"path": "/opt/x/host"}))
    warnings: list[str] = []
    install(None, profile, envr=env_for(tmp_path), warn=warnings.append)
    assert "ran /opt/x/host, which is not a Tabwarden launcher" in warnings[0]


def test_uninstall_removes_only_launchers_no_registration_runs(tmp_path):
    first, second = env_for(tmp_path), env_for(tmp_path, other_python(tmp_path))
    install(None, tmp_path / "p1", envr=first)
    install(None, tmp_path / "p2", envr=second)
    one, two = manifest_launcher(tmp_path / "p1"), manifest_launcher(tmp_path / "p2")
    uninstall(None, tmp_path / "p2", envr=first)
    assert one.is_file() and not two.parent.exists()
    uninstall(None, envr=first)
    assert not one.parent.exists()


def test_the_doctor_names_the_installation_each_registration_runs(tmp_path):
    first, second = env_for(tmp_path), env_for(tmp_path, other_python(tmp_path))
    install(None, tmp_path / "p1", envr=first)
    install(None, tmp_path / "p2", envr=second)
    found = {(c.subject, c.name): c for c in doctor.run(first, timeout=5)}
    mine = found[(f"chromium ({tmp_path / 'p1'})", "runs installation")]
    theirs = found[(f"chromium ({tmp_path / 'p2'})", "runs installation")]
    assert mine.ok and mine.detail.startswith("this installation: ")
    assert theirs.ok and theirs.detail.startswith("another installation: ")
    assert second.python in theirs.detail


def test_the_doctor_fails_a_registration_whose_installation_is_gone(tmp_path):
    python = other_python(tmp_path)
    envr = env_for(tmp_path, python)
    install(None, tmp_path / "p", envr=envr)
    Path(python).unlink()
    found = {c.name: c for c in doctor.run(env_for(tmp_path), timeout=5)}
    check = found["runs installation"]
    assert not check.ok and "interpreter is gone" in check.detail
    assert check.fix.startswith("tabwarden install --browser chromium --user-data-dir")
    assert "host answers ping" not in found


def test_the_interpreters_of_one_environment_are_one_installation(tmp_path):
    bin_dir = tmp_path / "venv" / "bin"
    assert installation.installation_id(str(bin_dir / "python")) == installation.installation_id(str(bin_dir / "python3"))
    assert installation.installation_id(str(bin_dir / "python")) != installation.installation_id(
        str(tmp_path / "other" / "bin" / "python"))
