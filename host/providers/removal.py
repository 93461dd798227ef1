"""Removing a model provider: its entry in engine.json and its stored API key, together.

The one operation behind the settings page's Remove button, the REPL's `tw.remove_provider` and
`tabwarden provider remove`. The edit is checked before anything changes, the key is deleted
before the file is written (a key must never outlive its provider, where a provider added later
under the same name would inherit it), and a failure at any step leaves the file as it was.
Removing the default provider leaves no default among several (the next task is refused until the
user chooses, rather than silently switching models); a sole remaining provider is the default by
itself, as everywhere else, and the message says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from host.config_files import ConfigFileError, EditRefused

NOT_FOUND = "provider_not_found"
INVALID = "invalid_provider"
KEY_STORE = "key_store"


@dataclass(frozen=True)
class ProviderRemoved:
    """What a removal did, for every caller to report the same way."""

    name: str
    was_default: bool
    key: str  # "removed" (a stored key was deleted), "none" (there was none) or "unknown"
    remaining: tuple[str, ...]
    default_provider: str | None  # the default after the removal (a sole provider is it by itself)

    def message(self) -> str:
        """One or two sentences saying what changed and what the user may need to do next."""
        text = f"Removed provider {self.name!r}"
        text += " and its stored API key." if self.key == "removed" else " (it had no stored API key)." \
            if self.key == "none" else "; any stored API key for it was deleted."
        if self.was_default:
            if len(self.remaining) == 1:
                text += f" It was the default provider; {self.remaining[0]!r}, the only one left, is the default now."
            elif self.remaining:
                text += (f" It was the default provider: no provider is the default now; choose one of "
                         f"{', '.join(self.remaining)} as the default before the next task.")
            else:
                text += " It was the default provider and no provider is left: add one before the next task."
        return text

    def to_wire(self) -> dict[str, Any]:
        """The removal as a JSON object (control socket, CLI --json)."""
        return {"name": self.name, "wasDefault": self.was_default, "key": self.key,
                "remaining": list(self.remaining), "defaultProvider": self.default_provider,
                "message": self.message()}


def remove_provider(name: str, key_store: Any, path: Path | None = None) -> ProviderRemoved:
    """Remove provider `name` from engine.json (at `path`, default the user's) and delete its
    stored key. Raises EditRefused: `provider_not_found` (nothing named so), `invalid_provider`
    (the settings file cannot be read or would be invalid) or `key_store` (the key could not be
    deleted); in each case nothing changed."""
    from host.providers.config import load_config, parse_config, save_config

    try:
        loaded = load_config(path)
    except ConfigFileError as exc:
        raise EditRefused(INVALID, f"the engine settings cannot be read, so nothing was removed: {exc}") from None
    before = loaded.provider()
    current = loaded.model_dump(by_alias=True, exclude_defaults=True)
    providers = current.get("providers", {})
    if name not in providers:
        known = ", ".join(sorted(providers)) or "none"
        raise EditRefused(NOT_FOUND, f"there is no provider named {name!r} (providers: {known}) - at `$.name`")
    del providers[name]
    was_default = before is not None and before[0] == name  # named so, or the sole provider
    if current.get("defaultProvider") == name:
        del current["defaultProvider"]
    try:
        updated = parse_config(current)
    except ConfigFileError as exc:
        raise EditRefused(INVALID, f"removing {name!r} would leave invalid settings, so nothing was removed: "
                                   f"{exc}") from None
    stored = _delete_key(key_store, name)
    try:
        save_config(updated, path)
    except OSError as exc:
        if stored:
            key_store.set(name, stored)  # put the key back: the provider stays as it was
        raise EditRefused(INVALID, f"the engine settings could not be written, so nothing was removed: {exc}") from None
    key = "unknown" if stored is _UNREADABLE else "removed" if stored else "none"
    chosen = updated.provider()
    return ProviderRemoved(name, was_default, key, tuple(sorted(updated.providers)),
                           chosen[0] if chosen is not None else None)


class _Unreadable(str):
    pass


_UNREADABLE = _Unreadable()


def _delete_key(key_store: Any, name: str) -> str | None:
    """Delete the stored key; returns what was stored (None: nothing; `_UNREADABLE`: unknown)."""
    from host.providers.secrets import SecretError

    try:
        stored = key_store.get(name)
    except SecretError:
        stored = _UNREADABLE  # unreadable: delete it all the same
    try:
        key_store.delete(name)
    except (SecretError, OSError) as exc:
        raise EditRefused(KEY_STORE, f"the stored API key of {name!r} could not be deleted, so the provider was "
                                     f"kept: {exc}") from None
    return stored
