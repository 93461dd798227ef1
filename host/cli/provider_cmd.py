"""`tabwarden provider remove NAME`: remove a model provider and its stored API key.

The same operation as the settings page's Remove button and the REPL's `tw.remove_provider`
(host/providers/removal.py), on the settings files directly, so it works whether a host runs or
not (a running host reads engine.json again at each task; an open settings page shows the change
when it next loads its settings).
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{remove}")
    remove = sub.add_parser("remove", help="remove a provider and its stored API key",
                            description="remove a provider from engine.json and its API key from the key store")
    remove.add_argument("name", help="the provider's name, as the settings page shows it")
    remove.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")


def run(args: argparse.Namespace) -> int:
    from host.config_files import EditRefused
    from host.providers.removal import remove_provider
    from host.providers.secrets import SecretError, default_key_store

    try:
        removed = remove_provider(args.name, default_key_store())
    except (EditRefused, SecretError) as exc:
        code = getattr(exc, "code", "key_store")
        message = getattr(exc, "message", str(exc))
        if args.json:
            print(json.dumps({"ok": False, "error": {"code": code, "message": message}}))
        else:
            print(f"tabwarden provider remove: {code}: {message}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"ok": True, **removed.to_wire()}))
    else:
        print(removed.message())
    return 0
