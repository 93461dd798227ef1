"""Why a control connection was refused: a stable code, one log line, and a count per code.

Refusals are logged at WARNING in the host log (never sent to the refused peer, which learns
nothing but a closed connection) and counted, so `control.status` shows probing attempts.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter

log = logging.getLogger("tabwarden.control")

FOREIGN_USER = "foreign_user"  # the OS reports a different user on the other end
UNKNOWN_PEER = "unknown_peer"  # the OS could not tell who is on the other end
BAD_TOKEN = "bad_token"  # a hello with the wrong token
NO_HELLO = "no_hello"  # nothing (or nothing whole) within the hello timeout
NOT_HELLO_FIRST = "not_hello_first"  # a valid control message, but not a hello, came first
NOT_CONTROL_PROTOCOL = "not_control_protocol"  # the first frame is not a control message at all
TOO_MUCH_BEFORE_HELLO = "too_much_before_hello"  # more bytes than a hello needs, before one

CODES = (FOREIGN_USER, UNKNOWN_PEER, BAD_TOKEN, NO_HELLO, NOT_HELLO_FIRST, NOT_CONTROL_PROTOCOL,
         TOO_MUCH_BEFORE_HELLO)


class RefusalLog:
    """Counts refusals by code and logs each one."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def refuse(self, code: str, detail: str) -> None:
        """Record one refused connection: `code` is one of CODES, `detail` says what was seen."""
        with self._lock:
            self._counts[code] += 1
        log.warning("control connection refused [%s]: %s", code, detail)

    def counts(self) -> dict[str, int]:
        """Refusals so far, by code (codes never seen are left out)."""
        with self._lock:
            return dict(self._counts)
