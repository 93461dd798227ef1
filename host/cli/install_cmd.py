"""`tabwarden install` and `tabwarden uninstall`.

`install` refuses, before writing anything, what is most likely a mistake: a `--user-data-dir`
that is a file, or a folder that does not exist (a typo would otherwise become a new, empty
profile the browser never uses) unless `--create` asks for it; and a browser named with
`--browser` that is not installed, saying where it looked and what to do.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--browser", action="append", choices=["chrome", "chromium", "edge", "brave", "all"],
                        help="browser to (un)register; repeatable; default: every installed one")
    parser.add_argument("--user-data-dir", type=Path, help="a dedicated browser profile folder")
    if name == "install":
        parser.add_argument("--create", action="store_true",
                            help="create the --user-data-dir folder when it does not exist yet (a new profile)")
        parser.add_argument("--extension-id", action="append", dest="extension_ids",
                            help="allow this extension id (default: the id fixed by extension/manifest.json)")


def run(args: argparse.Namespace) -> int:
    from install.installation import current
    from protocol.bundle import BundleError
    from install.extension_id import default_extension_id
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
        ids = ids or [default_extension_id()]  # first: a broken installation says so before anything else
        if udd is not None:
            problem, status = _folder_problem(args.user_data_dir, udd, args.create), 2
        else:
            problem, status = _missing_browsers(args.browser), 1
        if problem:
            print(f"tabwarden install: {problem}", file=sys.stderr)
            return status
        placements = install(args.browser, udd, ids)
    except (InstallError, BundleError, ValueError) as exc:
        print(f"tabwarden install: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tabwarden install: cannot write the registration: {exc}", file=sys.stderr)
        return 1
    for where in placements:
        print(f"registered for {where.browser}: {where.describe()}")
    print(f"it runs this installation: {current().describe()}")
    print("check with: tabwarden doctor")
    return 0


def _folder_problem(given: Path, folder: Path, create: bool) -> str:
    """Why `folder` (the --user-data-dir, as `given` on the command line) cannot be used ("" when
    it can): a file, something that is no folder, or a folder that does not exist without --create."""
    if folder.is_dir():
        return ""
    if folder.exists():
        return (f"--user-data-dir {given} is a file, not a folder: give the browser profile folder (the one the "
                "browser's --user-data-dir names)")
    blocked = next((p for p in folder.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        return f"--user-data-dir {given} cannot be a folder: {blocked} is a file"
    if create:
        return ""
    return (f"the folder {given} does not exist, so nothing was registered; check its spelling, or add --create to "
            "make it as a new profile folder")


def _missing_browsers(names: list[str] | None) -> str:
    """The browsers named with --browser that are not installed, where install looked for
    them and what to do ("" when every one was found; `all` and no name mean "those found")."""
    from install.installer import Environment, installed_browsers, not_found

    if not names or "all" in names:
        return ""
    envr = Environment()
    missing = [name for name in dict.fromkeys(names) if not_found(name, envr)]
    if not missing:
        return ""
    lines = [not_found(name, envr) for name in missing]
    found = installed_browsers(envr)
    others = f", register one that is installed (found: {', '.join(found)}, e.g. --browser {found[0]})" if found else ""
    lines.append(f"Nothing was registered. Install it and run this again (installed somewhere else? start it once, so "
                 f"that it makes its profile folder){others}, or register a dedicated profile folder with "
                 "--user-data-dir DIR.")
    return "\n".join(lines)
