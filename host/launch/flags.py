"""The browser's command line for a launch: a dedicated profile that asks nothing at start and
keeps its passwords out of the OS keyring, our extension loaded by flag (or over the debugging
pipe, for browsers that ignore the flag), and for headless runs no GPU, no reliance on a small
/dev/shm and no background traffic."""

from __future__ import annotations

import os
from pathlib import Path

# Headless runs have nobody to answer prompts and no reason to call home.
HEADLESS = ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-quic")
ALWAYS = ("--no-first-run", "--no-default-browser-check", "--password-store=basic", "--use-mock-keychain")


def browser_argv(executable: Path, profile: Path, extension: Path, *, headless: bool, load_via_pipe: bool,
                 start_url: str = "about:blank") -> list[str]:
    """argv for the browser: dedicated profile, our extension (by flag, or over the debugging
    pipe for browsers that ignore the flag), headless extras, and the start page."""
    argv = [str(executable), *ALWAYS, f"--user-data-dir={profile}"]
    if headless:
        argv += HEADLESS
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox on
    if load_via_pipe:
        argv += ["--remote-debugging-pipe", "--enable-unsafe-extension-debugging"]
    else:
        argv += [f"--load-extension={extension}", f"--disable-extensions-except={extension}"]
    argv.append(start_url)
    return argv
