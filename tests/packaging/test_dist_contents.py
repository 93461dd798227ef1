"""The built wheel and sdist carry every file a user needs besides the Python modules: the
unpacked extension (manifest, generated files, pages, icons) and the demo pages. A file the
checkout has and the wheel lacks only shows once installed elsewhere, so it is checked here."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# What ships of the extension: everything but its developer notes.
SHIPPED_SUFFIXES = {".json", ".js", ".html", ".css", ".png"}


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return next(out.glob("*.whl")), next(out.glob("*.tar.gz"))


def _extension_files() -> list[str]:
    folder = ROOT / "extension"
    return sorted(p.relative_to(ROOT).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.suffix in SHIPPED_SUFFIXES)


def test_the_checkout_has_what_the_lists_below_expect():
    files = _extension_files()
    for name in ("extension/manifest.json", "extension/generated/protocol.js",
                 "extension/generated/content-protocol.js", "extension/generated/tools.js",
                 "extension/ui/sidepanel.html", "extension/ui/settings.html"):
        assert name in files


def test_the_wheel_carries_the_extension_and_the_demo_pages(dists: tuple[Path, Path]):
    names = set(zipfile.ZipFile(dists[0]).namelist())
    missing = [f for f in _extension_files() if f not in names]
    assert missing == []
    assert {"host/demo/shop.html", "host/demo/bank.html"} <= names
    # Chrome refuses to load an unpacked extension holding a name that starts with "_".
    reserved = [n for n in names if n.startswith("extension/") and any(p.startswith("_") for p in n.split("/"))]
    assert reserved == []


def test_the_sdist_carries_the_extension(dists: tuple[Path, Path]):
    with tarfile.open(dists[1]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    missing = [f for f in _extension_files() if f not in names]
    assert missing == []
