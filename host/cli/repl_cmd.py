"""`tabwarden repl`: attach a debug REPL to a running host."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--pid", type=int, help="the host to attach to (default: the newest running host)")
    parser.add_argument("--list", action="store_true", help="list the running hosts and exit")


def run(args: argparse.Namespace) -> int:
    if args.list:
        return _list_hosts()
    from host.repl.session import run_repl

    return run_repl(args.pid)


def _list_hosts() -> int:
    import time

    from host.control.discovery import running_hosts

    hosts = running_hosts()
    for entry in hosts:
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.started_at))
        print(f"pid {entry.pid}  started {started}  {entry.transport} {entry.socket_path}")
    if not hosts:  # exit 1 so a script can tell
        print("tabwarden repl: no running Tabwarden host; the browser starts one when the Tabwarden extension loads "
              "(`tabwarden doctor` checks the set-up)", file=sys.stderr)
        return 1
    return 0
