"""`tabwarden install` and `tabwarden uninstall`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--browser", action="append", choices=["chrome", "chromium", "edge", "brave", "all"],
                        help="browser to (un)register; repeatable; default: every installed one")
    parser.add_argument("--user-data-dir", type=Path, help="a dedicated browser profile folder")
    if name == "install":
        parser.add_argument("--extension-id", action="append", dest="extension_ids",
                            help="allow this extension id (default: the id fixed by extension/manifest.json)")


def run(args: argparse.Namespace) -> int:
    from install.installation import current
    from protocol.bundle import BundleError
    from install.installer import InstallError, install, uninstall

    udd = args.user_data_dir.resolve() if args.user_data_dir else None
    if args.command == "uninstall":
        removed = uninstall(args.browser, udd)
        for item in removed:
            print(f"removed {item}")
        if not removed:
            print("nothing to remove")
        return 0
    ids = args.extension_ids or None
    if ids:
        import re

        bad = [i for i in ids if not re.fullmatch(r"[a-p]{32}", i)]
        if bad:
            print(f"tabwarden install: not an extension id: {', '.join(bad)} (32 letters a-p)", file=sys.stderr)
            return 2
    try:
        placements = install(args.browser, udd, ids)
    except (InstallError, BundleError, ValueError) as exc:
        print(f"tabwarden install: {exc}", file=sys.stderr)
        return 1
    for where in placements:
        print(f"registered for {where.browser}: {where.describe()}")
    print(f"it runs this installation: {current().describe()}")
    print("check with: tabwarden doctor")
    return 0
