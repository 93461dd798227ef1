"""Where the files the application ships besides its Python modules are: the unpacked extension
(manifest, generated protocol files, pages) and the pages other packages carry.

They are found as installed package data (the import system's view of a package, never a path
relative to this file): the wheel installs the extension as the data-only package `extension`,
and an editable install maps that same name onto the checkout, so one lookup serves both. It lives in `protocol`, the bottom layer, because the
generators here write into the extension and every other layer reads it.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from protocol.errors import TabwardenError

EXTENSION_PACKAGE = "extension"
MANIFEST = "manifest.json"


class BundleError(TabwardenError):
    """A file the installation should carry is missing: a broken or partial install."""

    code = "bundle_missing"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def extension_dir() -> Path:
    """The unpacked extension's folder (the one holding `manifest.json`), as a real directory
    the browser can load."""
    # The package's import spec, not importlib.resources: the host asks this at every start, and
    # the spec costs no import. A namespace package spans every `extension` folder on sys.path:
    # ours is the one holding the manifest.
    spec = importlib.util.find_spec(EXTENSION_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BundleError(f"the extension is not installed with Tabwarden (no package {EXTENSION_PACKAGE!r}); "
                          "reinstall Tabwarden from its wheel")
    for folder in spec.submodule_search_locations:
        if (Path(folder) / MANIFEST).is_file():
            return Path(folder)
    raise BundleError(f"the extension's {MANIFEST} is missing from the installation "
                      f"({', '.join(spec.submodule_search_locations)}); reinstall Tabwarden from its wheel")


def data_file(package: str, name: str) -> bytes:
    """The bytes of a data file shipped inside `package` (e.g. a demo page)."""
    import importlib.resources  # not at module level: the host's start-up never needs it

    resource = importlib.resources.files(package).joinpath(name)
    try:
        return resource.read_bytes()
    except OSError as exc:
        raise BundleError(f"{name} is missing from the installed package {package} ({exc}); "
                          "reinstall Tabwarden from its wheel") from exc
