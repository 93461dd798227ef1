"""`tabwarden audit list|export|verify`: read the permission audit log.

`list` is for people: newest first, so the last thing that happened is on top (`--limit N` shows
the newest N). `export` is for programs: oldest first, the order of the hash chain. `verify`
checks the chain, the signed count and the anchor outside the database (see
`host.gatekeeper.storage.audit`): exit 0 when they hold, 1 when it finds the log edited,
re-hashed, cut or rolled back, 3 when it cannot check (the audit key is missing, not private, or
not this log's).
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
                            ("verify", "check the hash chain, its signed count and its anchor; exit 1 at the first "
                                       "broken row, 3 when the audit key is missing or unsafe")):
        p = sub.add_parser(action, help=summary, description=summary)
        p.add_argument("--db", type=Path, metavar="PATH", help="the database (default: the data dir's)")
        if action == "verify":
            p.add_argument("--keys", type=Path, metavar="DIR",
                           help="the folder holding the audit key and anchor (default: the config dir's `audit` for "
                                "the host's database, `<db>.audit` beside any other); give the host's to verify a "
                                "backup copy")
        else:
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


def _open(path: Path | None, keys: Path | None = None):
    from host.gatekeeper.storage.audit import AuditKeys, AuditLog
    from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
    from host.store import Store, default_path

    path = path or default_path()
    if not path.exists():
        return None, path, None
    store = Store(path)
    store.migrate(COMPONENT, MIGRATIONS)
    return AuditLog(store, keys=AuditKeys(keys) if keys is not None else None), path, store


def run(args: argparse.Namespace) -> int:
    from host.store import StoreError

    try:
        audit, path, store = _open(args.db, getattr(args, "keys", None))
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
    titles = _titles(store)
    if args.action == "export":
        import msgspec

        from host.gatekeeper.audit_trail import words

        for entry in entries:
            row = msgspec.to_builtins(entry)
            # Beside the row as written (which the chain covers): its words and its thread's title.
            row["words"] = words(entry)
            if entry.thread_id in titles:
                row["thread_title"] = titles[entry.thread_id]
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        return 0
    _table(entries, titles)
    return 0


def _titles(store) -> dict[str, str]:
    """Thread id -> title, from the engine's threads in the same database (none when it has none)."""
    import sqlite3

    from host.store import StoreError

    try:
        rows = store.query("SELECT id, title FROM eng_threads")
    except (StoreError, sqlite3.Error):  # a log without the engine's tables (a gatekeeper-only database)
        return {}
    return {str(row["id"]): str(row["title"]) for row in rows if row["title"]}


# What each failure means, in a few words, before the details `verify` gives.
_WHAT = {
    "edited": "a row was edited after it was written",
    "rehashed": "the chain was rewritten (re-hashed)",
    "removed": "a row was removed from the middle",
    "cut": "rows were cut from the end",
    "rolled_back": "the database was rolled back to an older copy",
    "anchor": "the anchor outside the database does not match the audit key",
    "no_key": "the audit key is missing",
    "unsafe_key": "the audit key is not private",
    "wrong_key": "the audit key is not this log's",
}


def _verify(audit) -> int:
    """Print what `audit.verify()` found; 0 when the log holds, 1 when it was tampered with, 3
    when it cannot be checked."""
    from host.gatekeeper.storage.audit import KEY_FAILURES

    result = audit.verify()
    if result.ok:
        print(f"audit log ok: {result.rows} rows, head {result.head}")
        print(_coverage(result))
        return 0
    where = f"row {result.broken_seq}" if result.broken_seq is not None else "its anchor"
    if result.failure in KEY_FAILURES:
        print(f"audit log CANNOT BE VERIFIED from {where}: {_WHAT[result.failure]}")
        print(f"  {result.problem}")
        return 3
    print(f"audit log BROKEN at {where}: {_WHAT.get(result.failure or '', 'it does not verify')}")
    print(f"  {result.problem}")
    return 1


def _coverage(result) -> str:
    """Which rows are keyed and what the anchor vouches for, in one line."""
    if result.keyed_from is None:
        keyed = "no keyed rows yet (links are plain SHA-256)"
    elif result.keyed_from > 1:
        keyed = f"keyed links from row {result.keyed_from} (rows before it are plain SHA-256, from before keying)"
    else:
        keyed = "every link keyed"
    anchored = (f"anchored outside the database at row {result.anchored}" if result.anchored
                else "no anchor outside the database for this file yet")
    return f"  {keyed}; {anchored}"


def _table(entries, titles: dict[str, str]) -> None:
    """The entries as aligned columns; each code is followed by its words."""
    from host.gatekeeper.audit_trail import answer_words, decision_words, outcome_words, rule_words, with_words

    header = ("seq", "time", "thread", "kind", "tool", "origin", "result")
    rows = []
    for e in entries:
        when = datetime.fromtimestamp(e.at).isoformat(sep=" ", timespec="seconds")
        if e.kind == "decision":
            result = f"{e.verdict} ({e.code})"
            said = decision_words(e.code, e.verdict)
            result += f": {said}" if said else ""
            rule = rule_words(e.rule)
            result += f", {rule}" if rule else ""
            if e.detail == "dispatch":
                result += " (checked again just before it ran)"
        elif e.kind == "approval":
            result = f"user: {with_words(e.approval_decision, answer_words(e.approval_decision))}"
        elif e.kind == "outcome":
            result = f"outcome: {with_words(e.tool_outcome, outcome_words(e.tool_outcome))}"
            result += f"; {e.detail}" if e.detail else ""
        else:
            result = e.detail or e.kind
        thread = f"{e.thread_id} {titles[e.thread_id]!r}" if e.thread_id in titles else e.thread_id
        rows.append((str(e.seq), when, thread, e.kind, e.tool, e.target_origin or "-", result))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
