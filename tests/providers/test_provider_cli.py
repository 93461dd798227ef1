"""`tabwarden provider remove NAME` as a real subprocess: the provider and its stored key go,
the default is accounted for, and an unknown name is a clear error (exit 1) that changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tabwarden(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TABWARDEN_HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")}
    return subprocess.run([sys.executable, "-m", "host", *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=60)


def _setup(home: Path) -> tuple[Path, Path]:
    from host.paths import dirs
    from host.providers.secrets import FILE_NAME, FileKeyStore

    old = os.environ.get("TABWARDEN_HOME")
    os.environ["TABWARDEN_HOME"] = str(home)
    try:
        folders = dirs()
    finally:
        if old is None:
            os.environ.pop("TABWARDEN_HOME")
        else:
            os.environ["TABWARDEN_HOME"] = old
    config, keys = folders.config / "engine.json", folders.data / "secrets" / FILE_NAME
    config.parent.mkdir(parents=True)
    entry = {"kind": "openai", "baseUrl": "https://api.example/v1", "model": "m"}
    config.write_text(json.dumps({"providers": {"work": entry, "home": entry, "spare": entry},
                                  "defaultProvider": "work"}))
    FileKeyStore(keys).set("work", "sk-work")
    return config, keys


def test_remove_the_default_then_an_unknown_name(tmp_path):
    home = tmp_path / "home"
    config, keys = _setup(home)
    done = tabwarden(home, "provider", "remove", "work")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("Removed provider 'work' and its stored API key. It was the default provider: no "
                                   "provider is the default now; choose one of home, spare as the default before the "
                                   "next task.")
    assert json.loads(config.read_text()).keys() == {"providers"}
    assert sorted(json.loads(config.read_text())["providers"]) == ["home", "spare"]
    assert "work" not in json.loads(keys.read_text())

    before = config.read_text()
    missing = tabwarden(home, "provider", "remove", "nobody")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.strip() == ("tabwarden provider remove: provider_not_found: there is no provider named "
                                      "'nobody' (providers: home, spare) - at `$.name`")
    assert config.read_text() == before
    as_json = json.loads(tabwarden(home, "provider", "remove", "nobody", "--json").stdout)
    assert as_json == {"ok": False, "error": {"code": "provider_not_found", "message": (
        "there is no provider named 'nobody' (providers: home, spare) - at `$.name`")}}
    removed = json.loads(tabwarden(home, "provider", "remove", "spare", "--json").stdout)
    assert removed["ok"] and removed["remaining"] == ["home"] and removed["key"] == "none"
