"""Sub-commands whose issue has not landed yet: they say so and fail, never pretend."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    print(f"tabwarden {args.command}: not built yet", file=sys.stderr)
    return 3
