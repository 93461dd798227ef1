"""Where provider API keys live: the OS keyring when one is usable, else a JSON file with mode
0600 in a 0700 folder under the data dir. Never in the SQLite file (which is copied into bug
reports and backups far more casually than a keyring)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Protocol

from protocol.errors import TabwardenError

log = logging.getLogger("tabwarden.providers")

SERVICE = "tabwarden"
FILE_NAME = "provider-keys.json"


class SecretError(TabwardenError, RuntimeError):
    """A key could not be read or stored."""

    code = "key_store"


class KeyStore(Protocol):
    """Get, set and delete a provider's API key by provider name."""

    backend: str

    def get(self, name: str) -> str | None:
        """The key of provider `name`, or None."""

    def set(self, name: str, key: str) -> None:
        """Store the key of provider `name`."""

    def delete(self, name: str) -> None:
        """Forget the key of provider `name` (no error when absent)."""


class FileKeyStore:
    """Keys in one JSON object, file mode 0600, folder mode 0700. A file that another user can
    read is refused rather than used."""

    backend = "file"

    def __init__(self, path: Path):
        self.path = path

    def _read(self) -> dict[str, str]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return {}
        if hasattr(os, "getuid") and (info.st_mode & 0o077 or info.st_uid != os.getuid()):
            raise SecretError(f"{self.path} is readable by others (mode {info.st_mode & 0o777:o}); "
                              "fix with chmod 600 or delete it")
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SecretError(f"cannot read {self.path}: {exc}") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise SecretError(f"{self.path} is not a JSON object of strings")
        return data

    def _write(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temp = self.path.with_suffix(".tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, sort_keys=True)
            os.chmod(temp, 0o600)
            os.replace(temp, self.path)
        except OSError as exc:
            raise SecretError(f"cannot write {self.path}: {exc}") from None

    def get(self, name: str) -> str | None:
        """The key of provider `name`, or None."""
        return self._read().get(name)

    def set(self, name: str, key: str) -> None:
        """Store the key of provider `name`."""
        data = self._read()
        data[name] = key
        self._write(data)

    def delete(self, name: str) -> None:
        """Forget the key of provider `name`."""
        data = self._read()
        if data.pop(name, None) is not None:
            self._write(data)


class KeyringKeyStore:
    """Keys in the OS keyring (macOS Keychain, Windows Credential Locker, Secret Service)."""

    backend = "keyring"

    def __init__(self, keyring_module) -> None:
        self._keyring = keyring_module

    def get(self, name: str) -> str | None:
        """The key of provider `name`, or None."""
        try:
            return self._keyring.get_password(SERVICE, name)
        except Exception as exc:
            raise SecretError(f"keyring: {exc}") from None

    def set(self, name: str, key: str) -> None:
        """Store the key of provider `name`."""
        try:
            self._keyring.set_password(SERVICE, name, key)
        except Exception as exc:
            raise SecretError(f"keyring: {exc}") from None

    def delete(self, name: str) -> None:
        """Forget the key of provider `name`."""
        try:
            self._keyring.delete_password(SERVICE, name)
        except Exception:
            pass  # absent already


def _usable_keyring():
    try:
        import keyring
        from keyring.backends import fail
    except Exception:
        return None
    try:
        backend = keyring.get_keyring()
    except Exception:
        return None
    if isinstance(backend, fail.Keyring) or "null" in type(backend).__module__.lower():
        return None
    return keyring


def default_key_store(*, prefer_keyring: bool = True) -> KeyStore:
    """The keyring when a real backend is available, else `<data dir>/secrets/provider-keys.json`."""
    # A TABWARDEN_HOME (tests, dedicated profiles) keeps its keys with it, out of the user's keyring.
    if prefer_keyring and os.environ.get("TABWARDEN_HOME") is None:
        module = _usable_keyring()
        if module is not None:
            return KeyringKeyStore(module)
    from host.paths import dirs

    return FileKeyStore(dirs().data / "secrets" / FILE_NAME)


def resolve_key(name: str, api_key_env: str | None, store: KeyStore | None) -> str | None:
    """The API key for provider `name`: the stored one, else the named environment variable."""
    if store is not None:
        stored = store.get(name)
        if stored:
            return stored
    if api_key_env:
        return os.environ.get(api_key_env) or None
    return None
