"""`tabwarden provider list | add | remove` as a new user runs them on a machine without a display:
real subprocesses, a real 0600 key file, and real `keyring` backends (keyring's own null backend,
and a small one of ours that keeps its secrets in a file so that separate processes share them).
The key is read from standard input or a prompt without echo, and never shown again."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from keyring.backend import KeyringBackend
from keyring.compat import properties

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-0123456789abcdef"
OUR_KEYRING = "tests.host.test_provider_cli.FileKeyring"


class _OnlyWhereUsed(KeyringBackend):
    """A test backend that keyring never picks by itself: merely imported, a subclass joins
    keyring's registry, and ranked as a desktop keyring it would become every later test's."""

    in_use = False  # set by the test that hands it to keyring itself

    @properties.classproperty
    def priority(cls) -> float:  # type: ignore[override]
        if not (cls.in_use or os.environ.get("TW_TEST_KEYRING")):
            raise RuntimeError("a test keyring, used only where a test names it")
        return 5  # as a desktop keyring ranks itself


class FileKeyring(_OnlyWhereUsed):
    """A keyring backend for the tests: its secrets in the JSON file `TW_TEST_KEYRING` names."""

    name = "a test keyring"  # type: ignore[assignment]

    def _load(self) -> dict[str, str]:
        path = Path(os.environ["TW_TEST_KEYRING"])
        return json.loads(path.read_text()) if path.exists() else {}

    def _save(self, data: dict[str, str]) -> None:
        Path(os.environ["TW_TEST_KEYRING"]).write_text(json.dumps(data))

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}/{username}"] = password
        self._save(data)

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        data.pop(f"{service}/{username}")
        self._save(data)


def folders(home: Path) -> tuple[Path, Path]:
    """engine.json and the key file of the Tabwarden home `home`."""
    return home / "config" / "engine.json", home / "data" / "secrets" / "provider-keys.json"


def tabwarden(home: Path, *args: str, stdin: str = "", keyring: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHON_KEYRING_BACKEND"}
    env.update(TABWARDEN_HOME=str(home), XDG_RUNTIME_DIR=str(home / "run"), TW_TEST_KEYRING=str(home / "keyring.json"))
    if keyring:
        env["PYTHON_KEYRING_BACKEND"] = keyring
    return subprocess.run([sys.executable, "-m", "host", "provider", *args], input=stdin, capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60)


@pytest.fixture
def home(tmp_path):
    return tmp_path / "tw"


def test_add_reads_the_key_from_a_pipe_into_the_0600_file_and_list_says_where_it_is(home):
    config, keys = folders(home)
    added = tabwarden(home, "add", "openai", "work", "gpt-4.1-mini", stdin=KEY + "\n")
    assert added.returncode == 0, added.stderr
    assert added.stdout.splitlines() == [
        "Added provider 'work': openai, model gpt-4.1-mini, https://api.openai.com/v1.",
        f"Its API key: the file {keys} (mode 0600).",
        "It is the default provider: new tasks use it."]
    assert json.loads(config.read_text()) == {"providers": {"work": {
        "kind": "openai", "baseUrl": "https://api.openai.com/v1", "model": "gpt-4.1-mini"}}}
    assert json.loads(keys.read_text()) == {"work": KEY}
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600 and KEY not in config.read_text()

    local = tabwarden(home, "add", "openai", "local", "qwen3", "--base-url", "http://127.0.0.1:8080/v1/", "--no-key",
                      "--default")
    assert local.returncode == 0, local.stderr
    assert "Its API key: no key stored." in local.stdout and "It is the default provider" in local.stdout
    claude = tabwarden(home, "add", "anthropic", "claude", "claude-sonnet-4-5", "--key-env", "TW_NO_SUCH_VAR")
    assert claude.returncode == 0, claude.stderr
    assert "The default provider is still 'local'; add --default to make this one the default." in claude.stdout

    listed = tabwarden(home, "list")
    assert listed.returncode == 0 and KEY not in listed.stdout + listed.stderr
    lines = [line.split("  ") for line in listed.stdout.splitlines()]
    assert [[cell.strip() for cell in line if cell.strip()] for line in lines] == [
        ["name", "kind", "model", "base URL", "API key"],
        ["claude", "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com",
         "the environment variable TW_NO_SUCH_VAR (not set now)"],
        ["*", "local", "openai", "qwen3", "http://127.0.0.1:8080/v1", "no key stored"],
        ["work", "openai", "gpt-4.1-mini", "https://api.openai.com/v1", f"the file {keys} (mode 0600)"],
        ["* the default provider"]]
    as_json = json.loads(tabwarden(home, "list", "--json").stdout)
    assert [(p["name"], p["default"]) for p in as_json["providers"]] == [("claude", False), ("local", True),
                                                                         ("work", False)]

    chosen = tabwarden(home, "default", "claude")
    assert chosen.returncode == 0 and chosen.stdout.strip() == "'claude' is the default provider now: new tasks use it."
    assert json.loads(config.read_text())["defaultProvider"] == "claude"
    unknown = tabwarden(home, "default", "claud")
    assert unknown.returncode == 1 and "there is no provider named 'claud' (providers: claude, local, work)" \
        in unknown.stderr


@pytest.mark.parametrize("args, stdin, code, field", [
    (("add", "openai", "my work", "m"), KEY, "invalid_provider", "$.name"),
    (("add", "openia", "work", "m"), KEY, "invalid_provider", "$.kind"),
    (("add", "openai", "work", "m", "--base-url", "ftp://api.example"), KEY, "invalid_provider", "$.baseUrl"),
    (("add", "openai", "work", ""), KEY, "invalid_provider", "$.model"),
    (("add", "openai", "work", "m"), "\n", "no_api_key", "$.apiKey"),
    (("add", "openai", "work", "m"), "", "no_api_key", "$.apiKey"),
])
def test_a_bad_addition_is_a_structured_error_that_writes_nothing(home, args, stdin, code, field):
    config, keys = folders(home)
    refused = tabwarden(home, *args, stdin=stdin)
    assert refused.returncode == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"tabwarden provider add: {code}: ") and line.endswith(f"- at `{field}`"), line
    assert not config.exists() and not keys.exists()
    as_json = json.loads(tabwarden(home, *args, "--json", stdin=stdin).stdout)
    assert as_json["ok"] is False and as_json["error"]["code"] == code and KEY not in json.dumps(as_json)


def test_a_name_in_use_needs_replace_and_a_replaced_key_does_not_linger(home):
    config, keys = folders(home)
    assert tabwarden(home, "add", "openai", "work", "m1", stdin=KEY).returncode == 0
    before = config.read_text()
    taken = tabwarden(home, "add", "anthropic", "work", "m2", stdin="sk-other")
    assert taken.returncode == 2 and "provider_exists" in taken.stderr and "--replace" in taken.stderr
    assert config.read_text() == before and json.loads(keys.read_text()) == {"work": KEY}
    replaced = tabwarden(home, "add", "anthropic", "work", "m2", "--replace", "--key-env", "TW_NO_SUCH_VAR")
    assert replaced.returncode == 0 and replaced.stdout.startswith("Replaced provider 'work': anthropic, model m2")
    assert json.loads(keys.read_text()) == {}  # the old key would otherwise win over the variable


def test_remove_asks_nothing_without_a_terminal_and_refuses_an_unknown_name(home):
    config, keys = folders(home)
    assert tabwarden(home, "add", "openai", "work", "m", stdin=KEY).returncode == 0
    unknown = tabwarden(home, "remove", "wrok")
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == ("tabwarden provider remove: provider_not_found: there is no provider named 'wrok' "
                                      "(providers: work) - at `$.name`")
    gone = tabwarden(home, "remove", "work")
    assert gone.returncode == 0 and gone.stdout.startswith("Removed provider 'work' and its stored API key.")
    assert json.loads(keys.read_text()) == {} and json.loads(config.read_text()) == {}
    assert "No providers in" in tabwarden(home, "list").stdout


def test_with_a_keyring_the_key_goes_there_and_a_key_from_the_file_still_works(home):
    config, keys = folders(home)
    ring = home / "keyring.json"
    # Stored in the file while there was no keyring (null: keyring's backend that keeps nothing).
    assert "the file" in tabwarden(home, "add", "openai", "old", "m", stdin="sk-old",
                                   keyring="keyring.backends.null.Keyring").stdout
    added = tabwarden(home, "add", "openai", "work", "m", stdin=KEY, keyring=OUR_KEYRING)
    assert added.returncode == 0, added.stderr
    assert "Its API key: the OS keyring (a test keyring), service 'tabwarden', entry 'work'." in added.stdout
    assert json.loads(ring.read_text()) == {"tabwarden/work": KEY} and json.loads(keys.read_text()) == {"old": "sk-old"}
    listed = tabwarden(home, "list", "--json", keyring=OUR_KEYRING)
    assert {p["name"]: p["key"] for p in json.loads(listed.stdout)["providers"]} == {
        "old": f"the file {keys} (mode 0600)",
        "work": "the OS keyring (a test keyring), service 'tabwarden', entry 'work'"}
    moved = tabwarden(home, "add", "openai", "old", "m", "--replace", stdin="sk-new", keyring=OUR_KEYRING)
    assert moved.returncode == 0 and "the OS keyring" in moved.stdout
    assert json.loads(keys.read_text()) == {} and json.loads(ring.read_text())["tabwarden/old"] == "sk-new"
    removed = tabwarden(home, "remove", "work", keyring=OUR_KEYRING)
    assert removed.returncode == 0 and "tabwarden/work" not in json.loads(ring.read_text())
    assert KEY not in config.read_text()


def test_a_headless_machine_without_a_secret_service_uses_the_file(home, monkeypatch):
    from host.providers.secrets import FileKeyStore, KeyringKeyStore, default_key_store

    monkeypatch.delenv("TABWARDEN_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    import keyring
    from keyring.backends import fail, null

    previous = keyring.get_keyring()
    try:
        for backend in (fail.Keyring(), null.Keyring()):
            keyring.set_keyring(backend)
            assert isinstance(default_key_store(), FileKeyStore)
        keyring.set_keyring(FileKeyring())
        monkeypatch.setenv("TW_TEST_KEYRING", str(home / "ring.json"))
        home.mkdir(parents=True)
        assert isinstance(default_key_store(), KeyringKeyStore)
    finally:
        keyring.set_keyring(previous)


def test_on_a_terminal_the_key_is_asked_for_without_echo(home):
    from tests.support.pty_session import PtySession

    env = {**os.environ, "TABWARDEN_HOME": str(home), "XDG_RUNTIME_DIR": str(home / "run")}
    env.pop("PYTHON_KEYRING_BACKEND", None)
    session = PtySession([sys.executable, "-m", "host", "provider", "add", "openai", "work", "m"], env, ROOT)
    try:
        session.expect("API key for 'work' (not shown): ")
        session.line(KEY)
        out = session.expect("It is the default provider")
        assert session.wait() == 0
    finally:
        session.close()
    assert KEY not in out
    assert json.loads(folders(home)[1].read_text()) == {"work": KEY}


class LockedKeyring(_OnlyWhereUsed):
    """A keyring that cannot answer, as a locked one or one whose service went away."""

    def get_password(self, service: str, username: str) -> str | None:
        raise RuntimeError("the keyring is locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise RuntimeError("the keyring is locked")

    def delete_password(self, service: str, username: str) -> None:
        raise RuntimeError("the keyring is locked")


def test_a_keyring_that_cannot_answer_leaves_the_key_in_the_file_and_says_so(tmp_path):
    import keyring

    from host.providers.secrets import FileKeyStore, KeyringKeyStore, SecretError, key_location

    previous = keyring.get_keyring()
    LockedKeyring.in_use = True
    keyring.set_keyring(LockedKeyring())
    try:
        store = KeyringKeyStore(keyring, fallback=FileKeyStore(tmp_path / "keys.json"))
        store.set("work", KEY)  # refused by the keyring: kept in the file
        assert store.get("work") == KEY and json.loads((tmp_path / "keys.json").read_text()) == {"work": KEY}
        with pytest.raises(SecretError, match="the keyring is locked"):
            store.get("other")  # no key to fall back on: the keyring's failure is the answer
        assert key_location(store, "work") == f"the file {tmp_path / 'keys.json'} (mode 0600)"
        assert key_location(store, "other").startswith("unknown: the key store cannot be read")
    finally:
        LockedKeyring.in_use = False
        keyring.set_keyring(previous)
