"""A scratch venv with the public `agentdojo` package, for exporting its suites as provenance cases.

agentdojo pulls in LLM client libraries (openai, anthropic, ...) that must never enter our own
venv, so it lives in its own venv under the temp dir (TABWARDEN_AGENTDOJO_VENV overrides the
path). Run as a script, it makes the venv and prints its python:

    python bench/agentdojo_venv.py
    "$(python bench/agentdojo_venv.py)" bench/agentdojo_export.py --out bench/agentdojo_cases.jsonl
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

AGENTDOJO_VERSION = "0.1.35"
VENV = Path(os.environ.get("TABWARDEN_AGENTDOJO_VENV", Path(tempfile.gettempdir()) / "tabwarden-agentdojo"))


def ensure_agentdojo() -> Path | None:
    """The python of a scratch venv holding agentdojo at AGENTDOJO_VERSION, made on first use."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c",
             f"import importlib.metadata as m, sys; sys.exit(m.version('agentdojo') != {AGENTDOJO_VERSION!r})"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", f"agentdojo=={AGENTDOJO_VERSION}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"agentdojo could not be installed: {done.stderr[-400:]}", file=sys.stderr)
        return None
    return python


if __name__ == "__main__":
    found = ensure_agentdojo()
    if found is None:
        sys.exit(1)
    print(found)
