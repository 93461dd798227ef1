"""History moves and restores are resolved to where they lead before the gatekeeper judges them,
through the real service, authorizer and gatekeeper on a fake extension and debugger bridge:
the entry a move reaches (read through the debugger) and the URLs a restore reopens are the
target's destinations; an entry that changed after the check, or a session that is gone, ends
the call before anything acts."""

from __future__ import annotations

from typing import Any

import pytest

from host.browser import history
from host.browser.gateway import BrowserGateway
from host.browser.service import BrowserTools
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.router import Router
from host.cdp.manager import USER_CANCELLED, CdpManager
from host.gatekeeper.service import Gatekeeper
from host.tools.catalog import CATALOG, lookup
from host.tools.params import decode
from host.tools.call import ToolCall
from tests.support.fake_cdp import FakeTransport
from tests.support.fake_extension import FakeExtension

A = "http://site.test"
B = "http://other.test"
TAB = 1


class Browser(FakeExtension):
    """The fake extension with recently closed sessions and restores."""

    def __init__(self) -> None:
        super().__init__()
        self.closed: list[Any] = []
        self.restored: list[str] = []

    def api(self, name: str, *args: Any) -> Any:
        if name == "sessions.getRecentlyClosed":
            return [dict(item) for item in self.closed]
        if name == "sessions.restore":
            self.restored.append(args[0])
            return {"tab": {"id": 50, "url": f"{B}/closed"}}
        return super().api(name, *args)


class History:
    """The tab's history as `Page.getNavigationHistory` reports it; `later` replaces it after the
    given number of reads (a user who navigated meanwhile)."""

    def __init__(self, fake: FakeTransport, browser: Browser, urls: list[str], current: int):
        self.entries = [{"id": 10 + n, "url": url, "title": "", "userTypedURL": url, "transitionType": "link"}
                        for n, url in enumerate(urls)]
        self.current = current
        self.reads = 0
        self.later: tuple[int, list[dict[str, Any]]] | None = None
        self.moves: list[int] = []
        self.browser = browser
        fake.handlers["Page.getNavigationHistory"] = self._read
        fake.handlers["Page.navigateToHistoryEntry"] = self._move

    def _read(self, params: dict[str, Any], session: str | None) -> Any:
        self.reads += 1
        if self.later is not None and self.reads > self.later[0]:
            self.entries = self.later[1]
        return {"currentIndex": self.current, "entries": self.entries}

    def _move(self, params: dict[str, Any], session: str | None) -> Any:
        self.moves.append(params["entryId"])
        self.browser.tabs[TAB]["url"] = next(e["url"] for e in self.entries if e["id"] == params["entryId"])
        return {}


@pytest.fixture
def browser() -> Browser:
    return Browser()


@pytest.fixture
def fake() -> FakeTransport:
    return FakeTransport()


@pytest.fixture
def gateway(browser, fake, tmp_path, monkeypatch) -> BrowserGateway:
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    gatekeeper = Gatekeeper(None, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    gateway = BrowserGateway(lambda: browser, gatekeeper)
    gateway.cdp = CdpManager(fake)
    return gateway


async def run(gateway: BrowserGateway, tool: str, params: dict[str, Any], *, lock: list[str] | None = None):
    gateway.gatekeeper.set_scope_lock("t", lock)
    authorizer = Authorizer(Router({"browser": BrowserTools(gateway)}), gateway.gatekeeper)
    return await call_directly(authorizer, tool, params, thread_id="t", policy="auto")


async def resolve(gateway: BrowserGateway, tool: str, params: dict[str, Any]) -> ToolCall:
    spec = lookup(tool)
    assert spec is not None
    return await BrowserTools(gateway).resolve(ToolCall(spec, decode(spec, params), "t"))


# ---------------------------------------------------------------- go_back / go_forward


async def test_a_move_is_judged_at_the_tab_and_leads_to_the_entry_it_reaches(gateway, browser, fake):
    History(fake, browser, [f"{B}/start", f"{A}/a", f"{A}/next"], current=1)
    back = await resolve(gateway, "go_back", {"tabId": TAB})
    assert (back.origin, back.tab_id, back.target.url) == (A, TAB, f"{A}/a")
    assert back.target.facts == {"destinations": [{"url": f"{B}/start"}]}
    assert back.target.line == f"back to {B}/start"
    forward = await resolve(gateway, "go_forward", {"tabId": TAB})
    assert forward.target.facts == {"destinations": [{"url": f"{A}/next"}]}
    assert "Page.navigateToHistoryEntry" not in fake.methods()  # resolving only reads
    assert set(fake.methods()) <= {"Page.enable", "Target.setAutoAttach", "Page.getNavigationHistory"}


async def test_going_back_into_another_origin_outside_the_scope_lock_is_denied_unsent(gateway, browser, fake):
    history_ = History(fake, browser, [f"{B}/start", f"{A}/a"], current=1)
    result = await run(gateway, "go_back", {"tabId": TAB}, lock=[A])
    assert not result.ok and result.error.code == "denied"
    assert (result.error.details["reasonCode"], result.error.details["targetOrigin"]) == ("scope_lock", B)
    assert history_.moves == [] and browser.tabs[TAB]["url"] == f"{A}/a"


async def test_an_allowed_move_goes_to_exactly_the_entry_judged(gateway, browser, fake):
    history_ = History(fake, browser, [f"{B}/start", f"{A}/a"], current=1)
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert result.ok, result
    assert history_.moves == [10] and result.details["url"] == f"{B}/start"
    assert "Went back: the tab now shows http://other.test/start" in result.text
    within = History(fake, browser, [f"{A}/a", f"{A}/b"], current=1)
    browser.tabs[TAB]["url"] = f"{A}/b"
    assert (await run(gateway, "go_back", {"tabId": TAB}, lock=[A])).ok  # the same origin stays inside the lock
    assert within.moves == [10]


async def test_no_entry_to_go_to_is_no_history_before_anything_is_sent(gateway, browser, fake):
    history_ = History(fake, browser, [f"{A}/a"], current=0)
    for tool in ("go_back", "go_forward"):
        result = await run(gateway, tool, {"tabId": TAB})
        assert not result.ok and result.error.code == "no_history" and result.error.details["dispatched"] is False
    assert history_.moves == []


async def test_the_blank_start_of_a_tab_is_no_page_to_go_back_to(gateway, browser, fake):
    history_ = History(fake, browser, ["about:blank", f"{A}/a", f"{A}/b"], current=2)
    went = await run(gateway, "go_back", {"tabId": TAB})
    assert went.ok and history_.moves == [11], went
    history_.current = 1
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert not result.ok and result.error.code == "no_history", result
    assert history_.moves == [11]


async def test_an_entry_that_changed_after_the_check_is_target_changed(gateway, browser, fake):
    history_ = History(fake, browser, [f"{A}/start", f"{A}/a"], current=1)
    # The first check sees A's entry; by dispatch the user's navigations put B there.
    history_.later = (1, [{"id": 30, "url": f"{B}/elsewhere"}, {"id": 11, "url": f"{A}/a"}])
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert not result.ok and result.error.code == "target_changed", result
    assert result.error.details["dispatched"] is False and history_.moves == []


async def test_the_move_checks_the_entry_again_in_the_hold_it_moves_in(gateway, browser, fake):
    history_ = History(fake, browser, [f"{A}/start", f"{A}/a"], current=1)
    # Allowed at once, the call is resolved once (read 1) under the hold it runs in; the move
    # reads its entry again there (read 2): another entry with the same URL is not the one judged.
    history_.later = (1, [{"id": 30, "url": f"{A}/start"}, {"id": 11, "url": f"{A}/a"}])
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert not result.ok and result.error.code == "target_changed", result
    assert history_.reads == 2 and history_.moves == []


async def test_a_debugger_the_user_stopped_refuses_the_move(gateway, browser, fake):
    history_ = History(fake, browser, [f"{B}/start", f"{A}/a"], current=1)
    gateway.cdp.state(TAB).user_stopped = USER_CANCELLED
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert not result.ok and result.error.code == "debugger_cancelled"
    assert fake.sent == [] and history_.moves == []


async def test_a_history_the_browser_describes_oddly_is_refused(gateway, browser, fake):
    fake.handlers["Page.getNavigationHistory"] = lambda p, s: {"currentIndex": 3, "entries": []}
    result = await run(gateway, "go_back", {"tabId": TAB})
    assert not result.ok and result.error.code == "unknown" and "Page.navigateToHistoryEntry" not in fake.methods()


# ---------------------------------------------------------------- session_restore


def closed_tab(session_id: str, url: str | None, **more: Any) -> dict[str, Any]:
    tab = {"sessionId": session_id, "title": "closed", **more}
    if url is not None:
        tab["url"] = url
    return tab


async def test_a_restore_is_judged_at_the_closed_tab_and_leads_to_its_url(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{B}/closed")}]
    call = await resolve(gateway, "session_restore", {"sessionId": "7"})
    assert (call.origin, call.tab_id, call.target.url) == (B, None, f"{B}/closed")
    assert call.target.facts == {"destinations": [{"url": f"{B}/closed"}]}
    assert call.target.line == f"reopen {B}/closed"
    assert browser.restored == []


async def test_a_window_leads_to_every_tab_and_is_judged_at_its_active_one(gateway, browser):
    tabs = [closed_tab("1", f"{A}/one"), closed_tab("2", f"{B}/two", active=True), closed_tab("3", None)]
    browser.closed = [{"window": {"sessionId": "9", "tabs": tabs}}]
    call = await resolve(gateway, "session_restore", {"sessionId": "9"})
    assert call.origin == B
    assert call.target.facts == {"destinations": [{"url": f"{A}/one"}, {"url": f"{B}/two"}, {"unresolved": True}]}
    assert call.target.line == f"reopen a window of 3 tab(s): {A}/one, {B}/two, (unknown URL)"
    one = await resolve(gateway, "session_restore", {"sessionId": "1"})  # a tab of that window, on its own
    assert one.target.facts == {"destinations": [{"url": f"{A}/one"}]} and one.origin == A


async def test_restoring_a_closed_tab_outside_the_scope_lock_is_denied_unsent(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{B}/closed")}]
    result = await run(gateway, "session_restore", {"sessionId": "7"}, lock=[A])
    assert not result.ok and result.error.code == "denied"
    assert (result.error.details["reasonCode"], result.error.details["targetOrigin"]) == ("scope_lock", B)
    assert browser.restored == []
    window = [closed_tab("1", f"{A}/one", active=True), closed_tab("2", f"{B}/two")]
    browser.closed = [{"window": {"sessionId": "9", "tabs": window}}]
    result = await run(gateway, "session_restore", {"sessionId": "9"}, lock=[A])
    assert (result.error.details["reasonCode"], result.error.details["targetOrigin"]) == ("scope_lock", B)
    assert browser.restored == []


async def test_a_tab_without_a_url_is_asked_about_never_restored_silently(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", None)}]
    result = await run(gateway, "session_restore", {"sessionId": "7"})
    assert not result.ok and result.error.code == "approval_required"
    assert result.error.details["reasonCode"] == "unknown_destination" and browser.restored == []


async def test_a_session_id_that_does_not_exist_is_not_found_before_anything_runs(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{A}/closed")}]
    result = await run(gateway, "session_restore", {"sessionId": "8"})
    assert not result.ok and result.error.code == "not_found" and result.error.details["dispatched"] is False
    assert browser.restored == []


async def test_a_session_restored_meanwhile_is_not_restored_again(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{A}/closed")}]
    lookups = 0
    plain = browser.api

    def api(name: str, *args: Any) -> Any:
        nonlocal lookups
        if name == "sessions.getRecentlyClosed":
            lookups += 1
            if lookups > 1:
                return []  # the user reopened it between the check and the restore
        return plain(name, *args)

    browser.api = api  # type: ignore[method-assign]
    result = await run(gateway, "session_restore", {"sessionId": "7"})
    assert not result.ok and result.error.code == "not_found" and lookups == 2
    assert browser.restored == []


async def test_a_closed_item_that_reopens_other_pages_now_is_not_restored(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{A}/closed")}]
    plain = browser.api
    lookups = 0

    def api(name: str, *args: Any) -> Any:
        nonlocal lookups
        if name == "sessions.getRecentlyClosed":
            lookups += 1
            if lookups > 1:  # the same id names another page by the time it would be restored
                return [{"tab": closed_tab("7", f"{B}/elsewhere")}]
        return plain(name, *args)

    browser.api = api  # type: ignore[method-assign]
    result = await run(gateway, "session_restore", {"sessionId": "7"})
    assert not result.ok and result.error.code == "target_changed" and lookups == 2, result
    assert result.error.details["dispatched"] is False and browser.restored == []


async def test_an_allowed_restore_runs(gateway, browser):
    browser.closed = [{"tab": closed_tab("7", f"{A}/closed")}]
    result = await run(gateway, "session_restore", {"sessionId": "7"}, lock=[A])
    assert result.ok and browser.restored == ["7"]


def test_every_history_tool_has_a_step():
    assert history.STEPS == {"go_back": -1, "go_forward": 1}
    assert {name for name, spec in CATALOG.items() if spec.target == "history"} == set(history.STEPS)
