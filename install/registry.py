"""The Windows registry, behind the `winreg` module's own interface.

`HostRegistry` takes any object shaped like `winreg` (the real module on Windows, or
`FakeWinreg` in tests), so the Windows layout is exercised on every OS.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class HostRegistry:
    """Reads and writes the default value of HKCU subkeys."""

    def __init__(self, winreg: Any):
        self._w = winreg

    def set_default(self, subkey: str, value: str) -> None:
        with self._w.CreateKeyEx(self._w.HKEY_CURRENT_USER, subkey, 0, self._w.KEY_WRITE) as key:
            self._w.SetValueEx(key, "", 0, self._w.REG_SZ, value)

    def get_default(self, subkey: str) -> str | None:
        try:
            with self._w.OpenKey(self._w.HKEY_CURRENT_USER, subkey, 0, self._w.KEY_READ) as key:
                value, _kind = self._w.QueryValueEx(key, "")
                return value
        except OSError:
            return None

    def delete(self, subkey: str) -> bool:
        try:
            self._w.DeleteKey(self._w.HKEY_CURRENT_USER, subkey)
            return True
        except OSError:
            return False


def system_registry() -> HostRegistry | None:
    """The real registry on Windows, None elsewhere."""
    try:
        import winreg  # type: ignore[import-not-found]
    except ImportError:
        return None
    return HostRegistry(winreg)


class _Key:
    def __init__(self, store: "FakeWinreg", path: str):
        self.store, self.path = store, path

    def __enter__(self) -> "_Key":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def Close(self) -> None:  # noqa: N802 - winreg spelling
        return None


class FakeWinreg:
    """A file-backed stand-in for the parts of `winreg` the installer uses."""

    HKEY_CURRENT_USER = "HKCU"
    KEY_READ = 0x20019
    KEY_WRITE = 0x20006
    REG_SZ = 1

    def __init__(self, path: Path):
        self._path = Path(path)

    def _load(self) -> dict[str, dict[str, list[Any]]]:
        if not self._path.exists():
            return {}
        return json.loads(self._path.read_text(encoding="utf-8"))

    def _save(self, data: dict[str, dict[str, list[Any]]]) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")

    @staticmethod
    def _norm(root: str, subkey: str) -> str:
        return f"{root}\\{subkey}".lower()

    def CreateKeyEx(self, root: str, subkey: str, reserved: int = 0, access: int = 0) -> _Key:  # noqa: N802
        data = self._load()
        data.setdefault(self._norm(root, subkey), {})
        self._save(data)
        return _Key(self, self._norm(root, subkey))

    def OpenKey(self, root: str, subkey: str, reserved: int = 0, access: int = 0) -> _Key:  # noqa: N802
        path = self._norm(root, subkey)
        if path not in self._load():
            raise FileNotFoundError(2, "The system cannot find the file specified", subkey)
        return _Key(self, path)

    def SetValueEx(self, key: _Key, name: str, reserved: int, kind: int, value: Any) -> None:  # noqa: N802
        data = self._load()
        data.setdefault(key.path, {})[name] = [value, kind]
        self._save(data)

    def QueryValueEx(self, key: _Key, name: str) -> tuple[Any, int]:  # noqa: N802
        values = self._load().get(key.path, {})
        if name not in values:
            raise FileNotFoundError(2, "The system cannot find the file specified", name)
        value, kind = values[name]
        return value, kind

    def DeleteKey(self, root: str, subkey: str) -> None:  # noqa: N802
        data = self._load()
        path = self._norm(root, subkey)
        if path not in data:
            raise FileNotFoundError(2, "The system cannot find the file specified", subkey)
        if any(other.startswith(path + "\\") for other in data):
            raise PermissionError(5, "Access is denied (key has subkeys)", subkey)
        del data[path]
        self._save(data)
