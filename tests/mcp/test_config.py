"""mcp.json: what is accepted, what is refused (with the path of each problem), and that an
invalid file turns MCP off whole instead of half-applying it."""

from __future__ import annotations

import pytest

from host.config_files import ConfigFileError
from host.mcp.config import parse_mcp_config


def test_a_server_gets_its_defaults():
    config = parse_mcp_config({"servers": {"gh-1": {"url": "https://MCP.Example.com/v1/mcp"}}})
    server = config.servers["gh-1"]
    assert server.url == "https://mcp.example.com/v1/mcp"
    assert (server.enabled, server.timeout_seconds, server.tools, server.headers) == (True, 60.0, None, {})


def test_camel_case_fields_are_read():
    config = parse_mcp_config({"servers": {"a": {"url": "http://127.0.0.1:1/mcp", "bearerTokenEnv": "A_TOKEN",
                                                 "timeoutSeconds": 5, "connectTimeoutSeconds": 2,
                                                 "enabled": False, "tools": ["x"], "headers": {"X-Team": "t"}}}})
    server = config.servers["a"]
    assert (server.bearer_token_env, server.timeout_seconds, server.connect_timeout_seconds) == ("A_TOKEN", 5, 2)
    assert (server.enabled, server.tools, server.headers) == (False, ("x",), {"X-Team": "t"})


@pytest.mark.parametrize("server_id", ["a__b", "trailing_", "has space", "x" * 33, "", "dot.ted"])
def test_server_ids_that_would_break_tool_names_are_refused(server_id):
    with pytest.raises(ConfigFileError) as err:
        parse_mcp_config({"servers": {server_id: {"url": "https://a.example/mcp"}}})
    assert err.value.problems[0][0] == "$.servers"
    assert repr(server_id) in err.value.problems[0][1]


@pytest.mark.parametrize("url", ["ftp://a.example/mcp", "file:///tmp/x", "javascript:alert(1)", "not a url at all",
                                 "https://user:pw@a.example/mcp"])
def test_only_plain_http_urls_are_accepted(url):
    with pytest.raises(ConfigFileError) as err:
        parse_mcp_config({"servers": {"s": {"url": url}}})
    assert [path for path, _ in err.value.problems] == ["$.servers.s.url"]


def test_every_problem_is_reported_with_its_path():
    with pytest.raises(ConfigFileError) as err:
        parse_mcp_config({"servers": {"s": {"url": "https://a.example/mcp", "timeoutSeconds": 0, "token": "x",
                                            "headers": {"Authorization": "Bearer x"}}}, "extra": 1})
    paths = sorted(path for path, _ in err.value.problems)
    assert paths == ["$.extra", "$.servers.s.headers", "$.servers.s.timeoutSeconds", "$.servers.s.token"]
    assert "key store" in dict(err.value.problems)["$.servers.s.headers"]  # tokens never live in the file


async def test_an_invalid_file_turns_mcp_off_and_says_why(settings, manager, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    await manager.refresh()
    assert [t.name for t in manager.tools()][:1] == ["mcp__local__add"]
    settings.write({"local": {"url": mcp_server.url}, "bad": {"url": "ftp://x"}})  # one bad server spoils the file
    await manager.refresh()
    assert manager.tools() == [] and manager.servers == {}
    status = manager.status()
    assert "$.servers.bad.url" in status["configError"] and status["servers"] == []
    settings.write(raw="{not json")
    await manager.refresh()
    assert "not valid JSON" in manager.status()["configError"]
    settings.write({"local": {"url": mcp_server.url}})  # fixed: it comes back without a restart
    await manager.refresh()
    assert manager.status()["configError"] is None and len(manager.tools()) == 5


async def test_no_file_means_no_servers(settings, manager):
    await manager.refresh()
    assert manager.status() == {"configError": None, "servers": []} and manager.tools() == []
