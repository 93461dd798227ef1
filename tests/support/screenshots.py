"""Screenshots of the extension's pages for people to look at: `test-output/<folder>/<name>-<scheme>.png`
at the repository root (git-ignored), in the light and the dark colour scheme."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.browser import ROOT


def save_shots(page: Any, folder: str, name: str, *, target: Any = None, full_page: bool = False,
               schemes: tuple[str, ...] = ("light", "dark")) -> list[Path]:
    """Screenshot `page` (or only the locator `target` on it) once per colour scheme; the page is
    left in the light scheme."""
    out = ROOT / "test-output" / folder
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for scheme in schemes:
        page.emulate_media(color_scheme=scheme)
        path = out / f"{name}-{scheme}.png"
        if target is not None:
            target.screenshot(path=str(path))
        else:
            page.screenshot(path=str(path), full_page=full_page)
        paths.append(path)
    page.emulate_media(color_scheme="light")
    return paths
