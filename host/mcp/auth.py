"""Where a server's bearer token comes from: the provider key store (OS keyring, else a 0600
file) under `mcp:<server id>:bearer`, else the environment variable the settings name. Never
from mcp.json.

A stored token is bound to the origin it was given for (recorded beside it): if the server's
URL later points at another origin, by an edit on the settings page or by hand, the token is
not sent there; the connection fails with `mcp_token_origin_changed` until it is set again."""

from __future__ import annotations

from typing import Any

from host.mcp.errors import McpFailure


def credential_name(server_id: str) -> str:
    """The key-store name of a server's bearer token."""
    return f"mcp:{server_id}:bearer"


def _origin_name(server_id: str) -> str:
    return f"mcp:{server_id}:bearer-origin"


def origin_of(url: str) -> str:
    """The origin permission rules and token bindings key on ("" for a URL without one)."""
    from host.gatekeeper.origins import normalize_origin

    try:
        return normalize_origin(url).text
    except ValueError:
        return ""


def store_token(store: Any, server_id: str, url: str, token: str | None) -> None:
    """Keep `token` for the server at `url` (or, with None, forget it and its binding)."""
    if token is None:
        store.delete(credential_name(server_id))
        store.delete(_origin_name(server_id))
        return
    # Unbind first: if a later write fails, no token is bound to any origin (nothing is sent).
    store.delete(_origin_name(server_id))
    store.set(credential_name(server_id), token)
    store.set(_origin_name(server_id), origin_of(url))


def has_stored_token(store: Any, server_id: str) -> bool:
    """Whether a token is stored for the server (whatever origin it is bound to)."""
    return bool(store.get(credential_name(server_id)))


def bearer_token(server_id: str, url: str, token_env: str | None, store: Any) -> str | None:
    """The token to send as `Authorization: Bearer ...`, or None. Raises SecretError when the key
    store cannot be read, and McpFailure when the stored token was given for another origin."""
    import os

    stored = store.get(credential_name(server_id))
    if stored:
        bound = store.get(_origin_name(server_id)) or ""
        if bound != origin_of(url):
            raise McpFailure("mcp_token_origin_changed",
                             f"the stored token of {server_id!r} was given for {bound or 'an unknown origin'}, but the "
                             f"server now points at {origin_of(url) or url}; set the token again to send it there")
        return stored
    return os.environ.get(token_env) if token_env else None
