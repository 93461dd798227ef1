"""`tabwarden audit list|export|verify`: read the permission audit log.

`list` is for people: newest first, so the last thing that happened is on top (`--limit N` shows
the newest N). `export` is for programs: oldest first, the order of the hash chain.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from datetime import datetime
from pathlib import Path

from protocol.permissions import VERDICTS

_RELATIVE = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    sub = parser.add_subparsers(dest="action", required=True, metavar="{list,export,verify}")
    for action, summary in (("list", "show audit entries as a table, newest first"),
                            ("export", "write audit entries as JSON Lines, oldest first"),
                            ("verify", "check the hash chain; non-zero exit at the first broken row")):
        p = sub.add_parser(action, help=summary, description=summary)
        p.add_argument("--db", type=Path, metavar="PATH", help="the database (default: the data dir's)")
        if action != "verify":
            p.add_argument("--thread", help="only this thread id")
            p.add_argument("--tool", help="only this tool")
            p.add_argument("--verdict", choices=VERDICTS, help="only this verdict")
            p.add_argument("--since", type=parse_since, metavar="WHEN",
                           help="only entries at or after WHEN: ISO time, epoch seconds, or 30s/15m/2h/7d ago")
            p.add_argument("--until", type=parse_since, metavar="WHEN",
                           help="only entries before WHEN (same forms as --since)")
            p.add_argument("--limit", type=_count, help="at most this many entries (list: the newest)")


def parse_since(text: str) -> float:
    """ISO-8601 time (local when naive), epoch seconds, or a relative age such as `15m`."""
    match = _RELATIVE.fullmatch(text.strip())
    if match:
        return time.time() - float(match.group(1)) * _UNITS[match.group(2)]
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is no time: use ISO-8601, epoch seconds or 15m/2h/7d") from None


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: use a whole number, 0 or more")
    return value


def _open(path: Path | None):
    from host.gatekeeper.storage.audit import AuditLog
    from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
    from host.store import Store, default_path

    path = path or default_path()
    if not path.exists():
        return None, path
    store = Store(path)
    store.migrate(COMPONENT, MIGRATIONS)
    return AuditLog(store), path


def run(args: argparse.Namespace) -> int:
    from host.store import StoreError

    try:
        audit, path = _open(args.db)
        if audit is None:
            print(f"tabwarden audit: there is no audit log at {path} yet; the host starts it when it judges its "
                  "first call (`tabwarden doctor` checks that the browser can start the host)", file=sys.stderr)
            return 1
        if args.action == "verify":
            return _verify(audit)
        entries = audit.entries(thread=args.thread, tool=args.tool, verdict=args.verdict, since=args.since,
                                until=args.until, limit=args.limit, newest_first=args.action == "list")
    except StoreError as exc:
        print(f"tabwarden audit: the audit log cannot be read: {exc}", file=sys.stderr)
        return 2
    if args.action == "export":
        import msgspec

        for entry in entries:
            sys.stdout.write(json.dumps(msgspec.to_builtins(entry), ensure_ascii=False) + "\n")
        return 0
    _table(entries)
    return 0


def _verify(audit) -> int:
    result = audit.verify()
    if result.ok:
        print(f"audit log ok: {result.rows} rows, head {result.head}")
        return 0
    print(f"audit log BROKEN at row {result.broken_seq}: {result.problem} ({result.rows - 1} rows before it verify)")
    return 1


def _table(entries) -> None:
    header = ("seq", "time", "thread", "kind", "tool", "origin", "result")
    rows = []
    for e in entries:
        when = datetime.fromtimestamp(e.at).isoformat(sep=" ", timespec="seconds")
        if e.kind == "decision":
            result = f"{e.verdict} ({e.code})"
        elif e.kind == "approval":
            result = f"user: {e.approval_decision}"
        elif e.kind == "outcome":
            result = f"outcome: {e.tool_outcome}"
        else:
            result = e.detail or e.kind
        rows.append((str(e.seq), when, e.thread_id, e.kind, e.tool, e.target_origin or "-", result))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
