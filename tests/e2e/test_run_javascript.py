"""run_javascript in a real browser: denied until the user allows it for the site, then the
script runs in the page's main world with its value shown as JSON, dialogs intercepted, and the
page's own refusal (Content Security Policy), exceptions, syntax errors and timeouts reported
as results the model can act on."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver
from tests.support.cdp import debugging_port, evaluate_in_worker

pytestmark = pytest.mark.browser


site, driver = module_fixtures(l1_site, new_driver, "run-js")


@pytest.fixture
async def allowed(driver):
    """An allow rule for the fixture site, as a user would add it; removed afterwards."""
    parts = urlsplit(driver.site.url("script.html"))
    rule = await driver.control.call("gatekeeper.add_rule", tool="run_javascript",
                                     origin=f"{parts.scheme}://{parts.netloc}", verdict="allow")
    yield driver
    await driver.control.call("gatekeeper.remove_rule", id=rule["id"])


COUNT = "document.getElementById('count').textContent"


async def test_denied_by_default_and_nothing_runs(driver):
    await driver.open("script.html")
    result = await driver.call("run_javascript", code="document.getElementById('count').textContent = '99'")
    assert not result["ok"] and result["error"]["code"] == "denied"
    assert result["error"]["details"]["reasonCode"] == "rule_deny"
    assert await driver.evaluate("script.html", COUNT) == "0"


async def test_an_allowed_script_runs_in_the_main_world_and_its_value_is_shown(allowed):
    driver = allowed
    await driver.open("script.html")
    result = await driver.ok("run_javascript", code="""
        document.querySelector('button').click();
        const me = { data: window.pageData, heading: document.getElementById('heading'), big: 2n ** 70n };
        me.self = me;
        await new Promise((done) => setTimeout(done, 50));
        return me;""")
    # The page's own globals are visible (main world), and the click took effect.
    assert await driver.evaluate("script.html", COUNT) == "1"
    assert result["details"]["type"] == "object" and result["details"]["truncated"] is False
    for shown in ('"owner": "fixture"', '"<h1#heading.big.title>"', '"1180591620717411303424n"', '"self": "[circular]"'):
        assert shown in result["text"], result["text"]
    assert "read_page again" in result["text"]


async def test_a_long_value_is_cut_and_says_so(allowed):
    await allowed.open("script.html")
    result = await allowed.ok("run_javascript", code="return 'x'.repeat(50000)")
    assert result["details"] == {**result["details"], "type": "string", "truncated": True, "length": 50000}
    assert "[result cut at 20000 of 50000 characters]" in result["text"]


async def test_dialogs_opened_by_the_script_are_intercepted(allowed):
    await allowed.open("script.html")
    result = await allowed.ok("run_javascript", code="return confirm('Really?')")
    assert "false" in result["text"] and 'confirm("Really?"): auto-cancelled' in result["text"]
    assert result["details"]["dialogs"] == [{"kind": "confirm", "message": "Really?", "answer": False}]
    assert await allowed.evaluate("script.html", "window.confirm.toString().includes('native code')")


@pytest.mark.parametrize("code,error,words", [
    ("throw new TypeError('nope')", "script_exception", "TypeError: nope"),
    ("return (", "script_syntax_error", "SyntaxError"),
    ("await new Promise(() => {})", "timeout", "did not finish within 300 ms"),
])
async def test_failures_of_the_script_itself(allowed, code, error, words):
    await allowed.open("script.html")
    result = await allowed.call("run_javascript", code=code, timeoutMs=300)
    assert not result["ok"] and result["error"]["code"] == error, result
    assert words in result["error"]["message"]


async def test_a_content_security_policy_refusal_is_reported(allowed):
    await allowed.open("script-csp.html")
    result = await allowed.call("run_javascript", code="document.getElementById('out').textContent = 'changed'")
    assert not result["ok"] and result["error"]["code"] == "csp_blocked", result
    assert "Content Security Policy" in result["error"]["message"]
    assert result["error"]["details"]["effectMayHaveOccurred"] is False
    assert await allowed.evaluate("script-csp.html", "document.getElementById('out').textContent") == "untouched"


async def test_bad_params_are_refused_before_anything_is_sent(allowed):
    await allowed.open("script.html")
    for params, where in (({"code": ""}, "$.code"), ({"code": "1", "timeoutMs": 60_000}, "$.timeoutMs"),
                          ({"code": "1", "world": "isolated"}, "world")):
        result = await allowed.call("run_javascript", **params)
        assert not result["ok"] and result["error"]["code"] == "invalid_params" and where in result["error"]["message"]


async def test_a_script_that_never_yields_is_reported_and_the_page_recovers(allowed):
    await allowed.open("script.html")
    # A synchronous loop: the page's own timers cannot stop it; the worker stops waiting.
    result = await allowed.call("run_javascript", code="const end = Date.now() + 5000; while (Date.now() < end) {}",
                                timeoutMs=300)
    assert not result["ok"] and result["error"]["code"] == "timeout", result
    assert result["error"]["details"]["kind"] == "stuck" and result["error"]["details"]["effectMayHaveOccurred"] is True
    assert "may still be running" in result["error"]["message"]
    # Once the loop ends, the page answers again and the next script runs normally.
    for _ in range(50):
        again = await allowed.call("run_javascript", code="return document.title")
        if again["ok"]:
            break
    assert again["ok"] and "Script target" in again["text"], again


async def test_a_value_too_big_to_render_is_named_not_walked(allowed):
    await allowed.open("script.html")
    result = await allowed.ok("run_javascript", code="return Array.from({length: 100000}, (_, i) => ({i}))")
    assert "cannot be shown whole" in result["text"] and "return a smaller value" in result["text"]


async def test_the_script_runs_only_on_the_origin_that_was_judged(allowed):
    tab = await allowed.open("script.html")
    port = debugging_port(allowed.site.run.profile)
    answer = await evaluate_in_worker(
        port, f"tabwardenPageScript.run({tab}, \"document.getElementById('count').textContent = '9'\", 1000, "
        "'https://elsewhere.example')")
    assert answer["ok"] is False and answer["kind"] == "target_changed", answer
    assert await allowed.evaluate("script.html", COUNT) == "0"
