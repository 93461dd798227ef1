"""The folders one launch uses: a dedicated browser profile per browser (kept between launches,
under the platformdirs data dir) and a run folder per launch (the browser's temporary files, its
log, an extension copy when site access is granted up front).

The run folder lives in a short temporary path on purpose: Chromium creates its singleton
socket inside TMPDIR, and a Unix socket path may not exceed about 107 bytes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from host.launch.errors import LaunchError

from host.paths import dirs, ensure
from protocol.bundle import extension_dir

PROFILES = "profiles"
RUN_PREFIX = "tw-launch-"


@dataclass(frozen=True)
class LaunchDirs:
    profile: Path  # the browser's --user-data-dir, reused by later launches
    run: Path  # this launch only: every process it starts names it (TMPDIR), so leftovers are found by it

    @property
    def tmp(self) -> Path:
        return self.run / "tmp"

    @property
    def browser_log(self) -> Path:
        return self.run / "browser.log"


def default_profile(browser_key: str) -> Path:
    """The dedicated profile for a browser: `<data dir>/profiles/<browser>`."""
    return dirs().data / PROFILES / browser_key


def _short_temp_root() -> str | None:
    # /tmp rather than a long per-user TMPDIR (macOS), where the OS has one.
    if sys.platform != "win32" and os.path.isdir("/tmp") and os.access("/tmp", os.W_OK | os.X_OK):
        return "/tmp"
    return None


def prepare(browser_key: str, profile: Path | None = None) -> LaunchDirs:
    """Create the profile (if new) and a fresh, private run folder for this launch."""
    chosen = (profile or default_profile(browser_key)).resolve()
    ensure(chosen)
    run = Path(tempfile.mkdtemp(prefix=RUN_PREFIX, dir=_short_temp_root())).resolve()  # mode 0700
    ensure(run / "tmp")
    return LaunchDirs(chosen, run)


def remove_run(dirs_: LaunchDirs) -> None:
    """Delete the run folder (after everything that used it has stopped)."""
    shutil.rmtree(dirs_.run, ignore_errors=True)


_PATTERN = re.compile(r"^(https?|\*)://(\*|(\*\.)?[^/*:]+)(:\d{1,5})?(/.*)?$")


def site_access_pattern(text: str) -> str:
    """The match pattern `--site-access` grants: a pattern as Chrome writes them
    (`https://*.example.com/*`, `<all_urls>`), or a plain origin (`https://example.com`), which
    means all of its pages. Raises LaunchError for anything else (the browser would refuse the
    extension's manifest)."""
    text = text.strip()
    if text == "<all_urls>":
        return text
    match = _PATTERN.match(text)
    if match is None:
        raise LaunchError(f"--site-access {text!r} is not a site: use an origin such as https://example.com or a "
                          "match pattern such as 'https://*.example.com/*'")
    return text if match.group(5) else text + "/*"


def extension_with_site_access(source: Path, run: Path, patterns: list[str]) -> Path:
    """A copy of the unpacked extension whose manifest already grants site access to `patterns`
    (match patterns such as `http://127.0.0.1/*`), for runs where nobody can click the grant in
    the side panel (headless). The key is kept, so the extension id stays the same."""
    target = run / "extension"
    shutil.copytree(source, target)
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["host_permissions"] = sorted({*manifest.get("host_permissions", []), *patterns})
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return target


def allow_unpacked_reload(profile_dir: Path) -> None:
    """Turn on developer mode in the profile's preferences: without it Chromium disables an
    unpacked extension that reloads (as a headless run's does to take a site `tw.grant_site`
    added). Other preferences are kept; an unreadable file is left alone."""
    path = profile_dir / "Default" / "Preferences"
    try:
        prefs = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError):
        return
    extensions = prefs.setdefault("extensions", {}) if isinstance(prefs, dict) else None
    ui = extensions.setdefault("ui", {}) if isinstance(extensions, dict) else None
    if not isinstance(ui, dict):
        return
    ui["developer_mode"] = True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(prefs), encoding="utf-8")


def bundled_extension() -> Path:
    """The unpacked extension installed with Tabwarden."""
    return extension_dir()


def profile_in_use(profile: Path) -> int | None:
    """The PID of a live browser holding `profile` (Chromium's SingletonLock names it as
    `host-pid`), or None. A second browser on the same profile would only hand over its URL."""
    from host.control.liveness import pid_alive

    try:
        target = os.readlink(profile / "SingletonLock")
    except OSError:
        return None
    pid_text = target.rsplit("-", 1)[-1]
    if pid_text.isdigit() and pid_alive(int(pid_text)):
        return int(pid_text)
    return None
