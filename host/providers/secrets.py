"""Where provider API keys live: the OS keyring when one is usable, else a JSON file with mode
0600 in a 0700 folder under the data dir. Never in the SQLite file (which is copied into bug
reports and backups far more casually than a keyring). Every store can say where a key is
(`where`), for the commands that report it without showing the key."""

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
    label: str  # the store in words: `the OS keyring (...)`, `the file ... (mode 0600)`

    def get(self, name: str) -> str | None:
        """The key of provider `name`, or None."""

    def set(self, name: str, key: str) -> None:
        """Store the key of provider `name`."""

    def delete(self, name: str) -> None:
        """Forget the key of provider `name` (no error when absent)."""

    def where(self, name: str) -> str | None:
        """Where the key of provider `name` is, in words (None when there is none)."""


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

    @property
    def label(self) -> str:
        """The file as people read it."""
        return f"the file {self.path} (mode 0600)"

    def where(self, name: str) -> str | None:
        """Where the key of `name` is, in words (None when there is none)."""
        return self.label if self.get(name) is not None else None


class KeyringKeyStore:
    """Keys in the OS keyring (macOS Keychain, Windows Credential Locker, Secret Service).

    `fallback`, the 0600 file, is still read: keys stored there before the keyring was usable
    keep working, and a key moves into the keyring when it is stored again. A keyring that
    refuses a key (locked, or its service gone) leaves it in the file instead, and `where`
    says so."""

    backend = "keyring"

    def __init__(self, keyring_module, fallback: FileKeyStore | None = None) -> None:
        self._keyring = keyring_module
        self.fallback = fallback

    @property
    def label(self) -> str:
        """The keyring as people know it: `the OS keyring (SecretService Keyring)`."""
        try:
            name = getattr(self._keyring.get_keyring(), "name", "") or type(self._keyring.get_keyring()).__name__
        except Exception:
            name = ""
        return f"the OS keyring ({name})" if name else "the OS keyring"

    def _in_keyring(self, name: str) -> str | None:
        try:
            return self._keyring.get_password(SERVICE, name)
        except Exception as exc:
            raise SecretError(f"keyring: {exc}") from None

    def get(self, name: str) -> str | None:
        """The key of provider `name`, or None. A keyring that cannot answer (locked, its
        service gone) is an error only when the file has no key of that name either."""
        try:
            found = self._in_keyring(name)
        except SecretError:
            kept = self.fallback.get(name) if self.fallback is not None else None
            if kept is None:
                raise
            return kept
        if found is None and self.fallback is not None:
            return self.fallback.get(name)
        return found

    def set(self, name: str, key: str) -> None:
        """Store the key of provider `name` (in the file when the keyring refuses it)."""
        try:
            self._keyring.set_password(SERVICE, name, key)
        except Exception as exc:
            if self.fallback is None:
                raise SecretError(f"keyring: {exc}") from None
            log.warning("the keyring refused the key of %s (%s); it goes to %s", name, exc, self.fallback.path)
            self.fallback.set(name, key)
            return
        if self.fallback is not None:
            self.fallback.delete(name)  # moved: a key lives in one place

    def delete(self, name: str) -> None:
        """Forget the key of provider `name` (in the keyring and in the file)."""
        try:
            self._keyring.delete_password(SERVICE, name)
        except Exception:
            pass  # absent already
        if self.fallback is not None:
            self.fallback.delete(name)

    def where(self, name: str) -> str | None:
        """Where the key of `name` is, in words (None when there is none)."""
        kept = self.fallback.where(name) if self.fallback is not None else None
        try:
            found = self._in_keyring(name)
        except SecretError:
            if kept is None:
                raise
            return kept
        return f"{self.label}, service {SERVICE!r}, entry {name!r}" if found is not None else kept


def _usable_keyring():
    """The `keyring` module when its backend really keeps secrets, else None: not the fail or
    null backends, nor a plain-text file (keyring ranks those below 1), as on a headless Linux
    without a Secret Service."""
    try:
        import keyring
    except Exception:
        return None
    try:
        backend = keyring.get_keyring()
        priority = float(getattr(backend, "priority", 0))
    except Exception:
        return None
    module = type(backend).__module__.lower()
    if priority < 1 or module.endswith((".fail", ".null")):
        return None
    return keyring


def default_key_store(*, prefer_keyring: bool = True) -> KeyStore:
    """The keyring when a real backend is available (the 0600 file behind it), else
    `<data dir>/secrets/provider-keys.json`."""
    from host.paths import dirs

    file_store = FileKeyStore(dirs().data / "secrets" / FILE_NAME)
    # A TABWARDEN_HOME (tests, dedicated profiles) keeps its keys with it, out of the user's
    # keyring, unless a keyring backend is named for it (PYTHON_KEYRING_BACKEND).
    separate = os.environ.get("TABWARDEN_HOME") is not None and not os.environ.get("PYTHON_KEYRING_BACKEND")
    if prefer_keyring and not separate:
        module = _usable_keyring()
        if module is not None:
            return KeyringKeyStore(module, fallback=file_store)
    return file_store


def key_location(store: KeyStore | None, name: str, api_key_env: str | None = None) -> str:
    """Where provider `name`'s key comes from, in words, never the key: the keyring, the file,
    an environment variable (and whether it is set), or nowhere."""
    stored = None
    if store is not None:
        try:
            stored = store.where(name)  # type: ignore[attr-defined]
        except SecretError as exc:
            return f"unknown: the key store cannot be read ({exc})"
    if stored:
        return stored
    if api_key_env:
        state = "set" if os.environ.get(api_key_env) else "not set now"
        return f"the environment variable {api_key_env} ({state})"
    return "no key stored"


def resolve_key(name: str, api_key_env: str | None, store: KeyStore | None) -> str | None:
    """The API key for provider `name`: the stored one, else the named environment variable."""
    if store is not None:
        stored = store.get(name)
        if stored:
            return stored
    if api_key_env:
        return os.environ.get(api_key_env) or None
    return None
