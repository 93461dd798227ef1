"""`tabwarden launch` (what `make launch` runs): a browser with the extension in a dedicated
profile, its host, and the debug REPL attached to it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--browser", metavar="NAME|PATH",
                        help="chromium, chrome, edge, brave, or the browser's executable (default: the first found, "
                             "in that order)")
    parser.add_argument("--headless", action="store_true", help="no window (for servers and tests)")
    parser.add_argument("--keep", action="store_true", help="leave the browser running after the REPL ends")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="browser profile folder (default: a dedicated one under Tabwarden's data folder)")
    parser.add_argument("--extension", type=Path, metavar="DIR", help="load this unpacked extension instead of the bundled one")
    parser.add_argument("--site-access", action="append", default=[], metavar="PATTERN",
                        help="grant the extension site access to PATTERN (e.g. 'http://127.0.0.1/*') up front, "
                             "where nobody can click the grant (headless); repeatable")
    parser.add_argument("--load-via", choices=("auto", "flag", "pipe"), default="auto",
                        help="how to load the extension: --load-extension (flag), the debugging pipe (pipe), or "
                             "auto (pipe for Google Chrome, which ignores the flag)")
    parser.add_argument("--url", default="about:blank", help="the first page to open")
    parser.add_argument("--host-timeout", type=float, default=30.0, metavar="SECONDS",
                        help="how long to wait for the host to connect")


def run(args: argparse.Namespace) -> int:
    from host.launch.runner import LaunchOptions, launch

    options = LaunchOptions(
        browser=args.browser, headless=args.headless, keep=args.keep, profile=args.profile,
        extension=args.extension, site_access=args.site_access, load_via=args.load_via, url=args.url,
        host_timeout=args.host_timeout,
    )
    try:
        return launch(options)
    except KeyboardInterrupt:  # the browser is already stopped by then (launch cleans up in `finally`)
        print("\ntabwarden launch: interrupted", file=sys.stderr)
        return 130
