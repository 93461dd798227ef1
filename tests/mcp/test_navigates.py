"""An MCP tool that loads an address in a browser the server drives (mcp.json `navigates`) is
judged as a navigation to that address through the one authorisation path, against the real
test server and the real gatekeeper: the blocked list, `navigate` rules and the scope lock refuse
it before the server sees it; an address the gatekeeper cannot read is refused too."""

from __future__ import annotations

import json

import pytest

from host.calls.authorize import Authorizer, Context, Denied, Ran
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from host.mcp.config import DEFAULT_NAVIGATES, parse_mcp_config
from host.mcp.service import McpTools
from host.store.db import Store
from tests.mcp.test_definitions import Answers
from tests.support.engine_harness import FakeExecutor

BLOCKED = "https://blocked.example"


@pytest.fixture
def gatekeeper(tmp_path, mcp_server):
    policy = tmp_path / "user.json"
    policy.write_text(json.dumps({"version": 1, "sensitive_origins": [BLOCKED], "rules": [
        {"tool": "mcp__local__*", "origin": "*", "verdict": "allow"},
        {"tool": "navigate", "origin": "https://no-nav.example", "verdict": "deny"}]}), encoding="utf-8")
    gk = Gatekeeper(Store(tmp_path / "state.db"), user_policy=policy, managed_policy=tmp_path / "none-managed.json")
    gk.bind_browser_session("browser-1")
    return gk


@pytest.fixture
async def lookup_navigates(settings, manager, mcp_server):
    """`lookup(q)` declared as a tool that loads the address `q`."""
    settings.write({"local": {"url": mcp_server.url, "navigates": {"lookup": "q"}}})
    router = Router({"browser": FakeExecutor(), "mcp": McpTools(manager)})
    await router.refresh("t1")
    return router


async def judged(router, gatekeeper, q: str):
    decoded = router.decode("t1", "mcp__local__lookup", {"q": q})
    return await Authorizer(router, gatekeeper).process(decoded, Context("t1", policy="auto"), Answers(gatekeeper))


@pytest.mark.parametrize("q, code", [
    (f"{BLOCKED}/account", "sensitive_origin"),
    ("https://no-nav.example/", "rule_deny"),
    ("javascript:alert(1)", "script_scheme"),
    ("blocked.example/account", "sensitive_origin"),  # a browser reads a bare host as https
    ("https://", "invalid_destination")])
async def test_a_refused_address_never_reaches_the_server(lookup_navigates, gatekeeper, mcp_server, q, code):
    ending = await judged(lookup_navigates, gatekeeper, q)
    assert isinstance(ending, Denied), ending
    assert ending.judgement.decision.code == code
    assert not any(e == f"lookup:{q}" for e in mcp_server.events)


async def test_the_scope_lock_holds_for_the_servers_browser(lookup_navigates, gatekeeper, mcp_server):
    # The lock covers the server itself (its calls are judged at its origin) and one shop.
    gatekeeper.set_scope_lock("t1", ["https://shop.example", mcp_server.origin])
    ending = await judged(lookup_navigates, gatekeeper, "https://elsewhere.example/")
    assert isinstance(ending, Denied) and ending.judgement.decision.code == "scope_lock"
    ending = await judged(lookup_navigates, gatekeeper, "https://shop.example/cart")
    assert isinstance(ending, Ran) and ending.result.text == "found https://shop.example/cart"


async def test_an_allowed_address_runs_and_other_tools_are_judged_as_before(lookup_navigates, gatekeeper, mcp_server):
    ending = await judged(lookup_navigates, gatekeeper, "https://fine.example/")
    assert isinstance(ending, Ran) and ending.result.ok and "lookup:https://fine.example/" in mcp_server.events


async def test_without_the_setting_the_argument_is_not_an_address(settings, manager, gatekeeper, mcp_server):
    settings.write({"local": {"url": mcp_server.url}})
    router = Router({"browser": FakeExecutor(), "mcp": McpTools(manager)})
    await router.refresh("t1")
    ending = await judged(router, gatekeeper, f"{BLOCKED}/account")
    assert isinstance(ending, Ran) and ending.result.ok


def test_playwright_mcp_navigation_is_known_by_default_and_can_be_turned_off():
    servers = parse_mcp_config({"servers": {
        "pw": {"url": "http://127.0.0.1:8931/mcp"},
        "off": {"url": "http://127.0.0.1:8932/mcp", "navigates": {}},
        "own": {"url": "http://127.0.0.1:8933/mcp", "navigates": {"open_page": "href"}}}}).servers
    assert DEFAULT_NAVIGATES == {"browser_navigate": "url", "browser_tabs": "url"}
    assert servers["pw"].url_argument("browser_navigate") == "url"
    assert servers["off"].url_argument("browser_navigate") is None
    assert servers["own"].url_argument("open_page") == "href" and servers["own"].url_argument("browser_navigate") is None


def test_a_malformed_navigates_setting_is_refused_with_its_path():
    from host.config_files import ConfigFileError

    with pytest.raises(ConfigFileError) as raised:
        parse_mcp_config({"servers": {"pw": {"url": "http://127.0.0.1:8931/mcp", "navigates": {"browser_navigate": ""}}}})
    assert "navigates" in str(raised.value)
