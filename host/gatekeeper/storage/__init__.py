"""Storage: what the gatekeeper persists in the host's SQLite store. Every failure leaves these
modules as `StoreError`; the service turns it into a fail-closed `GatekeeperUnavailable`.

  schema        the gatekeeper's tables, as store migrations (component `gatekeeper`)
  rule_storage  the stored rules and the user's origin-list additions (their SQL)
  pins          the pinned definitions of MCP tools, cached over the store
  audit         the append-only, hash-chained audit log
"""
