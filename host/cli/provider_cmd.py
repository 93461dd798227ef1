"""`tabwarden provider list | add | default | remove`: the model providers, from a terminal or a
script.

The same settings as the settings page's providers (engine.json, keys in the key store:
host/providers/adding.py and removal.py), on the files directly, so it works whether a host runs
or not and on a machine without a display (a running host reads engine.json again at each task;
an open settings page shows the change when it next loads its settings).

An API key is never an argument, where it would stay in the shell's history and show in the
process list: `add` reads it from standard input when that is piped, else asks for it without
echo. Validation errors exit 2 and write nothing; `list` says where each key is, never the key.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{list,add,default,remove}")
    listed = sub.add_parser("list", help="the providers, their models and where their keys are",
                            description="list the providers in engine.json: name, kind, model, base URL and where "
                                        "each API key is kept (never the key)")
    listed.add_argument("--json", action="store_true", help="print the providers as JSON")

    add = sub.add_parser("add", help="add a provider; its API key is read from standard input or a hidden prompt",
                         description="add a model provider to engine.json and store its API key in the OS keyring "
                                     "(or a 0600 file where there is none). The key is read from standard input "
                                     "when it is piped (`printenv OPENAI_API_KEY | tabwarden provider add ...`), "
                                     "otherwise asked for without echo; it is never an argument.")
    add.add_argument("kind", help="openai (OpenAI-compatible Chat Completions) or anthropic (Anthropic Messages)")
    add.add_argument("name", help="a name for it (1-64 of A-Z a-z 0-9 _ . -), as the settings page shows it")
    add.add_argument("model", help="the model, such as gpt-4.1-mini or claude-sonnet-4-5")
    add.add_argument("--base-url", metavar="URL",
                     help="the server's URL (default: https://api.openai.com/v1 or https://api.anthropic.com)")
    keys = add.add_mutually_exclusive_group()
    keys.add_argument("--key-env", metavar="VAR", help="read the key from this environment variable at each use "
                                                       "instead of storing it")
    keys.add_argument("--no-key", action="store_true", help="the server needs no key (a local one)")
    add.add_argument("--default", action="store_true", help="make it the default provider")
    add.add_argument("--replace", action="store_true", help="replace a provider of the same name (and its key)")
    add.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")

    default = sub.add_parser("default", help="make a provider the default one",
                             description="make a provider the default: the one new tasks use")
    default.add_argument("name", help="the provider's name, as `tabwarden provider list` shows it")
    default.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")

    remove = sub.add_parser("remove", help="remove a provider and its stored API key",
                            description="remove a provider from engine.json and its API key from the key store; "
                                        "asks first on a terminal (--yes does not)")
    remove.add_argument("name", help="the provider's name, as `tabwarden provider list` shows it")
    remove.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    remove.add_argument("--json", action="store_true", help="print the result (or the error) as JSON")


def run(args: argparse.Namespace) -> int:
    return {"list": _list, "add": _add, "default": _default, "remove": _remove}[args.action](args)


def _fail(args: argparse.Namespace, code: str, message: str, status: int) -> int:
    """Report an error as one line on stderr (or JSON on stdout) and return `status`."""
    if args.json:
        print(json.dumps({"ok": False, "error": {"code": code, "message": message}}))
    else:
        print(f"tabwarden provider {args.action}: {code}: {message}", file=sys.stderr)
    return status


def _store() -> Any:
    """The key store this machine uses (the OS keyring when usable, else the 0600 file)."""
    from host.providers.secrets import default_key_store

    return default_key_store()


# ------------------------------------------------------------------ list


def _list(args: argparse.Namespace) -> int:
    from host.config_files import ConfigFileError
    from host.providers.adding import list_providers
    from host.providers.config import config_path

    try:
        providers = list_providers(_store())
    except ConfigFileError as exc:
        return _fail(args, "invalid_settings", f"the engine settings cannot be read: {exc}", 1)
    if args.json:
        print(json.dumps({"ok": True, "providers": [p.to_wire() for p in providers]}))
        return 0
    if not providers:
        print(f"No providers in {config_path()}. Add one with: tabwarden provider add openai NAME MODEL")
        return 0
    rows = [("", "name", "kind", "model", "base URL", "API key")]
    rows += [("*" if p.default else "", p.name, p.kind, p.model, p.base_url, p.key) for p in providers]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    if any(p.default for p in providers):
        print("* the default provider")
    return 0


# ------------------------------------------------------------------ add


def _add(args: argparse.Namespace) -> int:
    from host.config_files import EditRefused
    from host.providers.adding import KEY_STORE, NO_KEY, add_provider, check_addition

    try:
        # Before asking for a key: a typo in the name or URL should not cost the user a paste.
        check_addition(args.name, args.kind, args.model, args.base_url, replace=args.replace,
                       make_default=args.default, api_key_env=args.key_env)
        # "" is a provider that takes no key; None one whose key comes from an environment variable.
        key = "" if args.no_key else None if args.key_env else _read_key(args)
        if key == "" and not args.no_key:
            raise EditRefused(NO_KEY, "the API key read was empty, so nothing was added; pipe the key on standard "
                                      "input or type it at the prompt, or pass --no-key for a server that needs none "
                                      "- at `$.apiKey`")
        added = add_provider(args.name, args.kind, args.model, args.base_url, key, _store(),
                             replace=args.replace, make_default=args.default, api_key_env=args.key_env)
    except EditRefused as exc:
        return _fail(args, exc.code, exc.message, 1 if exc.code == KEY_STORE else 2)  # 2: the input was wrong
    if args.json:
        print(json.dumps({"ok": True, **added.to_wire()}))
    else:
        print(added.message())
    return 0


def _read_key(args: argparse.Namespace) -> str:
    """The API key: standard input when piped (its first line), else a prompt without echo."""
    if sys.stdin is None:
        return ""
    if not sys.stdin.isatty():
        return sys.stdin.readline().strip()
    import getpass

    try:
        return getpass.getpass(f"API key for {args.name!r} (not shown): ").strip()
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        return ""


# ------------------------------------------------------------------ default


def _default(args: argparse.Namespace) -> int:
    from host.config_files import EditRefused
    from host.providers.adding import set_default

    try:
        said = set_default(args.name)
    except EditRefused as exc:
        return _fail(args, exc.code, exc.message, 1)
    print(json.dumps({"ok": True, "defaultProvider": args.name, "message": said}) if args.json else said)
    return 0


# ------------------------------------------------------------------ remove


def _remove(args: argparse.Namespace) -> int:
    from host.config_files import EditRefused
    from host.providers.removal import NOT_FOUND, remove_provider
    from host.providers.secrets import SecretError

    try:
        store = _store()
        if not args.yes and sys.stdin is not None and sys.stdin.isatty() and not args.json:
            known = _known_names()
            if known is not None and args.name not in known:
                listed = ", ".join(sorted(known)) or "none"
                raise EditRefused(NOT_FOUND, f"there is no provider named {args.name!r} (providers: {listed}) - at "
                                             "`$.name`")
            if not _confirm(f"Remove provider {args.name!r} and its stored API key? [y/N] "):
                print("Nothing removed.")
                return 1
        removed = remove_provider(args.name, store)
    except (EditRefused, SecretError) as exc:
        return _fail(args, getattr(exc, "code", "key_store"), getattr(exc, "message", str(exc)), 1)
    if args.json:
        print(json.dumps({"ok": True, **removed.to_wire()}))
    else:
        print(removed.message())
    return 0


def _known_names() -> set[str] | None:
    """The providers' names (None when engine.json cannot be read: the removal says why)."""
    from host.config_files import ConfigFileError
    from host.providers.config import load_config

    try:
        return set(load_config().providers)
    except ConfigFileError:
        return None


def _confirm(question: str) -> bool:
    """Ask a yes/no question on the terminal; anything but y/yes is no."""
    try:
        return input(question).strip().lower() in ("y", "yes")
    except (EOFError, KeyboardInterrupt):
        print()
        return False
