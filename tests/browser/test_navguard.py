"""The navigation guard against a fake extension, called as the REPL calls tools (the one
authorisation path): a write is sent only once the rules covering its tab are in force, and is
refused unsent when they cannot be; the rules follow scope locks, the end of a turn and the
pop-ups a driven page opens; what the browser blocks is audited and told in the call's result,
or in the next one on that tab when it happened later."""

from __future__ import annotations

import asyncio

import pytest

from protocol.messages import BrowserEvent

from host.browser import navguard
from host.browser.events import handle_event
from host.browser.gateway import BrowserGateway
from host.browser.navguard import observed as observed_module
from host.browser.service import BrowserTools
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from host.store import Store
from tests.support.fake_extension import FakeExtension

A = "http://site.test"
B = "http://elsewhere.test:8080"


class Browser:
    def __init__(self, gateway: BrowserGateway):
        self.gateway = gateway
        self.gatekeeper = gateway.gatekeeper
        self.authorizer = Authorizer(Router({"browser": BrowserTools(gateway)}), gateway.gatekeeper)

    async def call(self, tool, params, *, thread_id="t", policy="auto"):
        return await call_directly(self.authorizer, tool, params, thread_id=thread_id, policy=policy)

    def event(self, name: str, **data) -> None:
        handle_event(self.gateway, BrowserEvent(name=name, data=data))

    async def settle(self) -> None:
        """Let a scheduled install run."""
        for _ in range(5):
            await asyncio.sleep(0.01)


@pytest.fixture
def fake() -> FakeExtension:
    return FakeExtension()


@pytest.fixture
def store(tmp_path):
    made = Store(tmp_path / "db.sqlite3")
    yield made
    made.close()


@pytest.fixture
def browser(fake, store, tmp_path, monkeypatch) -> Browser:
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(observed_module, "POPUP_WAIT_S", 0.02)
    gatekeeper = Gatekeeper(store, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    gatekeeper.set_scope_lock("t", [A])
    return Browser(BrowserGateway(lambda: fake, gatekeeper))


async def ready(browser: Browser) -> None:
    assert (await browser.call("read_page", {"tabId": 1})).ok


def tabs_of(rules) -> set[int]:
    """The tabs the rules hold (not the requests of no tab a locked site's service worker makes)."""
    return {tab for rule in rules if rule.initiator_domains is None for tab in rule.tab_ids or ()}


def outcomes(store: Store) -> list[tuple[str, str, str]]:
    return [(r["tool"], r["tool_outcome"], r["target_origin"])
            for r in store.query("SELECT * FROM audit_log WHERE kind = 'outcome' ORDER BY seq")]


async def test_a_write_is_sent_only_once_the_rules_cover_its_tab(browser, fake):
    await ready(browser)
    assert fake.guard_installs == [], "reads need no guard"
    seen = []

    async def content(call):
        seen.append(tabs_of(fake.guard_installs[-1]) if fake.guard_installs else set())
        return {"resultText": "Clicked"}

    fake.content = content
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    assert seen == [{1}]
    rules = fake.guard_installs[-1]
    assert any(r.tab_ids == [1] and r.action == "block" and r.regex_filter is None and r.request_domains is None
               for r in rules), "the scope lock blocks everything in the tab..."
    assert any(r.tab_ids == [1] and r.action == "allow" and "site" in (r.regex_filter or "") for r in rules), "...but A"
    assert any(r.excluded_tab_ids is not None for r in rules), "and covers the tabs its page may open"
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    assert len(fake.guard_installs) == 1, "nothing is sent per action once the rules are in force"


async def test_when_the_rules_cannot_be_installed_the_write_is_refused_unsent(browser, fake):
    await ready(browser)
    fake.guard_refused = True
    result = await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})
    assert not result.ok and result.error.code == "guard_unavailable", result
    assert result.error.details["dispatched"] is False
    assert [c.tool for c in fake.content_calls] == ["read_page"]
    assert (await browser.call("read_page", {"tabId": 1})).ok, "reads go on"
    fake.guard_refused = False
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok


async def test_a_load_sent_behind_its_hold_never_starts_when_the_hold_is_refused(browser, fake):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok  # the tab is guarded
    installs = len(fake.guard_installs)
    loaded = await browser.call("navigate", {"url": f"{A}/b", "tabId": 1})
    assert loaded.ok, loaded
    assert len(fake.guard_installs) == installs + 1, "the hold went out..."
    sent = [c.api for c in fake.api_calls]
    assert sent[-1] == "tabs.navigate" and fake.api_calls[-1].args[1].get("afterGuard") is True, "...the load behind it"
    await browser.settle()  # the hold is released once the call ended
    fake.guard_refused = True
    refused = await browser.call("navigate", {"url": f"{A}/c", "tabId": 1})
    assert not refused.ok and refused.error.code == "guard_unavailable", refused
    assert refused.error.details["dispatched"] is False
    assert fake.tabs[1]["url"] == f"{A}/b", "the load never started"
    fake.guard_refused = False  # a refusal is not for good: the next call installs again
    assert (await browser.call("navigate", {"url": f"{A}/c", "tabId": 1})).ok
    assert fake.tabs[1]["url"] == f"{A}/c"


async def test_an_unavailable_gatekeeper_is_no_guard_either(browser, fake):
    await ready(browser)
    guard = browser.gateway.guard
    browser.gatekeeper.mark_unavailable(RuntimeError("disk gone"))
    with pytest.raises(Exception) as refused:
        await guard.protect("t", 1)
    assert getattr(refused.value, "code", None) == "guard_unavailable"
    assert not guard.covers("t", 1)


async def test_the_rules_follow_the_scope_lock_and_the_end_of_the_turn(browser, fake):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    browser.gatekeeper.set_scope_lock("t", None)
    await browser.settle()
    assert len(fake.guard_installs) == 2 and not any(r.action == "allow" for r in fake.guard_installs[-1])
    browser.gatekeeper.add_origin_pattern(B, list_name="blocked")
    await browser.settle()
    assert any("elsewhere" in (r.regex_filter or "") for r in fake.guard_installs[-1])
    browser.gateway.end_turn("t")
    await browser.settle()
    assert fake.guard_installs[-1] == [], "a turn that ended drives no tab"


async def test_a_navigation_blocked_during_the_call_fails_it_naming_the_origin(browser, fake, store):
    await ready(browser)

    async def content(call):
        browser.event("tabs.updated", tabId=1, url=f"{B}/x", status="loading")  # the browser's notice, first
        browser.event("navigation.blocked", tabId=1, frameId=0, url=f"{B}/x")
        fake.tabs[1]["url"] = f"{B}/x"
        return {"resultText": "Clicked"}

    fake.content = content
    result = await browser.call("click", {"element": "Go", "ref": "sdoc_1_1", "tabId": 1})
    assert not result.ok and result.error.code == "navigation_blocked", result
    assert result.error.details["blockedOrigin"] == B and result.error.details["blocked"][0]["reasonCode"] == "scope_lock"
    assert B in result.text and "nothing was sent there" in result.text
    assert outcomes(store)[-2:] == [("click", "navigation_blocked", B), ("click", "failed:navigation_blocked", A)]
    # The tab shows the browser's notice now: page tools say so, and the tab is judged where it was.
    again = await browser.call("read_page", {"tabId": 1})
    assert not again.ok and again.error.code == "navigation_blocked" and again.error.details["blockedOrigin"] == B
    closed = await browser.call("tab_close", {"tabId": 1})
    assert closed.ok, closed


async def test_a_block_after_the_result_comes_with_the_next_result(browser, fake, store):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    browser.event("navigation.blocked", tabId=1, frameId=3, url=f"{B}/frame")  # a frame, later
    assert outcomes(store)[-1] == ("click", "navigation_blocked", B)
    following = await browser.call("read_page", {"tabId": 1})
    assert following.ok
    assert following.text.startswith("Since the previous result on tab 1:\n- a frame of tab 1, to")
    assert "navigation_blocked" in following.text
    [note] = following.details["sinceLastCall"]
    assert note["kind"] == "blocked" and note["origin"] == B and note["frameId"] == 3
    assert "Since the previous" not in (await browser.call("read_page", {"tabId": 1})).text, "told once"


async def test_a_navigation_the_page_made_later_comes_with_the_next_result(browser, fake):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    browser.event("tabs.updated", tabId=1, url=f"{A}/next", status="loading")
    following = await browser.call("read_page", {"tabId": 1})
    assert following.text.startswith(f"Since the previous result on tab 1:\n- the page navigated to \"{A}/next\"")
    assert following.details["sinceLastCall"] == [{"kind": "navigated", "url": f"{A}/next", "tabId": 1}]


async def test_another_extensions_block_is_not_the_guards(browser, fake, store):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    browser.event("navigation.blocked", tabId=1, frameId=2, url=f"{A}/ads.html")  # A is reachable
    browser.event("navigation.blocked", tabId=2, frameId=0, url=f"{B}/x")  # a tab nobody drives
    assert [o for o in outcomes(store) if o[1] == "navigation_blocked"] == []
    assert "Since the previous" not in (await browser.call("read_page", {"tabId": 1})).text


async def test_pop_ups_of_a_driven_page_are_guarded_and_the_users_tabs_released(browser, fake):
    await ready(browser)
    assert (await browser.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1})).ok
    [new_tabs] = [r.excluded_tab_ids for r in fake.guard_installs[-1] if r.excluded_tab_ids is not None][:1]
    assert 5 not in new_tabs and 6 not in new_tabs, "tabs the host has not seen are covered"
    browser.event("tabs.created", tabId=5, openerTabId=2)  # the opener the browser names proves nothing
    browser.event("navigation.target", sourceTabId=1, tabId=5, url=f"{B}/popup")
    browser.event("tabs.created", tabId=6, openerTabId=1)  # a tab no page claims: the user's
    await asyncio.sleep(0.05)
    await browser.settle()
    rules = fake.guard_installs[-1]
    assert 5 in tabs_of(rules), "the pop-up is guarded like its opener"
    excluded = next(r.excluded_tab_ids for r in rules if r.excluded_tab_ids is not None)
    assert 6 in excluded and 6 not in tabs_of(rules), "the user's tab is left alone"
    assert browser.gateway.guard.popups_of(1) == [5]


def test_the_package_says_why_it_is_built_this_way():
    # The choice of mechanism is documented where the guard lives.
    assert "declarativeNetRequest" in navguard.__doc__ and "CDP `Fetch`" in navguard.__doc__


def test_a_page_load_whose_frames_were_blocked_still_succeeds_but_a_write_does_not():
    from host.browser.navguard.report import Blocked, blocked_result
    from host.tools.result import ToolResult

    frame = Blocked(tab_id=1, frame_id=4, url=f"{B}/pay", origin=B, code="scope_lock", reason="outside the lock")
    loaded = ToolResult(ok=True, tool="navigate", text="[tabId=1] Navigated to a page.", tab_id=1)
    shown = blocked_result(loaded, [frame], 1, loads_page=True)
    assert shown.ok and shown.text.startswith(loaded.text) and "navigation_blocked" in shown.text
    assert f'a frame of tab 1, to "{B}/pay": blocked' in shown.text and shown.details["blocked"][0]["origin"] == B
    # The page itself was stopped: the load did not do its job.
    whole = Blocked(tab_id=1, frame_id=0, url=f"{B}/x", origin=B, code="scope_lock", reason="outside the lock")
    assert not blocked_result(loaded, [whole], 1, loads_page=True).ok
    # A click whose form posted into a frame was stopped: its effect did not happen.
    clicked = ToolResult(ok=True, tool="click", text="[tabId=1] Clicked.", tab_id=1)
    failed = blocked_result(clicked, [frame], 1)
    assert not failed.ok and failed.error.code == "navigation_blocked" and "What the call itself did" in failed.text
