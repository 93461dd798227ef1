"""Real-browser test harness: headless Chromium with our unpacked extension and the real host.

Each run is kept apart from the machine and from other runs: a fresh profile, the host registered
with `tabwarden install --user-data-dir` for that profile only, the browser in its own session,
and a three-step stop (SIGTERM the browser, SIGKILL the group, then end by PID anything naming
the run dir) so that nothing outlives the run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "extension"
CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser_required() -> bool:
    """CI (and `.ci/run`) require the browser: a missing one fails instead of skipping."""
    return os.environ.get("TABWARDEN_REQUIRE_BROWSER") == "1" or os.environ.get("CI", "").lower() == "true"


def find_chromium() -> str | None:
    """The first Chromium binary found on this machine, or None."""
    for candidate in CANDIDATES:
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.access(path, os.X_OK):
            return path
    return None


def require_chromium() -> str:
    """The Chromium binary; without one the test is skipped, or failed where the browser is
    required."""
    path = find_chromium()
    if path is None:
        message = "Chromium not found (apt-get install chromium)"
        if browser_required():
            pytest.fail(message + " - real-browser tests are required here", pytrace=False)
        pytest.skip(message)
    return path


class BrowserRun:
    """One headless Chromium with the extension, its profile and its host's home."""

    def __init__(self, run_dir: Path, *, host_permissions: list[str] | None = None, start_url: str = "about:blank",
                 browser_args: list[str] | None = None):
        self.run_dir = run_dir
        self.binary = require_chromium()
        self.profile = run_dir / "profile"
        self.home = run_dir / "home"
        self.tmp = run_dir / "tmp"
        self.tw_home = run_dir / "tabwarden"
        self.extension = run_dir / "extension"
        self.log_path = run_dir / "chromium.log"
        self.start_url = start_url
        self.host_permissions = host_permissions or []
        self.browser_args = list(browser_args or [])  # e.g. --host-resolver-rules for sites by name
        self.proc: subprocess.Popen | None = None
        self._process = None

    # environment for everything that must see this run's Tabwarden home
    def env(self) -> dict[str, str]:
        """The environment of everything this run starts: its own HOME, TMPDIR and Tabwarden home."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
        env.update(HOME=str(self.home), TMPDIR=str(self.tmp), TABWARDEN_HOME=str(self.tw_home))
        # The extension is this run's copy, as a headless launch's: its host may add sites to it.
        from host.browser.site_grant import EXTENSION_COPY_ENV

        env[EXTENSION_COPY_ENV] = str(self.extension)
        return env

    def prepare(self) -> None:
        """Create the run's folders, copy the extension (with `host_permissions`, if given) and
        register the host for the profile."""
        for folder in (self.profile, self.home, self.tmp, self.tw_home):
            folder.mkdir(parents=True, exist_ok=True)
        shutil.copytree(EXTENSION, self.extension)
        from host.launch.profile import allow_unpacked_reload

        allow_unpacked_reload(self.profile)  # as a headless launch does, so the copy may reload
        if self.host_permissions:
            manifest_path = self.extension / "manifest.json"
            manifest = json.loads(manifest_path.read_text())
            manifest["host_permissions"] = self.host_permissions
            manifest_path.write_text(json.dumps(manifest, indent=2))
        self.cli("install", "--user-data-dir", str(self.profile))

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """Run `tabwarden ARGS` with this run's environment."""
        return subprocess.run([sys.executable, "-m", "host", *args], env=self.env(), capture_output=True,
                              text=True, timeout=60, check=check, cwd=str(self.run_dir))

    def start(self) -> None:
        """Start headless Chromium with the extension, a DevTools port and the browser's log."""
        from host.launch.browser_process import BrowserProcess
        from host.launch.flags import browser_argv

        argv = browser_argv(Path(self.binary), self.profile, self.extension, headless=True, load_via_pipe=False,
                            start_url=self.start_url)
        # Tests also want a DevTools port (Playwright, direct CDP) and the browser's own log.
        argv[-1:-1] = ["--remote-debugging-port=0", "--enable-logging=stderr", "--v=0", *self.browser_args]
        self._process = BrowserProcess(argv, self.env(), self.log_path, marker=str(self.run_dir))
        self._process.start(cwd=self.run_dir)
        self.proc = self._process.proc

    def host_pids(self) -> list[int]:
        """PIDs of our hosts started for this run (their environment names the run folder)."""
        found = []
        marker = str(self.run_dir).encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"-m\x00host\x00host" in cmdline and marker in environ:
                found.append(int(entry.name))
        return found

    def stop(self, timeout: float = 5.0) -> int | None:
        """Stop the browser and everything it started, as `tabwarden launch` does; return the
        browser's exit code."""
        if getattr(self, "_process", None) is None:
            return None
        return self._process.stop(grace=timeout).exit_code

    def diagnostics(self) -> str:
        """Browser log tail and host log tail, for failure reports."""
        parts = []
        for path in (self.log_path, self.tw_home / "log" / "host.log"):
            try:
                text = path.read_text(errors="replace")
            except OSError:
                continue
            parts.append(f"--- {path.name} (tail) ---\n{text[-4000:]}")
        return "\n".join(parts)

