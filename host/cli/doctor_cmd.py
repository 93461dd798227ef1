"""`tabwarden doctor`."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds to wait for the host's pong (by default long enough for a slow machine's cold start)")


def run(args: argparse.Namespace) -> int:
    from host.cli.settings_checks import run as settings_checks
    from install.doctor import run as run_doctor

    checks = (run_doctor() if args.timeout is None else run_doctor(timeout=args.timeout)) + settings_checks()
    failed = 0
    for check in checks:
        mark = "ok  " if check.ok else "FAIL"
        line = f"[{mark}] {check.subject}: {check.name}"
        if check.detail:
            line += f" - {check.detail}"
        print(line)
        if not check.ok:
            failed += 1
            print(f"       fix: {check.fix}")
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0
