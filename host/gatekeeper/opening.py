"""The gatekeeper's state opened over its store, and opened again after a storage fault.

`Gatekeeper` takes these methods from `Opening`: loading what it holds from the store (at start
and when it heals), healing once the database answers again, adopting a store that opened only
after the host started, saying why it is closed (`error`, `closed_because`), closing it
(`mark_unavailable`), and reading the policy files again (`reload`). Everything here works on
the parts the `Gatekeeper` constructor builds (see the attributes below).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from host.gatekeeper.audit_trail import AuditTrail
from host.gatekeeper.availability import Availability
from host.gatekeeper.errors import GatekeeperUnavailable, InvalidInput
from host.gatekeeper.healing import Healer, is_storage_error, plain_cause
from host.gatekeeper.loaded_policy import LoadedPolicy
from host.gatekeeper.rule_edits import RuleEdits
from host.gatekeeper.storage.schema import COMPONENT, MIGRATIONS
from host.gatekeeper.thread_state import ThreadState
from host.store.db import Store

_log = logging.getLogger("tabwarden.gatekeeper")


class Opening:
    """Opening, healing and adopting the store (a part of `Gatekeeper`)."""

    _options: dict[str, Any]
    _store: Store | None
    _availability: Availability
    _policy: LoadedPolicy
    _audit: AuditTrail
    _threads: ThreadState
    _rules: RuleEdits
    _healer: Healer
    _healing: threading.Lock
    bind_browser_session: Callable[[str], None]

    def _open_state(self) -> None:
        """Load what the gatekeeper holds from the store (at start, and again when it heals)."""
        store = self._store
        if store is not None:
            store.migrate(COMPONENT, MIGRATIONS)
            self._rules.seed_defaults()
            self._audit.open(store)
        self._threads.open_scopes(store)
        self._policy.reload()

    def _reopen(self) -> None:
        """The healing steps (see `healing`): raises with the cause when one fails."""
        assert self._store is not None
        self._store.probe()
        log = self._audit.log
        if log is not None:
            tail = log.verify_tail()
            if not tail.ok:
                raise GatekeeperUnavailable(f"the audit log's row {tail.broken_seq} does not verify ({tail.problem}); "
                                            "run `tabwarden audit verify`")
        self._open_state()
        self._threads.grants.reopen()
        self._audit.write_late()

    def adopt_store(self, store: Store) -> bool:
        """Take a store that opened after the host started without one (a damaged file moved
        aside or restored): every part is built again over it, the change listeners and the
        browser session kept. True when the gatekeeper is open afterwards."""
        if self._store is not None:
            return self._availability.error is None
        listeners, session = self._availability._listeners, self._threads.grants.session
        self.__init__(store, **self._options)  # type: ignore[misc]
        self._availability._listeners = listeners
        if session is not None and self._availability.error is None:
            try:
                self.bind_browser_session(session)
            except GatekeeperUnavailable:
                pass  # recorded: closed, with the cause
        self._availability.changed()
        return self._availability.error is None

    def heal(self) -> bool:
        """Open again after a storage error when the database answers (at most one attempt per
        delay; see `healing`); True when the gatekeeper is open. Other errors never heal here."""
        if self._availability.error is None:
            return True
        if self._store is None or not all(is_storage_error(e) for e in self._availability.errors()):
            return False
        if not self._healing.acquire(blocking=False):
            return False  # another thread is trying right now
        try:
            if self._availability.error is None or not self._healer.due():
                return self._availability.error is None
            if not self._healer.attempt():
                return False
            self._availability.clear()
            _log.info("storage answers again: the gatekeeper is open (after %d attempts)", self._healer.attempts)
            return True
        finally:
            self._healing.release()

    @property
    def closed_because(self) -> str | None:
        """Why the gatekeeper refuses every call right now, in words (None when it is open)."""
        error = self._availability.error
        if error is None:
            return None
        if not is_storage_error(error):
            return str(error)
        return f"storage unavailable: {plain_cause(self._healer.last_cause or str(error))}"

    # -- availability -------------------------------------------------------------------------

    @property
    def error(self) -> Exception | None:
        """Why the gatekeeper is unavailable (None when it works)."""
        return self._availability.error

    def mark_unavailable(self, reason: Exception) -> None:
        """Fail closed from now on (e.g. the host could not open its store)."""
        self._availability.mark_unavailable(reason)

    def reload(self) -> list[InvalidInput]:
        """(Re)read the policy files and stored rules. On any error the previous state stays in
        force (or, at start-up, nothing does and `check` raises) and the errors are returned."""
        return self._policy.reload()
