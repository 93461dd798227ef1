"""`tabwarden demo`: a scripted agent (a replay model, clearly not an AI) on bundled local pages:
it reads a page, fills a form, meets an approval, is denied on a sensitive origin, and prints the
audit trail. Headless by default; nothing of the user's own state is touched."""

from __future__ import annotations

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument("--approve", choices=("accept", "decline", "ask"), default="ask",
                        help="how to answer the approval the agent meets (default: ask on the terminal)")
    parser.add_argument("--headed", action="store_true", help="show the browser window")
    parser.add_argument("--browser", metavar="NAME|PATH", help="as for `tabwarden launch`")


def run(args: argparse.Namespace) -> int:
    if args.approve == "ask" and not sys.stdin.isatty():
        print("tabwarden demo: no terminal to ask on; pass --approve accept or --approve decline", file=sys.stderr)
        return 2
    from host.demo.run import DemoOptions, run_demo

    try:
        return run_demo(DemoOptions(approve=args.approve, headed=args.headed, browser=args.browser))
    except KeyboardInterrupt:  # the browser is already stopped by then (launch cleans up in `finally`)
        print("\ntabwarden demo: interrupted", file=sys.stderr)
        return 130
