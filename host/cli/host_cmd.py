"""`tabwarden host`: the native-messaging host the browser starts."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("origin", nargs="?", help="caller origin passed by the browser (chrome-extension://<id>/)")
    parser.add_argument("--parent-window", help=argparse.SUPPRESS)  # Windows adds it
    parser.add_argument("extra", nargs="*", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from host.nativehost.main import run_host

    argv = [a for a in [args.origin, *args.extra] if a]
    return run_host(argv)
