"""Logging for the host: a rotating file under the log dir, stderr when interactive.

Never stdout: in host mode stdout carries frames only.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys

from host.paths import dirs, ensure

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def setup(name: str = "host", level: int = logging.INFO, stderr: bool | None = None) -> str:
    """Configure the root logger; return the log file path."""
    folder = ensure(dirs().log)
    path = folder / f"{name}.log"
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=5 * 1024 * 1024, backupCount=3, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    if stderr if stderr is not None else sys.stderr.isatty():
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(console)
    root.setLevel(level)
    # Libraries that log chatty connection details stay quiet unless asked.
    for noisy in ("websockets", "httpx", "httpcore", "httpx2", "httpcore2", "mcp", "cdp_use"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return str(path)
