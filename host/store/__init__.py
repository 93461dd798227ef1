"""SQLite storage shared by the host's components (see `db.Store`)."""

from host.store.db import Store, StoreError, default_path
from host.store.migrations import Migration

__all__ = ["Migration", "Store", "StoreError", "default_path"]
