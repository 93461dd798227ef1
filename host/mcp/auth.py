"""Where a server's bearer token comes from: the provider key store (OS keyring, else a 0600
file) under `mcp:<server id>:bearer`, else the environment variable the settings name. Never
from mcp.json."""

from __future__ import annotations

from typing import Any


def credential_name(server_id: str) -> str:
    """The key-store name of a server's bearer token."""
    return f"mcp:{server_id}:bearer"


def bearer_token(server_id: str, token_env: str | None, store: Any) -> str | None:
    """The token to send as `Authorization: Bearer ...`, or None (raises SecretError when the
    key store cannot be read)."""
    from host.providers.secrets import resolve_key

    return resolve_key(credential_name(server_id), token_env, store)
