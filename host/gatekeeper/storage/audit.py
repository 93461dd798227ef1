"""The audit log: an append-only, hash-chained SQLite table of every decision and outcome.

Each row stores enough to say later who did what, where, and why it was allowed (time, thread,
turn, tool, target origin, a keyed digest of the parameters and a redacted copy, verdict, code,
winning rule, flags, approval decision, tool outcome) plus `prev_hash` and
`hash = sha256(prev_hash + canonical row)`. Triggers refuse UPDATE and DELETE; `verify`
recomputes the chain, so an edit made behind the triggers' back (or a row removed from the
middle) is found. Removing rows from the *end* cannot be seen from inside the file: keep the head
hash `verify` reports if that matters.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgspec

from host.gatekeeper.redact import redact
from host.store.db import Store

GENESIS = "0" * 64
_KEY_META = "audit.params_digest_key"
_COLUMNS = ("seq", "at", "kind", "thread_id", "turn_id", "call_id", "tool", "target_origin", "params_digest",
            "params_redacted", "verdict", "code", "rule", "flags", "approval_id", "approval_decision",
            "tool_outcome", "detail")


class AuditEntry(msgspec.Struct, frozen=True):
    """One audit row (JSON columns decoded)."""

    seq: int
    at: float
    kind: str  # decision | approval | outcome | alert
    thread_id: str
    tool: str
    target_origin: str
    turn_id: str | None = None
    call_id: str | None = None
    params_digest: str | None = None
    params_redacted: Any = None
    verdict: str | None = None
    code: str | None = None
    rule: Any = None
    flags: list[str] | None = None
    approval_id: str | None = None
    approval_decision: str | None = None
    tool_outcome: str | None = None
    detail: str | None = None
    prev_hash: str = ""
    hash: str = ""


class VerifyResult(msgspec.Struct, frozen=True):
    """`ok`, how many rows were checked, the head hash, and the first broken row if any."""

    ok: bool
    rows: int
    head: str
    broken_seq: int | None = None
    problem: str | None = None


def _row_hash(prev_hash: str, values: tuple) -> str:
    canonical = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{prev_hash}\n{canonical}".encode()).hexdigest()


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class AuditLog:
    """Append and read audit rows. Storage failures raise `StoreError` (callers fail closed)."""

    def __init__(self, store: Store, *, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        key = store.get_meta(_KEY_META)
        if key is None:
            key = secrets.token_hex(32)
            store.set_meta(_KEY_META, key)
        self._key = bytes.fromhex(key)

    def params_digest(self, params: Any) -> str:
        """A keyed digest of the parameters: it matches identical calls without letting anyone
        holding only an export guess a short secret by hashing candidates."""
        canonical = json.dumps(params, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
        return hmac.new(self._key, canonical.encode(), hashlib.sha256).hexdigest()

    def append(self, *, kind: str, thread_id: str, tool: str, target_origin: str = "",
               turn_id: str | None = None, call_id: str | None = None, params: Any = None,
               target: Mapping[str, Any] | None = None, verdict: str | None = None, code: str | None = None,
               rule: Any = None, flags: list[str] | tuple[str, ...] | None = None,
               approval_id: str | None = None, approval_decision: str | None = None,
               tool_outcome: str | None = None, detail: str | None = None) -> int:
        """Append one row (parameters are digested and redacted here) and return its seq."""
        digest = self.params_digest(params) if params is not None else None
        redacted = _dump(redact(params, target)) if params is not None else None
        rule_json = _dump(msgspec.to_builtins(rule)) if rule is not None else None
        flags_json = _dump(list(flags)) if flags is not None else None
        with self._store.transaction() as conn:
            last = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
            seq = (last["seq"] + 1) if last else 1
            prev = last["hash"] if last else GENESIS
            values = (seq, float(self._clock()), kind, thread_id, turn_id, call_id, tool, target_origin, digest, redacted,
                      verdict, code, rule_json, flags_json, approval_id, approval_decision, tool_outcome, detail)
            conn.execute(f"INSERT INTO audit_log ({', '.join(_COLUMNS)}, prev_hash, hash) "
                         f"VALUES ({', '.join('?' * (len(_COLUMNS) + 2))})",
                         (*values, prev, _row_hash(prev, values)))
        return seq

    def entries(self, *, thread: str | None = None, tool: str | None = None, verdict: str | None = None,
                since: float | None = None, until: float | None = None, limit: int | None = None,
                newest_first: bool = False) -> list[AuditEntry]:
        """Rows in order (or newest first), filtered by thread, tool, verdict and time (epoch
        seconds: `since` inclusive, `until` exclusive); `limit` keeps the first rows of that order."""
        where, args = [], []
        for column, value in (("thread_id", thread), ("tool", tool), ("verdict", verdict)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if since is not None:
            where.append("at >= ?")
            args.append(since)
        if until is not None:
            where.append("at < ?")
            args.append(until)
        sql = "SELECT * FROM audit_log" + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY seq"
        if newest_first:
            sql += " DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_entry(row) for row in self._store.query(sql, args)]

    def iter_rows(self, batch: int = 1000) -> Iterator[Any]:
        """Every raw row in order, fetched in batches."""
        after = 0
        while True:
            rows = self._store.query("SELECT * FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?", (after, batch))
            if not rows:
                return
            yield from rows
            after = rows[-1]["seq"]

    def verify(self) -> VerifyResult:
        """Recompute the chain; report the first row whose link or content does not match."""
        prev, count, last_seq = GENESIS, 0, 0
        for row in self.iter_rows():
            count += 1
            seq = row["seq"]
            values = tuple(row[c] for c in _COLUMNS)
            if row["prev_hash"] != prev:
                problem = ("a row before it was removed or changed" if seq != last_seq + 1
                           else "its link to the previous row does not match")
                return VerifyResult(False, count, prev, seq, problem)
            if _row_hash(prev, values) != row["hash"]:
                return VerifyResult(False, count, prev, seq, "its content was changed after it was written")
            prev, last_seq = row["hash"], seq
        return VerifyResult(True, count, prev)


    def verify_tail(self, rows: int = 256) -> VerifyResult:
        """Recompute the chain over the last `rows` rows only (what a fault could have left
        half-written), each against the row before it."""
        found = self._store.query("SELECT * FROM audit_log ORDER BY seq DESC LIMIT ?", (rows + 1,))
        found.reverse()
        if not found:
            return VerifyResult(True, 0, GENESIS)
        if len(found) > rows:
            prev = found[0]["hash"]  # the row before the tail: its own hash is checked by `verify`
        else:
            prev = GENESIS if found[0]["seq"] == 1 else found[0]["prev_hash"]
        tail = found if len(found) <= rows else found[1:]
        last_seq = tail[0]["seq"] - 1
        for count, row in enumerate(tail, 1):
            values = tuple(row[c] for c in _COLUMNS)
            if row["prev_hash"] != prev or row["seq"] != last_seq + 1:
                return VerifyResult(False, count, prev, row["seq"], "its link to the previous row does not match")
            if _row_hash(prev, values) != row["hash"]:
                return VerifyResult(False, count, prev, row["seq"], "its content was changed after it was written")
            prev, last_seq = row["hash"], row["seq"]
        return VerifyResult(True, len(tail), prev)


def _entry(row: Any) -> AuditEntry:
    data = {c: row[c] for c in _COLUMNS}
    for column in ("params_redacted", "rule", "flags"):
        if data[column] is not None:
            data[column] = json.loads(data[column])
    data["prev_hash"], data["hash"] = row["prev_hash"], row["hash"]
    return msgspec.convert(data, AuditEntry)
