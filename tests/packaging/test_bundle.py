"""`protocol.bundle` finds the shipped files as package data and fails clearly when they are gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import bundle

ROOT = Path(__file__).resolve().parents[2]


def test_the_extension_of_the_editable_install_is_the_checkouts():
    assert bundle.extension_dir().resolve() == (ROOT / "extension").resolve()


def test_a_missing_extension_package_is_a_structured_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(bundle, "EXTENSION_PACKAGE", "tabwarden_no_such_package")
    with pytest.raises(bundle.BundleError) as caught:
        bundle.extension_dir()
    assert caught.value.code == "bundle_missing"
    assert "reinstall" in caught.value.message


def test_a_missing_manifest_is_a_structured_error(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(bundle, "MANIFEST", "no-such-manifest.json")
    with pytest.raises(bundle.BundleError, match="no-such-manifest.json"):
        bundle.extension_dir()


def test_demo_pages_are_read_from_their_package():
    assert b"<html" in bundle.data_file("host.demo", "shop.html").lower()
    with pytest.raises(bundle.BundleError):
        bundle.data_file("host.demo", "no-such-page.html")


def test_install_and_doctor_report_a_missing_extension_instead_of_crashing(tmp_path, monkeypatch, capsys):
    from host.cli.main import main
    from install import doctor

    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "tw"))
    monkeypatch.setattr(bundle, "MANIFEST", "no-such-manifest.json")
    assert main(["install", "--user-data-dir", str(tmp_path / "profile")]) == 1
    assert "tabwarden install: the extension's no-such-manifest.json is missing" in capsys.readouterr().err
    [check] = doctor.run()
    assert not check.ok and check.name == "extension installed" and "reinstall" in check.fix
