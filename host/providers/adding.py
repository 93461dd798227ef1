"""Adding and listing model providers: what `tabwarden provider add` and `list` do, on the
settings files directly (engine.json and the key store), so a machine without a display, where
no settings page can be opened, can set up a model.

Adding checks everything before anything is written: the name, the kind, the model, the base URL
(through the same validation as engine.json, by building the settings it would leave), whether
the name is free (or `replace` was asked for) and whether a key was given (unless the provider
needs none). The key is stored first and the file written after; when the file cannot be written
the key is put back as it was, so a failure leaves both as they were.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from host.config_files import ConfigFileError, EditRefused

INVALID = "invalid_provider"
EXISTS = "provider_exists"
NO_KEY = "no_api_key"
KEY_STORE = "key_store"
# The kinds engine.json takes, each with the base URL of its own service.
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
KINDS = tuple(DEFAULT_BASE_URLS)


@dataclass(frozen=True)
class ProviderAdded:
    """What an addition did, for the command to report."""

    name: str
    kind: str
    model: str
    base_url: str
    key_location: str  # where the key went, in words (never the key)
    replaced: bool
    default_provider: str | None

    def message(self) -> str:
        """Two or three sentences: what was added, where its key is, which provider is the default."""
        verb = "Replaced" if self.replaced else "Added"
        lines = [f"{verb} provider {self.name!r}: {self.kind}, model {self.model}, {self.base_url}.",
                 f"Its API key: {self.key_location}."]
        if self.default_provider == self.name:
            lines.append("It is the default provider: new tasks use it.")
        elif self.default_provider:
            lines.append(f"The default provider is still {self.default_provider!r}; add --default to make this one "
                         "the default.")
        else:
            lines.append("No provider is the default among several: choose one with `tabwarden provider default "
                         "NAME`.")
        return "\n".join(lines)

    def to_wire(self) -> dict[str, Any]:
        """The addition as a JSON object (CLI --json)."""
        return {"name": self.name, "kind": self.kind, "model": self.model, "baseUrl": self.base_url,
                "key": self.key_location, "replaced": self.replaced, "defaultProvider": self.default_provider,
                "message": self.message()}


def check_addition(name: str, kind: str, model: str, base_url: str | None, *, replace: bool = False,
                   make_default: bool = False, api_key_env: str | None = None,
                   path: Path | None = None) -> tuple[dict[str, Any], bool]:
    """The settings engine.json would hold after the addition, and whether it replaces a
    provider; raises EditRefused (naming the field) when the addition cannot be made. Writes
    nothing."""
    from host.providers.config import load_config, parse_config, valid_name

    if not valid_name(name):
        raise EditRefused(INVALID, f"the name {name!r} must be 1-64 of A-Z a-z 0-9 _ . - - at `$.name`")
    if kind not in KINDS:
        raise EditRefused(INVALID, f"the kind must be one of {', '.join(KINDS)}, not {kind!r} - at `$.kind`")
    try:
        current = load_config(path).model_dump(by_alias=True, exclude_defaults=True)
    except ConfigFileError as exc:
        raise EditRefused(INVALID, f"the engine settings cannot be read, so nothing was added: {exc}") from None
    providers = current.setdefault("providers", {})
    replaced = name in providers
    if replaced and not replace:
        raise EditRefused(EXISTS, f"there is already a provider named {name!r}; add --replace to replace it, or "
                                  "choose another name - at `$.name`")
    entry: dict[str, Any] = {"kind": kind, "model": model, "baseUrl": base_url or DEFAULT_BASE_URLS[kind]}
    if api_key_env:
        entry["apiKeyEnv"] = api_key_env
    providers[name] = entry
    if make_default:
        current["defaultProvider"] = name
    try:
        parse_config(current)
    except ConfigFileError as exc:
        raise EditRefused(INVALID, _problems(exc, name)) from None
    return current, replaced


def _problems(exc: ConfigFileError, name: str) -> str:
    """A validation failure in the words of the command's own fields (`$.baseUrl`, not
    `$.providers.work.baseUrl`)."""
    prefix = f"$.providers.{name}"
    return "; ".join(f"{message} - at `{'$' + path[len(prefix):] if path.startswith(prefix) else path}`"
                     for path, message in exc.problems)


def add_provider(name: str, kind: str, model: str, base_url: str | None, key: str | None, key_store: Any, *,
                 replace: bool = False, make_default: bool = False, api_key_env: str | None = None,
                 path: Path | None = None) -> ProviderAdded:
    """Add provider `name` to engine.json (at `path`, default the user's) and store `key` under
    its name. A provider without `key` needs `api_key_env`, or is one that takes no key (pass
    key=""). Raises EditRefused; in every case nothing changed."""
    from host.providers.config import parse_config, save_config
    from host.providers.secrets import SecretError, key_location

    current, replaced = check_addition(name, kind, model, base_url, replace=replace, make_default=make_default,
                                       api_key_env=api_key_env, path=path)
    if key is None and not api_key_env:
        raise EditRefused(NO_KEY, "no API key was given: pipe it on standard input or type it at the prompt, name "
                                  "an environment variable with --key-env, or pass --no-key for a server that needs "
                                  "none - at `$.apiKey`")
    updated = parse_config(current)
    try:
        before = key_store.get(name)
        if key:
            key_store.set(name, key)
        elif before is not None:
            key_store.delete(name)  # a key left from an earlier provider of that name must not carry over
    except SecretError as exc:
        raise EditRefused(KEY_STORE, f"the API key could not be stored, so nothing was added: {exc}") from None
    try:
        save_config(updated, path)
    except OSError as exc:
        _put_back(key_store, name, before)
        raise EditRefused(INVALID, f"the engine settings could not be written, so nothing was added: {exc}") from None
    chosen = updated.provider()
    entry = updated.providers[name]
    return ProviderAdded(name, kind, entry.model, entry.base_url, key_location(key_store, name, api_key_env),
                         replaced, chosen[0] if chosen is not None else None)


def set_default(name: str, path: Path | None = None) -> str:
    """Make provider `name` the default; returns what changed, in a sentence. Raises
    EditRefused (`provider_not_found`, `invalid_provider`); nothing changes then."""
    from host.providers.config import load_config, parse_config, save_config
    from host.providers.removal import NOT_FOUND

    try:
        current = load_config(path).model_dump(by_alias=True, exclude_defaults=True)
    except ConfigFileError as exc:
        raise EditRefused(INVALID, f"the engine settings cannot be read, so nothing changed: {exc}") from None
    known = sorted(current.get("providers", {}))
    if name not in known:
        raise EditRefused(NOT_FOUND, f"there is no provider named {name!r} (providers: {', '.join(known) or 'none'}) "
                                     "- at `$.name`")
    current["defaultProvider"] = name
    try:
        save_config(parse_config(current), path)
    except OSError as exc:
        raise EditRefused(INVALID, f"the engine settings could not be written, so nothing changed: {exc}") from None
    return f"{name!r} is the default provider now: new tasks use it."


def _put_back(key_store: Any, name: str, before: str | None) -> None:
    """The key as it was before a failed addition."""
    if before is None:
        key_store.delete(name)
    else:
        key_store.set(name, before)


@dataclass(frozen=True)
class ProviderListed:
    """One provider as `tabwarden provider list` shows it (never its key)."""

    name: str
    kind: str
    model: str
    base_url: str
    key: str  # where its key is, in words
    default: bool

    def to_wire(self) -> dict[str, Any]:
        """The provider as a JSON object (CLI --json)."""
        return {"name": self.name, "kind": self.kind, "model": self.model, "baseUrl": self.base_url, "key": self.key,
                "default": self.default}


def list_providers(key_store: Any, path: Path | None = None) -> list[ProviderListed]:
    """Every provider in engine.json, by name, with where its key is. Raises ConfigFileError
    when the settings cannot be read."""
    from host.providers.config import load_config
    from host.providers.secrets import key_location

    config = load_config(path)
    chosen = config.provider()
    default = chosen[0] if chosen is not None else None
    return [ProviderListed(name, entry.kind, entry.model, entry.base_url,
                           key_location(key_store, name, entry.api_key_env), name == default)
            for name, entry in sorted(config.providers.items())]
