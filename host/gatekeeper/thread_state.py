"""What the gatekeeper holds per thread: session grants (`acceptForSession`), the thread's scope
(accepted origins, scope lock) and its policy override. Grants and scopes keep their own storage
errors; `Availability` reads them through `error`, so a failure there fails closed.
"""

from __future__ import annotations

import threading
from typing import Any

from host.gatekeeper.grants import SessionGrants
from host.gatekeeper.policy import normalize_policy
from host.gatekeeper.scope import ThreadScopes
from host.store.db import Store


class ThreadState:
    """Session grants, thread scopes and policy overrides of every thread."""

    def __init__(self, store: Store | None) -> None:
        self.grants = SessionGrants(store)
        # In memory until `open_scopes`: the store's tables may not be migrated yet.
        self.scopes = ThreadScopes(None)
        self._policies: dict[str, str] = {}
        self._lock = threading.Lock()

    def open_scopes(self, store: Store | None) -> None:
        """Load the scopes from `store` (after its migrations ran). Storage errors leave as
        `StoreError`, and the in-memory scopes stay."""
        self.scopes = ThreadScopes(store)

    @property
    def error(self) -> Exception | None:
        """The storage failure of the grants or the scopes, if any."""
        return self.grants.error or self.scopes.error

    def bind_browser_session(self, browser_session: str) -> None:
        """Adopt the browser-session id (drops other sessions' grants)."""
        self.grants.bind(browser_session)

    def set_policy(self, thread_id: str, policy: str | None) -> None:
        """Set (or clear with None) a thread's policy override; legacy names are normalised."""
        normalized = normalize_policy(policy)
        with self._lock:
            if normalized is None:
                self._policies.pop(thread_id, None)
            else:
                self._policies[thread_id] = normalized

    def policy(self, thread_id: str) -> str | None:
        """A thread's policy override (None: none)."""
        return self._policies.get(thread_id)

    def context(self, thread_id: str) -> dict[str, Any]:
        """The `Context` fields a decision for this thread takes from here."""
        return {"grants": self.grants.for_thread(thread_id), "scope_origins": self.scopes.origins_view(thread_id),
                "scope_lock": self.scopes.lock(thread_id)}

    def clear(self, thread_id: str) -> None:
        """Forget a thread's grants, scope, lock and policy override."""
        self.grants.clear_thread(thread_id)
        self.scopes.clear_thread(thread_id)
        self._policies.pop(thread_id, None)
