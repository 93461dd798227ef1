"""`@playwright/mcp` from npm, a real server driving its own headless Chromium: its
`browser_navigate` is judged at the address it loads, not only at the server's origin. A blocked
site is refused before the server sees the call (the site gets no request); an allowed one
loads. Skipped, with the reason, when npx cannot fetch or start it."""

from __future__ import annotations

import json

import pytest

from host.calls.authorize import Authorizer, Context, Denied, Ran
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from host.mcp.service import McpTools
from host.store.db import Store
from tests.mcp.test_definitions import Answers
from tests.support.engine_harness import FakeExecutor
from tests.support.pages import PageServer
from tests.support.everything_server import running_from_npm
from tests.support.playwright_mcp import PlaywrightMcpServer

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def playwright_mcp():
    yield from running_from_npm(PlaywrightMcpServer(), "Playwright MCP")


@pytest.fixture(scope="module")
def sites():
    with PageServer() as allowed, PageServer(host="127.0.0.2") as blocked:
        yield allowed, blocked


@pytest.fixture
async def router(settings, manager, playwright_mcp):
    settings.write({"pw": {"url": playwright_mcp.url, "timeoutSeconds": 60}})
    routed = Router({"browser": FakeExecutor(), "mcp": McpTools(manager)})
    await routed.refresh("t1")
    return routed


@pytest.fixture
def gatekeeper(tmp_path, sites, playwright_mcp):
    _, blocked = sites
    policy = tmp_path / "user.json"
    policy.write_text(json.dumps({"version": 1, "sensitive_origins": [f"http://127.0.0.2:{blocked.port}"],
                                  "rules": [{"tool": "mcp__pw__*", "origin": "*", "verdict": "allow"}]}),
                      encoding="utf-8")
    gk = Gatekeeper(Store(tmp_path / "state.db"), user_policy=policy, managed_policy=tmp_path / "none-managed.json")
    gk.bind_browser_session("browser-1")
    return gk


async def navigate(router, gatekeeper, url: str):
    decoded = router.decode("t1", "mcp__pw__browser_navigate", {"url": url})
    return await Authorizer(router, gatekeeper).process(decoded, Context("t1", policy="auto"), Answers(gatekeeper))


async def test_its_navigation_tool_is_offered(router):
    assert "mcp__pw__browser_navigate" in router.offered_names()


async def test_a_blocked_site_is_refused_before_the_server_sees_it(router, gatekeeper, sites):
    allowed, blocked = sites
    ending = await navigate(router, gatekeeper, blocked.url("hello.html"))
    assert isinstance(ending, Denied), ending
    assert ending.judgement.decision.code == "sensitive_origin"
    assert "127.0.0.2" in ending.judgement.reason
    assert blocked.requests == [], "the server's browser never went there"


async def test_an_allowed_site_loads_in_the_servers_browser(router, gatekeeper, sites):
    allowed, blocked = sites
    ending = await navigate(router, gatekeeper, allowed.url("hello.html"))
    assert isinstance(ending, Ran) and ending.result.ok, ending
    assert "GET /hello.html" in allowed.requests
    assert allowed.url("hello.html") in ending.result.text and "Hello fixture" in ending.result.text


async def test_a_parameter_with_a_default_stays_optional(router, gatekeeper, sites):
    # Its screenshot tool lists `scale` as required and gives it a default: called without it,
    # the call goes through (the server fills it in), and the model is not told it must pass it.
    allowed, _ = sites
    assert isinstance(await navigate(router, gatekeeper, allowed.url("hello.html")), Ran)
    [offered] = [t for t in router.offered() if t.name == "mcp__pw__browser_take_screenshot"]
    from host.providers.tool_fit import fit_schema

    assert "scale" in offered.input_schema["required"]  # as the server declares it
    fitted, _ = fit_schema(offered.input_schema)
    assert "scale" in fitted["properties"] and "scale" not in fitted.get("required", [])
    decoded = router.decode("t1", "mcp__pw__browser_take_screenshot", {})
    ending = await Authorizer(router, gatekeeper).process(decoded, Context("t1", policy="auto"), Answers(gatekeeper))
    assert isinstance(ending, Ran) and ending.result.ok, ending
