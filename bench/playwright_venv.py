"""A scratch venv with Python Playwright, for the benchmarks that set our figures against it.
Playwright drives Debian's Chromium (connect_over_cdp to the benchmark's own browser), so its
browser download, which fails here, is never needed."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

VENV = Path(os.environ.get("TABWARDEN_BENCH_VENV", Path(tempfile.gettempdir()) / "tabwarden-bench-playwright"))


def ensure_playwright() -> Path | None:
    """A scratch venv with Python playwright (the browser comes from Debian, never downloaded)."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", "import playwright.async_api"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "playwright"], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"playwright could not be installed: {done.stderr[-400:]}")
        return None
    return python
