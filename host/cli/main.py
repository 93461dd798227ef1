"""`tabwarden` dispatcher.

Only the chosen sub-command's module is imported, so `tabwarden host` (what the browser
launches) does not pay for the REPL, the installer or pydantic.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import NamedTuple


class Command(NamedTuple):
    module: str
    summary: str


# Each module defines `add_arguments(parser)` and `run(args) -> int`.
COMMANDS: dict[str, Command] = {
    "host": Command("host.cli.host_cmd", "run the native host (what the browser launches)"),
    "install": Command("host.cli.install_cmd", "register the native host with installed browsers"),
    "uninstall": Command("host.cli.install_cmd", "remove exactly what install wrote"),
    "doctor": Command("host.cli.doctor_cmd", "check every registration and talk to the host"),
    "policy": Command("host.cli.policy_cmd", "check, explain and test permission decisions"),
    "audit": Command("host.cli.audit_cmd", "list, export and verify the audit log"),
    "skill": Command("host.cli.skill_cmd", "install, list, check and remove skills (Agent Skills folders or zips)"),
    "plugin": Command("host.cli.skill_cmd", "review, install and remove plugins (skills, MCP servers, stricter rules)"),
    "provider": Command("host.cli.provider_cmd", "list, add or remove model providers and their API keys"),
    "launch": Command("host.cli.launch_cmd", "start a browser with the extension and open the REPL"),
    "repl": Command("host.cli.repl_cmd", "attach a debug REPL to the running host"),
    "demo": Command("host.cli.demo_cmd", "run the scripted demo on bundled local pages"),
}


def _usage() -> str:
    options = {"--version": "print the version and exit", "-h, --help": "show this help and exit"}
    width = max(map(len, [*COMMANDS, *options]))
    lines = ["usage: tabwarden <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {cmd.summary}" for name, cmd in COMMANDS.items()]
    lines += ["", "options:"] + [f"  {name:<{width}}  {summary}" for name, summary in options.items()]
    lines += ["", "Run `tabwarden <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command and return its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from host import __version__

        print(f"tabwarden {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    command = COMMANDS.get(name)
    if command is None:
        print(f"tabwarden: there is no command {name!r}; `tabwarden --help` lists them", file=sys.stderr)
        return 2
    module = importlib.import_module(command.module)
    parser = argparse.ArgumentParser(prog=f"tabwarden {name}", description=command.summary)
    module.add_arguments(parser, name)
    args = parser.parse_args(rest)
    args.command = name
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as a shell tool does, instead of a
        # traceback; output still buffered would fail again at exit, so it goes to /dev/null.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
