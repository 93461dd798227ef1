"""Where a click or a form really goes, in a real browser: the snapshot shows an element's
destination when it leaves the page's origin, and a write on such an element is judged there too.
With the other origin (B) blocked, or outside the thread's scope lock, links, form posts and
`formaction` buttons towards B are refused before anything is sent, nothing reaches B, the
result names the code and the audit names B's origin."""

from __future__ import annotations

import pytest

from tests.support.browser_tools import l1_site, module_fixtures, new_driver, ref_of

pytestmark = pytest.mark.browser

site, driver = module_fixtures(l1_site, new_driver, "destinations")


def other_origin(site) -> str:
    return site.other.url("")[:-1]


async def open_leave(driver) -> str:
    await driver.open("leave.html", to="{OTHER}/")
    return (await driver.read())["text"]


@pytest.fixture(params=["blocked", "scope_lock"])
async def fenced(request, site, driver):
    """B made unreachable for this thread: on the blocked list, or outside its scope lock."""
    b = other_origin(site)
    if request.param == "blocked":
        await driver.control.call("gatekeeper.add_origin", pattern=b, list="blocked")
    else:
        await driver.control.call("gatekeeper.set_scope_lock", thread_id=driver.thread_id,
                                  patterns=[site.main.url("")[:-1]])
    yield request.param
    if request.param == "blocked":
        await driver.control.call("gatekeeper.remove_origin", pattern=b, list="blocked")
    else:
        await driver.control.call("gatekeeper.set_scope_lock", thread_id=driver.thread_id, patterns=None)


async def test_the_snapshot_shows_where_elements_lead_when_they_leave(site, driver):
    page = await open_leave(driver)
    b = other_origin(site)
    line = lambda part: next(line for line in page.split("\n") if part in line)  # noqa: E731
    assert f"[to {b}/l1/result.html?from=link]" in line("Pay at partner")
    assert f"[posts to {b}/l1/collect]" in line("Send order")
    assert f"[posts to {b}/l1/collect]" in line("Card holder")
    assert f"[posts to {b}/l1/collect]" in line("Save at partner")
    assert "to " not in line("Stay here").split("]")[-2] and "posts to" not in line("Save locally")
    # Addresses that only begin like this page's origin are shown as leaving it.
    here = site.main.url("")[:-1]
    assert f"[to http://{here[len('http://'):]}@{b[len('http://'):]}/l1/result.html]" in line("Sign in as this site")
    assert f"[to {here}1/l1/result.html]" in line("Next door")
    # A plain button in that form neither submits it nor carries a value.
    assert "posts to" not in line("Check card")


async def refused(driver, site, call: dict, code: str) -> None:
    before = list(site.other.requests)
    result = await driver.call(**call)
    assert not result["ok"] and result["error"]["code"] == "denied", result
    details = result["error"]["details"]
    assert details["reasonCode"] == code and details["targetOrigin"] == other_origin(site), details
    assert site.other.requests == before  # nothing reached B
    rows = await driver.control.call("gatekeeper.audit", thread_id=driver.thread_id, last=5)
    assert any(row["target_origin"] == other_origin(site) and row["verdict"] == "deny" for row in rows), rows


async def test_a_link_to_b_is_refused_before_the_click(site, driver, fenced):
    page = await open_leave(driver)
    code = "sensitive_origin" if fenced == "blocked" else "scope_lock"
    await refused(driver, site, {"tool": "click", "element": "Pay at partner", "ref": ref_of(page, "Pay at partner")},
                  code)
    assert "leave.html" in await driver.evaluate("leave.html", "location.href")


async def test_typing_into_a_form_that_posts_to_b_is_refused(site, driver, fenced):
    page = await open_leave(driver)
    code = "sensitive_origin" if fenced == "blocked" else "scope_lock"
    await refused(driver, site, {"tool": "type", "element": "Card holder", "ref": ref_of(page, "Card holder"),
                                 "text": "Grace Hopper", "submit": True}, code)
    assert await driver.evaluate("leave.html", "document.getElementById('holder').value") == ""
    await refused(driver, site, {"tool": "click", "element": "Send order", "ref": ref_of(page, "Send order")}, code)


async def test_a_formaction_towards_b_is_refused_and_a_local_submit_still_works(site, driver, fenced):
    page = await open_leave(driver)
    code = "sensitive_origin" if fenced == "blocked" else "scope_lock"
    await refused(driver, site, {"tool": "click", "element": "Save at partner", "ref": ref_of(page, "Save at partner")},
                  code)
    local = await driver.call("click", element="Save locally", ref=ref_of(page, "Save locally"))
    assert local["ok"], local


async def test_with_b_allowed_the_link_works(site, driver):
    page = await open_leave(driver)
    result = await driver.call("click", element="Pay at partner", ref=ref_of(page, "Pay at partner"))
    assert result["ok"], result
    assert any("from=link" in line for line in site.other.requests)


async def test_an_element_re_pointed_after_the_read_is_not_acted_on(site, driver):
    page = await open_leave(driver)
    b = other_origin(site)
    # The page sends the same-origin link and the local form to B once the snapshot is taken.
    await driver.evaluate("leave.html", f"document.getElementById('home').href = {b + '/l1/result.html?from=swap'!r}")
    await driver.evaluate("leave.html", f"document.getElementById('local').action = {b + '/l1/collect'!r}")
    before = list(site.other.requests)
    for name, extra in (("Stay here", {}), ("Note", {"text": "hello", "submit": True}),
                        ("Save locally", {})):
        tool = "type" if "text" in extra else "click"
        result = await driver.call(tool, element=name, ref=ref_of(page, name), **extra)
        assert not result["ok"] and result["error"]["code"] == "target_changed", result
        assert result["error"]["details"]["dispatched"] is False
        assert b in result["error"]["message"]
    assert site.other.requests == before
    assert "leave.html" in await driver.evaluate("leave.html", "location.href")
    assert await driver.evaluate("leave.html", "document.getElementById('note').value") == ""
