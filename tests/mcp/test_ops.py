"""The settings page's MCP ops against a real engine, a real McpManager and a real MCP server:
mcp.json edited through the host with the file's own validation (refusals name the field's path
and write nothing; other fields and servers are kept; the write is atomic), bearer tokens stored
in the key store and never sent back, and every page told about each change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from host.mcp import control_methods as cm
from host.mcp.manager import McpManager
from host.mcp.service import McpTools
from tests.support.mcp_server import McpTestServer
from tests.support.settings_harness import Settings
from tests.support.waiting import until


@pytest.fixture
async def page(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("TABWARDEN_HOME", str(home))
    s = await Settings(home, services={"mcp": McpTools(McpManager())}).start()
    try:
        yield s
    finally:
        await s.stop()


def mcp_file(page) -> Path:
    return page.config / "mcp.json"


def written(page) -> dict:
    return json.loads(mcp_file(page).read_text())


async def connected(page, server: str, count: int = 1) -> dict:
    """`server` in the `count`-th broadcast state where it has finished connecting (or failed)."""
    def finished() -> dict | None:
        done = [entry for state in page.recorder.of("mcp.state") for entry in state.get("servers", [])
                if entry["id"] == server and entry["state"] in ("connected", "failed")]
        return done[count - 1] if len(done) >= count else None

    return await until(finished, 20, lambda: f"{server} to finish connecting (last state: "
                                             f"{page.recorder.of('mcp.state')[-1:]})", interval=0.025)


async def test_a_server_added_from_the_page_connects_and_lists_its_tools(page, mcp_server):
    empty = await page.op({"type": "mcp.get"})
    assert empty == {"type": "mcp.state", "submissionId": empty["submissionId"]}
    ack = await page.op({"type": "mcp.saveServer", "server": "local", "url": f"  {mcp_server.url} ", "new": True})
    assert ack["type"] == "command.ack"
    assert written(page) == {"servers": {"local": {"url": mcp_server.url, "enabled": True}}}
    assert oct(mcp_file(page).stat().st_mode & 0o777) == "0o600"
    first = page.recorder.of("mcp.state")[0]["servers"][0]
    assert first["state"] == "idle" and first["origin"] == mcp_server.origin and first["token"] == "none"
    entry = await connected(page, "local")
    assert entry["state"] == "connected" and "lastError" not in entry
    assert [t["name"] for t in entry["tools"]] == [f"mcp__local__{n}" for n in ("add", "echo", "boom", "slow", "lookup")]
    assert {"name": "mcp__local__lookup", "tool": "lookup", "label": "Look up"} in entry["tools"]
    assert entry["skipped"][0]["tool"] == "dotted.name"
    # The same id again from the add form is refused, not replaced.
    taken = await page.op({"type": "mcp.saveServer", "server": "local", "url": "https://elsewhere.example/mcp",
                           "new": True})
    assert taken["code"] == "mcp_server_exists" and "`$.server`" in taken["message"]
    assert written(page)["servers"]["local"]["url"] == mcp_server.url
    # mcp.refresh answers once connected afresh.
    refreshed = await page.op({"type": "mcp.refresh", "server": "local"})
    assert refreshed["type"] == "mcp.state" and refreshed["servers"][0]["state"] == "connected"
    unknown = await page.op({"type": "mcp.refresh", "server": "nope"})
    assert unknown["code"] == "mcp_server_not_found"


@pytest.mark.parametrize("fields, path", [
    ({"url": "gopher://x.example/mcp"}, "$.servers.new1.url"),
    ({"url": "https://user:pw@x.example/mcp"}, "$.servers.new1.url"),
    ({"url": "https://x.example/mcp", "timeoutSeconds": 0}, "$.servers.new1.timeoutSeconds"),
    ({"url": "https://x.example/mcp", "tools": [""]}, "$.servers.new1.tools"),
    ({"url": "https://x.example/mcp", "server": "a__b"}, "$.servers"),
    ({"url": "https://x.example/mcp", "server": "bad id"}, "$.servers"),
])
async def test_invalid_servers_are_refused_with_the_field_path_and_nothing_written(page, fields, path):
    mcp_file(page).parent.mkdir(parents=True, exist_ok=True)
    before = '{"servers": {"keep": {"url": "https://keep.example/mcp", "headers": {"X-Team": "a"}}}}'
    mcp_file(page).write_text(before)
    answer = await page.op({"type": "mcp.saveServer", "server": "new1", **fields})
    assert answer["type"] == "command.rejected" and answer["code"] == "invalid_mcp_server", answer
    assert f"- at `{path}`" in answer["message"] and "Value error" not in answer["message"]
    assert mcp_file(page).read_text() == before
    assert not page.recorder.of("mcp.state")


async def test_editing_keeps_the_fields_the_page_does_not_show(page):
    mcp_file(page).parent.mkdir(parents=True, exist_ok=True)
    mcp_file(page).write_text(json.dumps({"servers": {
        "gh": {"url": "https://mcp.example.com/mcp", "headers": {"X-Team": "a"}, "bearerTokenEnv": "GH_TOKEN",
               "connectTimeoutSeconds": 5, "tools": ["search"], "timeout_seconds": 9},
        "other": {"url": "http://127.0.0.1:9/mcp", "enabled": False}}}))
    ack = await page.op({"type": "mcp.saveServer", "server": "gh", "url": "https://mcp.example.com/v2/mcp",
                         "enabled": False, "tools": [" search ", "get_issue"], "timeoutSeconds": 30})
    assert ack["type"] == "command.ack"
    assert written(page) == {"servers": {
        "gh": {"url": "https://mcp.example.com/v2/mcp", "headers": {"X-Team": "a"}, "bearerTokenEnv": "GH_TOKEN",
               "connectTimeoutSeconds": 5, "tools": ["search", "get_issue"], "enabled": False, "timeoutSeconds": 30},
        "other": {"url": "http://127.0.0.1:9/mcp", "enabled": False}}}
    [gh, other] = page.recorder.of("mcp.state")[-1]["servers"]
    assert gh["headerNames"] == ["X-Team"] and gh["bearerTokenEnv"] == "GH_TOKEN" and gh["state"] == "disabled"
    assert gh["allowList"] == ["search", "get_issue"] and gh["timeoutSeconds"] == 30
    assert gh["origin"] == "https://mcp.example.com" and other["enabled"] is False
    # null drops the allow-list and the timeout: every tool, the default timeout.
    await page.op({"type": "mcp.saveServer", "server": "gh", "url": "https://mcp.example.com/v2/mcp", "tools": None,
                   "timeoutSeconds": None})
    assert "tools" not in written(page)["servers"]["gh"] and "timeoutSeconds" not in written(page)["servers"]["gh"]
    assert not list(page.config.glob("*.tmp"))


async def test_the_write_is_atomic_and_an_unreadable_file_is_left_alone(page, monkeypatch):
    mcp_file(page).parent.mkdir(parents=True, exist_ok=True)
    mcp_file(page).write_text('{"servers": {"a": ')  # a person is halfway through editing it
    refused = await page.op({"type": "mcp.saveServer", "server": "b", "url": "https://b.example/mcp"})
    assert refused["code"] == "invalid_mcp_config" and "fix it by hand" in refused["message"]
    assert mcp_file(page).read_text() == '{"servers": {"a": '
    state = await page.op({"type": "mcp.get"})
    assert "not valid JSON" in state["configError"]

    before = '{"servers": {"a": {"url": "https://a.example/mcp"}}}'
    mcp_file(page).write_text(before)

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    failed = await page.op({"type": "mcp.saveServer", "server": "b", "url": "https://b.example/mcp"})
    assert failed["type"] == "command.rejected"
    assert mcp_file(page).read_text() == before  # the old file, whole
    assert sorted(p.name for p in page.config.iterdir()) == ["mcp.json"]  # the temp file is gone too


async def test_a_token_is_stored_never_echoed_and_forgotten_with_its_server(page):
    with McpTestServer(token="t0ken-secret") as server:
        await page.op({"type": "mcp.saveServer", "server": "auth", "url": server.url, "new": True})
        failed = await connected(page, "auth")
        assert failed["state"] == "failed" and failed["lastError"]["code"] == "mcp_auth_failed"
        ack = await page.op({"type": "mcp.setToken", "server": "auth", "token": "t0ken-secret"})
        assert ack["type"] == "command.ack"
        entry = await connected(page, "auth", count=2)
        assert entry["state"] == "connected" and entry["token"] == "stored"
        keys = page.engine.tools.services["mcp"].manager.key_store()
        assert keys.get("mcp:auth:bearer") == "t0ken-secret"
        assert server.authorizations[-1] == "Bearer t0ken-secret"
        everything = json.dumps([page.recorder.events, [str(a) for a in page.answers]])
        assert "t0ken-secret" not in everything and "t0ken-secret" not in mcp_file(page).read_text()
        missing = await page.op({"type": "mcp.setToken", "server": "ghost", "token": "x"})
        assert missing["code"] == "mcp_server_not_found" and keys.get("mcp:ghost:bearer") is None
        bad = await page.op({"type": "mcp.setToken", "server": "a__b", "token": "x"})
        assert bad["code"] == "invalid_mcp_server"
        # Cleared from the page.
        await page.op({"type": "mcp.setToken", "server": "auth"})
        assert keys.get("mcp:auth:bearer") is None
        assert page.recorder.of("mcp.state")[-1]["servers"][0]["token"] == "none"
        # Set again, then the server removed: its token goes with it.
        await page.op({"type": "mcp.setToken", "server": "auth", "token": "t0ken-secret"})
        removed = await page.op({"type": "mcp.removeServer", "server": "auth"})
        assert removed["type"] == "command.ack"
        assert written(page) == {"servers": {}} and keys.get("mcp:auth:bearer") is None
        again = await page.op({"type": "mcp.removeServer", "server": "auth"})
        assert again["code"] == "mcp_server_not_found"


async def test_moving_a_server_to_another_origin_forgets_its_token(page):
    with McpTestServer(token="t0ken-secret") as server:
        await page.op({"type": "mcp.saveServer", "server": "auth", "url": server.url, "new": True})
        await page.op({"type": "mcp.setToken", "server": "auth", "token": "t0ken-secret"})
        keys = page.engine.tools.services["mcp"].manager.key_store()
        # Same origin, another path or setting: the token stays.
        kept = await page.op({"type": "mcp.saveServer", "server": "auth", "url": server.url + "?v=2", "enabled": False})
        assert kept["type"] == "command.ack" and keys.get("mcp:auth:bearer") == "t0ken-secret"
        # Another origin: the token was given for the old one and must not follow the server.
        moved = await page.op({"type": "mcp.saveServer", "server": "auth", "url": "https://elsewhere.example/mcp",
                               "enabled": False})
        assert moved["type"] == "command.ack" and keys.get("mcp:auth:bearer") is None
        assert written(page)["servers"]["auth"]["url"] == "https://elsewhere.example/mcp"


async def test_a_server_with_headers_or_an_env_token_is_not_moved_to_another_origin(page):
    await page.op({"type": "mcp.saveServer", "server": "hdr", "url": "https://one.example/mcp", "new": True})
    document = json.loads(mcp_file(page).read_text())
    document["servers"]["hdr"]["headers"] = {"X-Api-Key": "k"}
    mcp_file(page).write_text(json.dumps(document))
    before = mcp_file(page).read_text()
    refused = await page.op({"type": "mcp.saveServer", "server": "hdr", "url": "https://two.example/mcp", "enabled": True})
    assert refused["code"] == "mcp_origin_change_refused" and "headers" in refused["message"], refused
    assert mcp_file(page).read_text() == before
    # The same origin is fine: nothing travels.
    same = await page.op({"type": "mcp.saveServer", "server": "hdr", "url": "https://one.example/v2", "enabled": True})
    assert same["type"] == "command.ack"


async def test_the_repl_setting_a_token_updates_open_pages(page):
    await page.op({"type": "mcp.saveServer", "server": "off", "url": "https://off.example/mcp", "enabled": False})
    manager = page.engine.tools.services["mcp"].manager
    host = SimpleNamespace(services=SimpleNamespace(engine=SimpleNamespace(mcp=manager, engine=page.engine)))
    conn = SimpleNamespace(server=SimpleNamespace(host=host))
    before = len(page.recorder.of("mcp.state"))
    await cm.mcp_set_token({"server": "off", "token": "from-the-repl"}, conn)
    states = page.recorder.of("mcp.state")
    assert len(states) == before + 1 and states[-1]["servers"][0]["token"] == "stored"
    assert "from-the-repl" not in json.dumps(states)


async def test_questions_and_model_answers_are_switched_on_and_off_from_the_page(page):
    mcp_file(page).parent.mkdir(parents=True, exist_ok=True)
    mcp_file(page).write_text(json.dumps({"servers": {"gh": {"url": "https://mcp.example.com/mcp"}}}))
    ack = await page.op({"type": "mcp.saveServer", "server": "gh", "url": "https://mcp.example.com/mcp",
                         "elicitation": True, "sampling": True})
    assert ack["type"] == "command.ack"
    assert written(page)["servers"]["gh"] == {"url": "https://mcp.example.com/mcp", "enabled": True,
                                              "elicitation": True, "sampling": True}
    entry = page.recorder.of("mcp.state")[-1]["servers"][0]
    assert entry["elicitation"] is True and entry["sampling"] is True
    # Off again: the keys go (off is the default), the rest stays.
    await page.op({"type": "mcp.saveServer", "server": "gh", "url": "https://mcp.example.com/mcp"})
    assert written(page)["servers"]["gh"] == {"url": "https://mcp.example.com/mcp", "enabled": True}
    assert "elicitation" not in page.recorder.of("mcp.state")[-1]["servers"][0]
