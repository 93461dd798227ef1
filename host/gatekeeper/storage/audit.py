"""The audit log: an append-only, hash-chained SQLite table of every decision and outcome.

Each row stores enough to say later who did what, where, and why it was allowed (time, thread,
turn, tool, target origin, a keyed digest of the parameters and a redacted copy, verdict, code,
winning rule, flags, approval decision, tool outcome) plus `prev_hash` and `hash`, its link to the
row before. Triggers refuse UPDATE and DELETE. Whoever can write the database file can drop them;
what `verify` then still finds:

    a row edited                 hash = HMAC-SHA256(audit key, prev_hash + canonical row), and the
                                 key is kept outside the database
    the chain re-hashed          without the key the new links do not match (a plain SHA-256
                                 re-hash is named as such)
    rows cut from the end        every append also writes, in the same transaction, a signed count
                                 (last row, head hash, HMAC over both): it then names rows the log
                                 no longer has
    an older copy restored       the anchor, a small file next to the key (count, head, HMAC),
                                 counts more rows than the database holds ("older than the last
                                 anchor"). It is written after the first append, then at most every
                                 `ANCHOR_EVERY_S` seconds by a thread of its own and when the log is
                                 closed or collected, never per append (appends are on the decision
                                 path: only the first waits for one), and only for rows SQLite has
                                 synced to disk, so a power cut cannot fake one.
                                 A host killed outright leaves the anchor up to that long behind:
                                 a copy that recent passes

The key of the host's database is `<config dir>/audit/key` (see `host.paths`): 32 random bytes in
hex, created with O_EXCL and mode 0600, and refused (`AuditKeyError`) when other users may open it
or it belongs to someone else. Its anchor sits next to it (`anchor-<hash of the path>.json`).
Files only, never the OS keyring: the browser starts the host without a terminal and often
without a session bus, where a keyring may be locked, prompt, or be absent, and the anchor has to
be a file anyway. Any other database file keeps its key and anchor in a `<file name>.audit` folder
beside it (tests, scratch copies: they never write into the user's config dir); `keys=` picks
another place, such as the host's key to verify a backup copy with. An in-memory store gets a key
that lives as long as the store, and no anchor.

Rows written before links were keyed (plain SHA-256) still verify: the signed meta record
`audit.keyed_from` says where keyed links start. A key is created only for a log with no keyed
rows (an empty one, or one whose last row is a plain link). When the key of a log with keyed rows
is missing, appends are refused (the gatekeeper closes with that cause until the key is back and
the host restarts) and `verify` says it cannot check those rows: a new key would make every keyed
row look forged. Restore the key file, or move the database aside to start a new log.

When the host opens a log whose end no longer matches its signed count or its anchor, it writes
an alert row saying what it found before anything else (its next anchor would otherwise cover the
loss), and `verify` reports that row from then on. An empty database at an anchored path is a new
log (moved aside on purpose): its anchor replaces the old one.

The parameter digest is keyed with a key derived from the audit key, so the database holds no
secret; a database made before keeps the digest key it stored in `meta`, so its digests still
match.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import secrets
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import msgspec

from protocol.errors import TabwardenError

from host.gatekeeper.redact import redact
from host.store.db import Store

log = logging.getLogger("tabwarden.gatekeeper")

GENESIS = "0" * 64
ANCHOR_EVERY_S = 5.0
_OLD_DIGEST_KEY_META = "audit.params_digest_key"  # databases made before the key moved out
_FROM_META = "audit.keyed_from"
_SIGNED_META = "audit.signed_count"
_ANCHORED_META = "audit.anchored_at"
_COLUMNS = ("seq", "at", "kind", "thread_id", "turn_id", "call_id", "tool", "target_origin", "params_digest",
            "params_redacted", "verdict", "code", "rule", "flags", "approval_id", "approval_decision",
            "tool_outcome", "detail")
# The alert rows the host writes when it opens a log that was tampered with, by what they report.
_FOUND_CODES = {"audit_edited": "edited", "audit_rehashed": "rehashed", "audit_cut": "cut",
                "audit_rolled_back": "rolled_back", "audit_anchor": "anchor"}
# Failures that mean "cannot check" rather than "found tampering".
KEY_FAILURES = frozenset({"no_key", "unsafe_key", "wrong_key"})


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
    """`ok`, how many rows were checked, the head hash, and the first problem if any: its row,
    its words, and `failure`, what it is (edited, rehashed, removed, cut, rolled_back, anchor;
    or no_key, unsafe_key, wrong_key when the rows cannot be checked). `keyed_from` is the first
    row with a keyed link, `anchored` the row count the anchor outside the database vouches for."""

    ok: bool
    rows: int
    head: str
    broken_seq: int | None = None
    problem: str | None = None
    failure: str | None = None
    keyed_from: int | None = None
    anchored: int | None = None


class AuditKeyError(TabwardenError, RuntimeError):
    """The audit key is missing, not private, or not this log's: keyed rows can be neither
    written nor checked. `kind` is no_key, unsafe_key or wrong_key."""

    code = "audit_key"

    def __init__(self, message: str, kind: str = "no_key") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


# -- where the key and the anchors live ------------------------------------------------------------


class KeyProvider(Protocol):
    """Loads or creates the audit key, and reads and writes a database's anchor."""

    where: str

    def load(self) -> bytes | None:
        """The key, None when there is none; raises `AuditKeyError` when it may not be used."""

    def create(self) -> bytes:
        """Make a new key (or return the one another process made a moment ago)."""

    def read_anchor(self, db: Path) -> dict[str, Any] | None:
        """The anchor of database `db` (an empty dict when unreadable), None when there is none."""

    def write_anchor(self, db: Path, record: Mapping[str, Any]) -> None:
        """Replace the anchor of database `db`."""


class AuditKeys:
    """The key and the anchors as files in one private folder (`<config dir>/audit` by default).

    Only files, by design: see the module's docstring for why not the OS keyring."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.key_path = folder / "key"
        self.where = str(self.key_path)

    def load(self) -> bytes | None:
        """The key, or None when its file does not exist. Raises `AuditKeyError` when other
        users may open the file, it belongs to another user, or it holds no key."""
        try:
            fd = os.open(self.key_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise AuditKeyError(f"the audit key {self.key_path} cannot be opened: {exc.strerror}",
                                "unsafe_key") from None
        with os.fdopen(fd, "rb") as file:
            _refuse_unless_private(os.fstat(file.fileno()), self.key_path)
            try:
                text = file.read(256).decode("ascii", "replace").strip()
            except OSError as exc:
                raise AuditKeyError(f"the audit key {self.key_path} cannot be read: {exc.strerror}",
                                    "unsafe_key") from None
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) != 32:
            raise AuditKeyError(f"the audit key {self.key_path} holds no key (64 hex digits expected)", "wrong_key")
        return key

    def create(self) -> bytes:
        """Write a new random key with O_EXCL and mode 0600 (another process that made one first
        wins: its key is returned)."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = secrets.token_bytes(32)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(self.key_path, flags, 0o600)
        except FileExistsError:
            made = self.load()
            if made is None:
                raise AuditKeyError(f"the audit key {self.key_path} appeared and vanished while it was made") from None
            return made
        try:
            try:
                os.write(fd, (key.hex() + "\n").encode())
                os.fsync(fd)  # the key must be on disk before any row keyed with it is
            finally:
                os.close(fd)
        except OSError as exc:
            self.key_path.unlink(missing_ok=True)
            raise AuditKeyError(f"the audit key {self.key_path} cannot be written: {exc.strerror}") from None
        _sync_folder(self.folder)
        return key

    def anchor_path(self, db: Path) -> Path:
        """The anchor file of database `db`, named after its full path."""
        name = hashlib.sha256(str(db).encode()).hexdigest()[:16]
        return self.folder / f"anchor-{name}.json"

    def read_anchor(self, db: Path) -> dict[str, Any] | None:
        """The anchor of `db`, an empty dict when it cannot be read, None when there is none."""
        try:
            data = json.loads(self.anchor_path(db).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def write_anchor(self, db: Path, record: Mapping[str, Any]) -> None:
        """Replace the anchor of `db` whole (a temporary file, synced, then renamed over it)."""
        path = self.anchor_path(db)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, json.dumps(dict(record), sort_keys=True).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
        _sync_folder(self.folder)


class MemoryKeys:
    """A key that lives as long as this object, and no anchor (in-memory stores, tests)."""

    where = "an in-memory key"

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key

    def load(self) -> bytes | None:
        """The key, None until `create`."""
        return self._key

    def create(self) -> bytes:
        """Make the key (once)."""
        if self._key is None:
            self._key = secrets.token_bytes(32)
        return self._key

    def read_anchor(self, db: Path) -> dict[str, Any] | None:
        """No anchors here."""
        return None

    def write_anchor(self, db: Path, record: Mapping[str, Any]) -> None:
        """No anchors here."""


_MEMORY_KEYS: weakref.WeakKeyDictionary[Store, MemoryKeys] = weakref.WeakKeyDictionary()


def default_keys(store: Store) -> KeyProvider:
    """`<config dir>/audit` for the host's own database (`host.store.default_path()`); a
    `<file name>.audit` folder beside any other database file (a test's, a scratch copy), so that
    those never write into the user's config dir; a key of its own for an in-memory store."""
    db = _db_path(store)
    if db is None:
        return _MEMORY_KEYS.setdefault(store, MemoryKeys())
    from host.paths import dirs
    from host.store.db import default_path

    if db == default_path().resolve():
        return AuditKeys(dirs().config / "audit")
    return AuditKeys(db.with_name(db.name + ".audit"))


def _refuse_unless_private(info: os.stat_result, path: Path) -> None:
    if not hasattr(os, "getuid"):
        return  # Windows: the profile folder's ACL is what keeps it private
    if info.st_uid != os.getuid():
        raise AuditKeyError(f"the audit key {path} belongs to another user (uid {info.st_uid}): refusing to use it; "
                            "only its owner's host may key the audit log", "unsafe_key")
    if info.st_mode & 0o077:
        raise AuditKeyError(f"the audit key {path} can be opened by other users (mode {info.st_mode & 0o777:o}): "
                            f"refusing to use it. Run `chmod 600 {path}`; if someone else may have read it, rows "
                            "written since could have been forged", "unsafe_key")


def _sync_folder(folder: Path) -> None:
    """Make a new or renamed file's name durable too (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _db_path(store: Store) -> Path | None:
    return None if str(store.path) == ":memory:" else Path(store.path).resolve()


# -- links and signed records ------------------------------------------------------------------------


def _canonical(values: tuple) -> str:
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))


def _row_hash(prev_hash: str, values: tuple) -> str:
    """The link of a row written before links were keyed: sha256(prev + canonical row)."""
    return hashlib.sha256(f"{prev_hash}\n{_canonical(values)}".encode()).hexdigest()


def _mac(key: bytes, *parts: object) -> str:
    return hmac.digest(key, "\n".join(str(p) for p in parts).encode(), "sha256").hex()  # one-shot: the fast path


def _link(key: bytes, prev_hash: str, values: tuple) -> str:
    """A keyed row's link: HMAC-SHA256(key, prev + canonical row). Its input starts with 64 hex
    digits, the signed records' with a label: the two can never be taken for each other."""
    return _mac(key, prev_hash, _canonical(values))


def _signed(key: bytes, count: int, head: str) -> dict[str, Any]:
    return {"count": count, "head": head, "mac": _mac(key, "tabwarden audit count", count, head)}


def _from_record(key: bytes, seq: int) -> dict[str, Any]:
    return {"seq": seq, "mac": _mac(key, "tabwarden audit keyed from", seq)}


def _anchor_mac(key: bytes, record: Mapping[str, Any]) -> str:
    return _mac(key, "tabwarden audit anchor", record.get("db"), record.get("count"), record.get("head"),
                record.get("at"))


def _good(mac: object, expected: str) -> bool:
    return isinstance(mac, str) and hmac.compare_digest(mac, expected)


def _signed_ok(key: bytes, record: Mapping[str, Any] | None) -> bool:
    # The types are checked too: "6" would MAC like 6 (the MAC covers text) but read differently.
    if not record or _int(record.get("count")) is None or not isinstance(record.get("head"), str):
        return False
    return _good(record.get("mac"), _signed(key, record["count"], record["head"])["mac"])


def _from_ok(key: bytes, record: Mapping[str, Any] | None) -> bool:
    if not record or _int(record.get("seq")) is None:
        return False
    return _good(record.get("mac"), _from_record(key, record["seq"])["mac"])


def _anchor_ok(key: bytes, record: Mapping[str, Any] | None) -> bool:
    return bool(record) and _good(record.get("mac"), _anchor_mac(key, record))


def _record(value: str | None) -> dict[str, Any] | None:
    """A JSON meta record; an empty dict when it is garbled (it then fails its MAC)."""
    if value is None:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _set_meta(conn: Any, name: str, value: Mapping[str, Any]) -> None:
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (name, json.dumps(value, separators=(",", ":"))))


def _values(row: Any) -> tuple:
    return tuple(row[c] for c in _COLUMNS)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# -- what a log's end is checked against ------------------------------------------------------------


class _Finding(msgspec.Struct, frozen=True):
    failure: str
    seq: int | None
    text: str


def _signed_findings(key: bytes, signed: Mapping[str, Any] | None, last_seq: int, last_hash: str) -> list[_Finding]:
    """What the signed count says about the log's last row (for a log with keyed rows)."""
    if signed is None:
        return [_Finding("cut", last_seq + 1, "the signed count is missing from the database: rows after row "
                                              f"{last_seq}, where the log ends, may have been removed from the end")]
    count = _int(signed.get("count"))
    if not _signed_ok(key, signed) or count is None:
        return [_Finding("cut", last_seq + 1, f"the signed count was changed without the audit key (it says "
                                              f"{signed.get('count')!r} rows, the log ends at row {last_seq}): "
                                              "rows were probably removed from the end")]
    if count > last_seq:
        return [_Finding("cut", last_seq + 1, f"rows {last_seq + 1}-{count} were removed from the end: the signed "
                                              f"count says {count} rows, the log ends at row {last_seq}")]
    if count < last_seq:
        return [_Finding("rehashed", count + 1, f"rows {count + 1}-{last_seq} were added without the audit key: the "
                                                f"signed count says the log ends at row {count}")]
    if signed.get("head") != last_hash:
        return [_Finding("rehashed", last_seq, "the last row is not the one the signed count names: the chain was "
                                               "rewritten")]
    return []


def _anchor_findings(key: bytes, anchor: Mapping[str, Any], last_seq: int,
                     hash_at: Callable[[int], str | None]) -> list[_Finding]:
    """What the anchor outside the database says about the database."""
    if not _anchor_ok(key, anchor):
        return [_Finding("anchor", None, "the anchor outside the database was not written with this log's audit key "
                                         "(it was edited, or the key was replaced)")]
    count = _int(anchor.get("count")) or 0
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(anchor.get("at") or 0)))
    if count > last_seq:
        return [_Finding("rolled_back", last_seq + 1,
                         f"the database is older than the last anchor: the anchor written at {when} counts {count} "
                         f"rows, the database {f'ends at row {last_seq}' if last_seq else 'holds none'}, so rows "
                         f"{last_seq + 1}-{count} are gone (an older copy of the file was restored, or they were cut "
                         "with their signed count)")]
    if count and hash_at(count) != anchor.get("head"):
        return [_Finding("rehashed", count, f"row {count} is not the row the last anchor (written at {when}) "
                                            "recorded: the chain up to it was rewritten, or the database was replaced "
                                            "by another")]
    return []


def _durable_signed(db: Path, known: tuple[int, str] | None) -> dict[str, Any] | None:
    """The signed count once SQLite has synced it: a tiny write committed with synchronous=FULL
    makes the WAL, and every commit before it, durable (the host runs with NORMAL, where a power
    cut may undo the last commits, and an anchor ahead of the database would read as a rollback).
    None when the database no longer extends `known` (last row, head) this log saw: it was
    replaced under the running host, and that must not be anchored."""
    import sqlite3

    conn = sqlite3.connect(db.as_uri() + "?mode=rw", uri=True, timeout=0.5, isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            signed = conn.execute("SELECT value FROM meta WHERE key = ?", (_SIGNED_META,)).fetchone()
            extends = known is None or (conn.execute("SELECT hash FROM audit_log WHERE seq = ?", (known[0],)).fetchone()
                                        or (None,))[0] == known[1]
            conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = "
                         "excluded.value", (_ANCHORED_META, repr(time.time())))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()
    return _record(signed[0]) if signed and extends else None


class _Anchoring:
    """Writes one database's anchor: after the first append, then at most every `every_s`
    seconds after an append, and at close if rows came since. The log's finalizer holds this,
    so it keeps no reference to the log.

    Only the first anchor is written by the appending thread. The later ones go to a thread of
    their own: an anchor syncs the WAL and its own file (milliseconds), and an append is on the
    path of the call it records, so the call that happened to come due would carry that wait."""

    def __init__(self, keys: KeyProvider, db: Path, key: bytes, every_s: float, known: tuple[int, str] | None) -> None:
        self._keys, self._db, self._key, self._every_s = keys, db, key, every_s
        self._known = known  # the last row and head this log accepted (at open) or anchored
        self._last = float("-inf")
        self._dirty = False
        self._appends = 0  # so an anchor knows whether rows came while it was being written
        self._closed = False
        self._lock = threading.Lock()
        self._writer: int | None = None  # the thread writing an anchor now

    def appended(self) -> None:
        """A row was committed: anchor it if the last anchor is old enough."""
        self._appends += 1
        self._dirty = True
        self._closed = False  # a log appended to after its close is in use again
        now = time.monotonic()
        if now - self._last < self._every_s:
            return
        first = self._last == float("-inf")
        self._last = now  # one anchor at a time comes due, however many appends follow at once
        if first:
            self.write()
            return
        try:
            threading.Thread(target=self.write, name="audit-anchor", daemon=True).start()
        except RuntimeError:  # no thread can be started now: the append waits for its anchor, as the first does
            self.write()

    def write(self, *, closing: bool = False) -> bool:
        """Anchor the database's durable signed count now; True when written. Failures are
        logged, never raised: the previous anchor stays, which only lags. Nothing is written
        once the log is closed, except by `close` itself (and only for rows not anchored yet),
        until rows are appended again."""
        if not self._lock.acquire(blocking=closing):
            return False  # another thread is writing it right now
        self._writer = threading.get_ident()
        try:
            if (self._closed and not closing) or (closing and not self._dirty):
                return False
            self._last = time.monotonic()
            appends = self._appends
            signed = _durable_signed(self._db, self._known)
            if signed is None or not _signed_ok(self._key, signed):
                log.warning("the audit anchor of %s was not written: the database no longer holds what this log "
                            "wrote (replaced while the host ran?)", self._db)
                return False
            record = {"db": str(self._db), "count": signed["count"], "head": signed["head"],
                      "at": round(time.time(), 3)}
            record["mac"] = _anchor_mac(self._key, record)
            self._keys.write_anchor(self._db, record)
            self._known, self._dirty = (signed["count"], signed["head"]), self._appends != appends
            return True
        except Exception as exc:
            log.warning("the audit anchor of %s was not written: %s", self._db, exc)
            return False
        finally:
            self._writer = None
            self._lock.release()

    def close(self) -> None:
        """Anchor the rows that came since the last anchor, if any, once an anchor being written
        by another thread is done; no other is written until rows are appended again. Called on
        the thread that is writing one (the log collected in the middle of it), it leaves that
        one to be the last."""
        self._closed = True
        if self._writer != threading.get_ident():
            self.write(closing=True)  # waits for one being written, then sees whether rows came since


# -- the log -----------------------------------------------------------------------------------------


class AuditLog:
    """Append and read audit rows. Storage failures raise `StoreError` (callers fail closed); a
    missing, unsafe or foreign audit key raises `AuditKeyError` on append.

    `keys` says where the audit key and the anchors are (default: `default_keys(store)`);
    reading rows never needs it, so a log can be listed anywhere."""

    def __init__(self, store: Store, *, clock: Callable[[], float] = time.time, keys: KeyProvider | None = None,
                 anchor_every_s: float = ANCHOR_EVERY_S) -> None:
        self._store = store
        self._clock = clock
        self._keys_given = keys
        self._anchor_every_s = anchor_every_s
        self._key: bytes | None = None  # set once this log may write (see `_ready`)
        self._digest_key: bytes | None = None
        self._anchoring: _Anchoring | None = None
        self._keyed_from_known = False
        self._ready_lock = threading.Lock()

    @property
    def keys(self) -> KeyProvider:
        """Where the audit key and the anchors are."""
        if self._keys_given is None:
            self._keys_given = default_keys(self._store)
        return self._keys_given

    def params_digest(self, params: Any) -> str:
        """A keyed digest of the parameters: it matches identical calls without letting anyone
        holding only an export (or the database) guess a short secret by hashing candidates."""
        canonical = json.dumps(params, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
        return hmac.digest(self._params_key(), canonical.encode(), "sha256").hex()

    def _params_key(self) -> bytes:
        if self._digest_key is None:
            old = self._store.get_meta(_OLD_DIGEST_KEY_META)
            self._digest_key = (bytes.fromhex(old) if old else
                                hmac.new(self._ready(), b"tabwarden audit params digest", hashlib.sha256).digest())
        return self._digest_key

    def append(self, *, kind: str, thread_id: str, tool: str, target_origin: str = "",
               turn_id: str | None = None, call_id: str | None = None, params: Any = None,
               target: Mapping[str, Any] | None = None, verdict: str | None = None, code: str | None = None,
               rule: Any = None, flags: list[str] | tuple[str, ...] | None = None,
               approval_id: str | None = None, approval_decision: str | None = None,
               tool_outcome: str | None = None, detail: str | None = None) -> int:
        """Append one row (parameters are digested and redacted here) and return its seq."""
        key = self._ready()
        digest = self.params_digest(params) if params is not None else None
        redacted = _dump(redact(params, target)) if params is not None else None
        rule_json = _dump(msgspec.to_builtins(rule)) if rule is not None else None
        flags_json = _dump(list(flags)) if flags is not None else None
        fields = (kind, thread_id, turn_id, call_id, tool, target_origin, digest, redacted, verdict, code, rule_json,
                  flags_json, approval_id, approval_decision, tool_outcome, detail)
        seq = self._write(key, fields)
        if self._anchoring is not None:
            self._anchoring.appended()
        return seq

    def _write(self, key: bytes, fields: tuple) -> int:
        """Insert one keyed row and its signed count in one transaction."""
        with self._store.transaction() as conn:
            last = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
            seq = (last["seq"] + 1) if last else 1
            prev = last["hash"] if last else GENESIS
            values = (seq, float(self._clock()), *fields)
            head = _link(key, prev, values)
            conn.execute(f"INSERT INTO audit_log ({', '.join(_COLUMNS)}, prev_hash, hash) "
                         f"VALUES ({', '.join('?' * (len(_COLUMNS) + 2))})", (*values, prev, head))
            if not self._keyed_from_known:
                # The first keyed row of this database: older rows keep their plain links.
                if conn.execute("SELECT 1 FROM meta WHERE key = ?", (_FROM_META,)).fetchone() is None:
                    _set_meta(conn, _FROM_META, _from_record(key, seq))
            _set_meta(conn, _SIGNED_META, _signed(key, seq, head))
        self._keyed_from_known = True
        return seq

    # -- becoming a writer ------------------------------------------------------------------------

    def _ready(self) -> bytes:
        """The key this log writes with, loaded (or made) and checked once; the first time, what
        the host finds wrong with the log's end is written down first (see the module docstring)."""
        key = self._key
        if key is not None:
            return key
        with self._ready_lock:
            if self._key is None:
                key = self._writer_key()
                findings = self._open_findings(key)
                for finding in findings:
                    log.warning("audit log: %s", finding.text)
                    self._write(key, ("alert", "", None, None, "", "", None, None, None,
                                      f"audit_{finding.failure}", None, None, None, None, None, finding.text))
                self._start_anchoring(key)
                self._key = key
        return self._key

    def _writer_key(self) -> bytes:
        """The audit key; a new one only for a log with no keyed rows (see the module docstring)."""
        keys = self.keys
        key = keys.load()
        if key is not None:
            return key
        start = _record(self._store.get_meta(_FROM_META))
        if start is not None:
            raise AuditKeyError(f"the audit key {keys.where} is missing, and this audit log's rows from "
                                f"{start.get('seq')} on were keyed with it: restore that file from a backup. No new "
                                "key is made, as it would make those rows look forged; to start a new log instead, "
                                "move the database aside", "no_key")
        last = self._last_row()
        if last is not None and _row_hash(last["prev_hash"], _values(last)) != last["hash"]:
            raise AuditKeyError(f"the audit key {keys.where} is missing, and this audit log's last row {last['seq']} "
                                "is not a plain link: it may have been keyed with the lost key. Restore the key from "
                                "a backup, or move the database aside to start a new log", "no_key")
        return keys.create()

    def _open_findings(self, key: bytes) -> list[_Finding]:
        """What is wrong with the log's end, as the host finds it before its first append."""
        last = self._last_row()
        start = _record(self._store.get_meta(_FROM_META))
        signed = _record(self._store.get_meta(_SIGNED_META))
        findings: list[_Finding] = []
        keyed_last = last is not None and _link(key, last["prev_hash"], _values(last)) == last["hash"]
        plain_last = last is not None and _row_hash(last["prev_hash"], _values(last)) == last["hash"]
        keyed_trace = start is not None or signed is not None or (last is not None and not plain_last)
        if keyed_trace and not (_from_ok(key, start) or _signed_ok(key, signed) or keyed_last):
            # Writing on would key new rows with a key that cannot check the old ones.
            raise AuditKeyError(f"this audit log was not written with the audit key {self.keys.where} (neither its "
                                "records nor its last row match it): restore the right key from a backup, or move "
                                "the database aside to start a new log", "wrong_key")
        if (start is None and keyed_last) or (start is not None and not _from_ok(key, start)):
            findings.append(self._restore_keyed_from(key, start))
            start = {}
        if last is not None and (start is not None or signed is not None):
            findings += _signed_findings(key, signed, last["seq"], last["hash"])
        anchor = self._anchor()
        if anchor is not None and last is not None:
            findings += _anchor_findings(key, anchor, last["seq"], self._hash_at)
        return findings

    def _restore_keyed_from(self, key: bytes, start: Mapping[str, Any] | None) -> _Finding:
        """Put back the record of where keyed links start (its first keyed row, found by scanning),
        so that the rows are checked by the right scheme; the finding says it was tampered with."""
        first = next((row["seq"] for row in self.iter_rows()
                      if _link(key, row["prev_hash"], _values(row)) == row["hash"]), None)
        with self._store.transaction() as conn:
            _set_meta(conn, _FROM_META, _from_record(key, first or 1))
        what = "removed from" if start is None else "changed without the audit key in"
        return _Finding("rehashed", first,
                        f"the record of where keyed links start (row {first}) was {what} the database")

    def _start_anchoring(self, key: bytes) -> None:
        db = _db_path(self._store)
        if db is None:
            return
        last = self._last_row()
        known = (last["seq"], last["hash"]) if last is not None else None
        self._anchoring = _Anchoring(self.keys, db, key, self._anchor_every_s, known)
        weakref.finalize(self, self._anchoring.close)

    def anchor(self) -> bool:
        """Write the anchor outside the database now (normally done every few seconds and at
        close); True when written, False when another thread is writing one or the log was
        closed (and nothing appended since)."""
        self._ready()
        return self._anchoring.write() if self._anchoring is not None else False

    def close(self) -> None:
        """Anchor the rows appended since the last anchor (also done when the log is collected
        or the process exits)."""
        if self._anchoring is not None:
            self._anchoring.close()

    def _last_row(self) -> Any:
        rows = self._store.query("SELECT * FROM audit_log ORDER BY seq DESC LIMIT 1")
        return rows[0] if rows else None

    def _hash_at(self, seq: int) -> str | None:
        rows = self._store.query("SELECT hash FROM audit_log WHERE seq = ?", (seq,))
        return rows[0]["hash"] if rows else None

    def _anchor(self) -> dict[str, Any] | None:
        db = _db_path(self._store)
        return self.keys.read_anchor(db) if db is not None else None

    # -- reading ----------------------------------------------------------------------------------

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

    # -- verifying --------------------------------------------------------------------------------

    def verify(self) -> VerifyResult:
        """Recompute the whole chain (plain links before `keyed_from`, keyed after), then check
        the last row against the signed count and the database against the anchor; report the
        first problem. The key is read afresh, so a key removed since the host started shows."""
        check = _Check(self)
        finding = check.setup()
        if finding is None:
            finding = check.scan(self.iter_rows())
        if finding is None:
            finding = check.end() or check.anchored() or check.found_by_host
        return check.result(finding)

    def verify_tail(self, rows: int = 256) -> VerifyResult:
        """Recompute the chain over the last `rows` rows only (what a fault could have left
        half-written), each against the row before it, and the last row against the signed count."""
        found = self._store.query("SELECT * FROM audit_log ORDER BY seq DESC LIMIT ?", (rows + 1,))
        found.reverse()
        check = _Check(self, key=self._key)
        finding = check.setup()
        if finding is None:
            if len(found) > rows:
                check.prev, check.last_seq = found[0]["hash"], found[0]["seq"]  # its own link is `verify`'s
                found = found[1:]
            elif found and found[0]["seq"] != 1:
                check.prev, check.last_seq = found[0]["prev_hash"], found[0]["seq"] - 1
            finding = check.scan(found) or check.end()
        return check.result(finding)


class _Check:
    """One verification's state: the key, the records, the rows seen so far."""

    def __init__(self, audit: AuditLog, key: bytes | None = None) -> None:
        self.audit = audit
        self.key = key
        self.key_error: AuditKeyError | None = None
        self.start = _record(audit._store.get_meta(_FROM_META))
        self.signed = _record(audit._store.get_meta(_SIGNED_META))
        self.keyed_from = _int((self.start or {}).get("seq"))
        self.prev, self.last_seq, self.count = GENESIS, 0, 0
        self.found_by_host: _Finding | None = None
        self.anchored_count: int | None = None

    def setup(self) -> _Finding | None:
        """Load the key (when rows need it) and check the record of where keyed links start."""
        if self.key is None:
            try:
                self.key = self.audit.keys.load()
            except AuditKeyError as exc:
                self.key_error = exc
        if self.key is None and self.key_error is None:
            self.key_error = AuditKeyError(f"the audit key {self.audit.keys.where} is missing; restore it from a "
                                           "backup (a new key cannot check rows keyed with the old one)", "no_key")
        if self.start is not None:
            if self.key is None:
                return self.no_key(self.keyed_from)
            if not _from_ok(self.key, self.start) and not _signed_ok(self.key, self.signed):
                self.key_error = AuditKeyError(f"the audit key {self.audit.keys.where} is not the key this log was "
                                               "written with (neither signed record matches it)", "wrong_key")
                return self.no_key(self.keyed_from)
            if not _from_ok(self.key, self.start):
                return _Finding("rehashed", self.keyed_from, "the record of where keyed links start was changed "
                                                             "without the audit key")
        return None

    def no_key(self, seq: int | None) -> _Finding:
        """Keyed rows from `seq` on (or the anchor) cannot be checked: why, in the key error's words."""
        assert self.key_error is not None
        what = f"rows from {seq} on" if seq is not None else "the anchor"
        return _Finding(self.key_error.kind, seq, f"{what} cannot be verified: {self.key_error.message}")

    def scan(self, rows: Any) -> _Finding | None:
        """Check each row's link to the one before and its own hash; the first problem."""
        for row in rows:
            self.count += 1
            seq, values = row["seq"], _values(row)
            if row["prev_hash"] != self.prev or seq != self.last_seq + 1:
                return _Finding("removed" if seq != self.last_seq + 1 else "edited", seq,
                                "a row before it was removed or changed" if seq != self.last_seq + 1
                                else "its link to the previous row does not match")
            finding = self.row(seq, values, row["hash"])
            if finding is not None:
                return finding
            if self.found_by_host is None and row["kind"] == "alert" and row["code"] in _FOUND_CODES:
                self.found_by_host = _Finding(_FOUND_CODES[row["code"]], seq, "the host found this when it opened "
                                              f"the log, and wrote it down in this row: {row['detail']}")
            self.prev, self.last_seq = row["hash"], seq
        return None

    def row(self, seq: int, values: tuple, stored: str) -> _Finding | None:
        """One row's own hash, by the scheme of its place in the log."""
        if self.keyed_from is not None and seq >= self.keyed_from:
            if self.key is None:
                return self.no_key(seq)
            return None if _link(self.key, self.prev, values) == stored else self.keyed_mismatch(seq, values, stored)
        if _row_hash(self.prev, values) == stored:
            return None
        if self.keyed_from is None and self.key is not None and _link(self.key, self.prev, values) == stored:
            return _Finding("rehashed", seq, f"rows from {seq} on are keyed, but the record of where keyed links "
                                             "start was removed from the database")
        return _Finding("edited", seq, "its content was changed after it was written")

    def keyed_mismatch(self, seq: int, values: tuple, stored: str) -> _Finding:
        """Tell an edited row (its stored link kept, the signed end intact) from a re-hashed chain."""
        if stored == _row_hash(self.prev, values):
            return _Finding("rehashed", seq, "it was re-hashed without the audit key (plain SHA-256): the chain was "
                                             "rewritten from this row on")
        if seq == self.keyed_from:
            return _Finding("edited", seq, "the first row with a keyed link no longer matches: it, or a row written "
                                           "before links were keyed, was changed")
        last = self.audit._last_row()
        assert self.key is not None
        if last is not None and not _signed_findings(self.key, self.signed, last["seq"], last["hash"]):
            return _Finding("edited", seq, "its content was changed after it was written")
        return _Finding("rehashed", seq, "it and the rows after it were re-hashed with a key other than this log's "
                                         "audit key: the chain was rewritten from this row on")

    def end(self) -> _Finding | None:
        """The last row against the signed count (for a log with keyed rows)."""
        if self.start is None and self.signed is None:
            return None
        if self.key is None:
            return self.no_key(self.keyed_from)
        found = _signed_findings(self.key, self.signed, self.last_seq, self.prev)
        return found[0] if found else None

    def anchored(self) -> _Finding | None:
        """The database against the anchor outside it, if there is one."""
        anchor = self.audit._anchor()
        if anchor is None:
            return None
        if self.key is None:
            return self.no_key(None)
        found = _anchor_findings(self.key, anchor, self.last_seq, self.audit._hash_at)
        if not found:
            self.anchored_count = _int(anchor.get("count"))
        return found[0] if found else None

    def result(self, finding: _Finding | None) -> VerifyResult:
        """The outcome, with where keyed links start and what the anchor vouches for."""
        if finding is None:
            return VerifyResult(True, self.count, self.prev, keyed_from=self.keyed_from, anchored=self.anchored_count)
        return VerifyResult(False, self.count, self.prev, finding.seq, finding.text, finding.failure,
                            keyed_from=self.keyed_from, anchored=self.anchored_count)


def _entry(row: Any) -> AuditEntry:
    data = {c: row[c] for c in _COLUMNS}
    for column in ("params_redacted", "rule", "flags"):
        if data[column] is not None:
            data[column] = json.loads(data[column])
    data["prev_hash"], data["hash"] = row["prev_hash"], row["hash"]
    return msgspec.convert(data, AuditEntry)
