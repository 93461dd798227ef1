"""The MCP control methods (what `tw.mcp()` shows) against a real server, and the REPL view."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from host.control.server import ControlError
from host.mcp import control_methods as cm
from host.repl.mcp_view import servers as render
from host.repl.style import PLAIN
from tests.support.mcp_server import McpTestServer, free_port


def conn_for(manager):
    host = SimpleNamespace(services=SimpleNamespace(engine=SimpleNamespace(mcp=manager)))
    return SimpleNamespace(server=SimpleNamespace(host=host))


async def test_servers_and_tools_as_the_repl_sees_them(settings, manager, mcp_server):
    settings.write({"local": {"url": mcp_server.url}, "gone": {"url": f"http://127.0.0.1:{free_port()}/mcp"},
                    "off": {"url": mcp_server.url, "enabled": False}})
    conn = conn_for(manager)
    tools = await cm.mcp_tools({}, conn)
    status = await cm.mcp_servers({}, conn)
    states = {s["id"]: (s["state"], s["toolCount"]) for s in status["servers"]}
    assert states == {"local": ("connected", 5), "gone": ("failed", 0), "off": ("disabled", 0)}
    local = next(t for t in tools if t["server"] == "local")
    assert {"name": "mcp__local__lookup", "tool": "lookup", "label": "Look up"}.items() <= local["tools"][4].items()
    text = render({"status": status, "tools": tools}, PLAIN)
    assert "mcp__local__add" in text and "Look up" in text and "skipped dotted.name" in text
    assert "mcp_unreachable" in text and "disabled" in text
    only = await cm.mcp_tools({"server": "local"}, conn)
    assert [t["server"] for t in only] == ["local"]
    with pytest.raises(ControlError):
        await cm.mcp_tools({"server": "nope"}, conn)


async def test_set_token_stores_it_in_the_key_store_and_reconnects(settings, manager, key_store):
    with McpTestServer(token="t0ken") as server:
        settings.write({"auth": {"url": server.url}})
        conn = conn_for(manager)
        [before] = await cm.mcp_tools({}, conn)
        assert before["state"] == "failed" and before["lastError"]["code"] == "mcp_auth_failed"
        answer = await cm.mcp_set_token({"server": "auth", "token": "t0ken"}, conn)
        assert answer["stored"] is True and key_store.get("mcp:auth:bearer") == "t0ken"
        [after] = await cm.mcp_tools({}, conn)
        assert after["state"] == "connected" and after["lastError"] is None
        assert "t0ken" not in settings.path.read_text()
        await cm.mcp_set_token({"server": "auth", "token": None}, conn)
        assert key_store.get("mcp:auth:bearer") is None
        with pytest.raises(ControlError):
            await cm.mcp_set_token({"server": "a__b", "token": "x"}, conn)


async def test_an_invalid_file_is_shown(settings, manager):
    settings.write({"x": {"url": "gopher://x"}})
    status = await cm.mcp_servers({}, conn_for(manager))
    assert "$.servers.x.url" in status["configError"]
    assert "mcp.json is invalid, MCP is off" in render({"status": status, "tools": []}, PLAIN)
