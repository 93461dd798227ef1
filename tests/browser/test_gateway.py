"""The browser tools against a fake extension, called as the REPL calls them (the one
authorisation path, nobody to ask): every refusal happens before anything reaches the page,
writes are never replayed, and calls on one tab never overlap."""

from __future__ import annotations

import asyncio

import pytest

from host.browser.gateway import BrowserGateway
from host.browser.service import BrowserTools
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from tests.support.fake_extension import FakeExtension, remote
from tests.support.fake_snapshot import snapshot


class Browser:
    """The gateway with the router and authorizer a host puts around it."""

    def __init__(self, gateway: BrowserGateway):
        self.gateway = gateway
        self.gatekeeper, self.refs, self.routes, self.takeover = (gateway.gatekeeper, gateway.refs, gateway.routes,
                                                                  gateway.takeover)
        self.authorizer = Authorizer(Router({"browser": BrowserTools(gateway)}), gateway.gatekeeper)

    async def call(self, tool, params, *, thread_id="default", policy=None):
        return await call_directly(self.authorizer, tool, params, thread_id=thread_id, policy=policy)


@pytest.fixture
def fake() -> FakeExtension:
    return FakeExtension()


@pytest.fixture
def gateway(fake, tmp_path, monkeypatch) -> Browser:
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    gatekeeper = Gatekeeper(None, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    return Browser(BrowserGateway(lambda: fake, gatekeeper))


async def read(gateway, **kw):
    result = await gateway.call("read_page", kw, thread_id="t")
    assert result.ok, result
    return result


async def test_unknown_tool_and_bad_params_are_refused_before_any_request(gateway, fake):
    for tool, params, code in [("teleport", {}, "unknown_tool"), ("read_page", {"maxTokens": -1}, "invalid_params"),
                               ("click", {"ref": "", "element": "x"}, "invalid_params"), ("read_page", "x", "invalid_params"),
                               ("memory_read", {}, "unsupported"), ("run_javascript", {}, "invalid_params")]:
        result = await gateway.call(tool, params, thread_id="t")
        assert not result.ok and result.error.code == code, (tool, result)
        assert result.text.startswith("Error " + code)
    assert fake.content_calls == [] and fake.api_calls == []


async def test_reads_are_allowed_under_the_default_policy_and_prefixed_with_the_tab(gateway, fake):
    result = await read(gateway, tabId=1)
    assert result.text.startswith("[tabId=1] read_page done")
    assert result.details["decision"]["code"] == "read_allowed"
    assert fake.content_calls[0].write is False and fake.content_calls[0].params == {}


async def test_a_write_under_the_default_policy_needs_approval_and_is_not_sent(gateway, fake):
    await read(gateway, tabId=1)
    result = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1}, thread_id="t")
    assert not result.ok and result.error.code == "approval_required"
    assert result.error.details["reasonCode"] == "policy_default"
    assert [c.tool for c in fake.content_calls] == ["read_page"]


async def test_typing_into_a_password_field_asks_even_under_auto(gateway, fake):
    await read(gateway, tabId=1)
    result = await gateway.call("type", {"element": "pw", "ref": "sdoc_1_2", "text": "x", "tabId": 1}, thread_id="t",
                                policy="auto")
    assert not result.ok and result.error.code == "approval_required"
    assert "sensitive_payload" in result.error.details["flags"]
    assert [c.tool for c in fake.content_calls] == ["read_page"]


async def test_destinations_are_judged_before_navigation(gateway, fake):
    result = await gateway.call("tab_open", {"url": "javascript:alert(1)"}, thread_id="t", policy="auto")
    assert not result.ok and result.error.code == "denied" and result.error.details["reasonCode"] == "script_scheme"
    assert not any(c.api == "tabs.create" for c in fake.api_calls)


async def test_no_site_access_is_an_approval_with_the_host_permission_flag(gateway, fake):
    fake.site_access = False
    result = await gateway.call("read_page", {"tabId": 1}, thread_id="t")
    assert not result.ok and result.error.code == "approval_required"
    assert "host_permission" in result.error.details["flags"]
    assert fake.content_calls == []


@pytest.mark.parametrize("ref", ["sother_1_1", "s1_1", "e12", "Save button", "c1a_2_3_4"])
async def test_a_ref_the_host_never_saw_is_stale_without_dispatch(gateway, fake, ref):
    # Whatever its shape (another page's, an older format, made up, a deep ref for an L1 tool).
    await read(gateway, tabId=1)
    result = await gateway.call("click", {"element": "x", "ref": ref, "tabId": 1}, thread_id="t", policy="auto")
    assert not result.ok and result.error.code == "stale_ref" and result.error.retryable
    assert "call read_page again" in result.error.message
    assert [c.tool for c in fake.content_calls] == ["read_page"]


async def test_a_write_is_sent_with_recovery_allowed_and_the_diff_comes_back(gateway, fake):
    await read(gateway, tabId=1)

    async def content(call):
        return {"resultText": "Clicked", "snapshot": snapshot("doc", 2, ("button", "Save"), ("textbox", "Password"),
                                                              ("link", "Next")), "evidence": {"outcome": "uncertain"}}

    fake.content = content
    result = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1}, thread_id="t", policy="auto")
    assert result.ok, result
    sent = fake.content_calls[-1]
    assert sent.write is True and sent.params == {"ref": "sdoc_1_1", "allowRecovery": True,
                                                  "expect": {"role": "button", "name": "Save"}}  # as the host read it
    assert "--- incremental snapshot ---\n# Page Changes (sdoc_2)" in result.text
    assert 'Added/changed:\n- link "Next" [ref=sdoc_2_3]' in result.text
    assert gateway.routes.driving(1) == ["t"]


async def test_a_write_without_reply_is_never_replayed(gateway, fake):
    await read(gateway, tabId=1)

    async def content(call):
        raise remote("no_reply", "message channel closed", phase="settle", details={"channelUnavailable": True})

    fake.content = content
    result = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1}, thread_id="t", policy="auto")
    assert not result.ok and result.error.code == "navigation_uncertain"
    assert result.error.details["effectMayHaveOccurred"] is True and result.error.retryable is False
    assert [c.tool for c in fake.content_calls] == ["read_page", "click"]


async def test_a_write_nothing_received_was_not_sent(gateway, fake):
    await read(gateway, tabId=1)

    async def content(call):
        # The document the write was made ready in was replaced before it went out.
        raise remote("no_reply", "Could not establish connection. Receiving end does not exist.", phase="settle",
                     details={"channelUnavailable": True, "delivered": False, "write": True})

    fake.content = content
    result = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1}, thread_id="t", policy="auto")
    assert not result.ok and result.error.code == "target_changed"
    assert result.error.details["dispatched"] is False and result.error.retryable is True
    assert [c.tool for c in fake.content_calls] == ["read_page", "click"]  # not sent again


async def test_a_write_without_reply_that_navigated_reports_the_new_page(gateway, fake):
    await read(gateway, tabId=1)
    calls = []

    async def content(call):
        calls.append(call.tool)
        if call.tool == "click":
            fake.tabs[1]["url"] = "http://site.test/b"
            raise remote("no_reply", "message channel closed", phase="settle")
        return {"resultText": "# Page Snapshot (snew_1)\nURL: http://site.test/b", "snapshot": snapshot("new", 1, ("link", "Home"))}

    fake.content = content
    result = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1", "tabId": 1}, thread_id="t", policy="auto")
    assert result.ok and "navigated to http://site.test/b" in result.text
    assert result.details["evidence"]["observedEffects"] == ["url_changed"]
    assert calls == ["click", "read_page"]


async def test_a_read_without_reply_is_sent_once_more(gateway, fake):
    attempts = []

    async def content(call):
        attempts.append(call.tool)
        if len(attempts) == 1:
            raise remote("no_reply", "Could not establish connection")
        return {"resultText": "found"}

    fake.content = content
    result = await gateway.call("find_in_page", {"query": "x", "tabId": 1}, thread_id="t")
    assert result.ok and attempts == ["find_in_page", "find_in_page"]


async def test_the_default_tab_is_used_and_non_web_tabs_are_refused(gateway, fake):
    result = await gateway.call("read_page", {}, thread_id="fresh")
    assert result.ok and result.tab_id == 1
    gateway.routes.bind("bound", 2)
    result = await gateway.call("read_page", {}, thread_id="bound")
    assert not result.ok and result.error.code == "not_web_page"
    gateway.routes.bind("gone", 77)
    result = await gateway.call("read_page", {}, thread_id="gone")
    assert not result.ok and result.error.code == "tab_closed"
    gateway.routes.bind("none", None)
    result = await gateway.call("read_page", {}, thread_id="none")
    assert not result.ok and result.error.code == "no_target"


async def test_calls_on_one_tab_never_overlap_across_threads(gateway, fake):
    running = 0
    overlaps = 0

    async def content(call):
        nonlocal running, overlaps
        running += 1
        overlaps += running > 1
        await asyncio.sleep(0.02)
        running -= 1
        return {"resultText": "ok"}

    fake.content = content
    results = await asyncio.gather(*(gateway.call("get_selection", {"tabId": 1}, thread_id=f"t{i}") for i in range(5)))
    assert all(r.ok for r in results) and overlaps == 0 and len(fake.content_calls) == 5


async def test_a_call_cancelled_while_waiting_for_its_tab_never_reaches_the_page(gateway, fake):
    release = asyncio.Event()

    async def content(call):
        if call.tool == "wait_for":
            await release.wait()
        return {"resultText": "ok"}

    fake.content = content
    first = asyncio.create_task(gateway.call("wait_for", {"timeMs": 100, "tabId": 1}, thread_id="a"))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(gateway.call("get_selection", {"tabId": 1}, thread_id="b"))
    await asyncio.sleep(0.01)
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    release.set()
    assert (await first).ok
    assert [c.tool for c in fake.content_calls] == ["wait_for"]


async def test_a_paused_thread_cannot_call_until_resumed(gateway, fake):
    gateway.routes.touch("t", 1, wrote=True)
    assert gateway.takeover.manual_input(1, "mousedown", gateway.routes.driving(1)) == ["t"]
    result = await gateway.call("read_page", {"tabId": 1}, thread_id="t")
    assert not result.ok and result.error.code == "paused"
    assert (await gateway.call("read_page", {"tabId": 1}, thread_id="other")).ok
    assert gateway.takeover.resume("t")
    assert (await gateway.call("read_page", {"tabId": 1}, thread_id="t")).ok


async def test_extract_is_served_in_windows(gateway, fake):
    body = "x" * 20_000

    async def content(call):
        assert "fromChar" not in call.params
        return {"resultText": body}

    fake.content = content
    first = await gateway.call("extract", {"tabId": 1}, thread_id="t")
    assert first.ok and "continue with fromChar=8000" in first.text and first.details["totalChars"] == 20_000
    last = await gateway.call("extract", {"tabId": 1, "fromChar": 16_000}, thread_id="t")
    assert last.ok and last.text.endswith("[end of text reached]")
    past = await gateway.call("extract", {"tabId": 1, "fromChar": 30_000}, thread_id="t")
    assert not past.ok and past.error.code == "invalid_params"


async def test_a_broken_gatekeeper_fails_closed(gateway, fake, monkeypatch):
    from host.gatekeeper.errors import GatekeeperUnavailable

    def broken(request):
        raise GatekeeperUnavailable("disk gone")

    monkeypatch.setattr(gateway.gatekeeper, "check", broken)
    result = await gateway.call("read_page", {"tabId": 1}, thread_id="t")
    assert not result.ok and result.error.code == "gatekeeper_unavailable"
    assert fake.content_calls == []


async def test_no_browser_means_not_connected(fake, gateway):
    fake.is_open = False
    result = await gateway.call("tabs_list", {}, thread_id="t")
    assert not result.ok and result.error.code == "not_connected"


async def test_a_malformed_page_answer_is_refused_at_the_boundary(gateway, fake):
    for answer in ({"resultText": 5}, {"text": "no resultText"}, {"resultText": "ok", "surprise": True},
                   {"resultText": "ok", "snapshot": {"id": "x", "docToken": "BAD TOKEN", "snapshotId": 1, "text": ""}}):
        async def content(call, answer=answer):
            return answer

        fake.content = content
        result = await gateway.call("get_selection", {"tabId": 1}, thread_id="t")
        assert not result.ok and result.error.code == "unknown", answer
        assert "invalid content-script response" in result.error.message


async def test_a_child_tab_opened_by_a_write_becomes_the_default(gateway, fake):
    gateway.routes.bind("t", 1)
    await read(gateway)

    async def content(call):
        if call.tool == "click":
            # Chrome does not always record the opener: the URL the page opened identifies it.
            fake.tabs[3] = {"id": 3, "url": "http://site.test/child", "title": "Child", "windowId": 9,
                            "status": "complete", "openerTabId": None}
            return {"resultText": "Clicked", "snapshot": snapshot("doc", 5, ("button", "Save")),
                    "opensTabs": ["http://site.test/child"]}
        return {"resultText": "child page", "snapshot": snapshot("kid", 1, ("button", "Ok"))}

    fake.content = content
    result = await gateway.call("click", {"element": "link", "ref": "sdoc_1_1"}, thread_id="t", policy="auto")
    assert result.ok, result
    assert result.tab_id == 1 and result.result_tab_id == 3
    assert "The action opened a new tab 3" in result.text and "child page" in result.text
    assert "tab_created" in result.details["evidence"]["observedEffects"]
    assert gateway.routes.default("t").tab_id == 3
    assert gateway.refs.current_snapshot(3) == "skid_1"


async def test_navigate_may_start_from_the_new_tab_page_and_is_judged_at_its_destination(gateway, fake):
    result = await gateway.call("navigate", {"url": "https://shop.example/cart", "tabId": 2}, thread_id="t")
    assert not result.ok and result.error.code == "approval_required"  # a write under the default policy, not refused
    assert result.error.details["targetOrigin"] == "https://shop.example"
    denied = await gateway.call("navigate", {"url": "javascript:alert(1)", "tabId": 2}, thread_id="t")
    assert not denied.ok and denied.error.code == "denied"
    page_tool = await gateway.call("read_page", {"tabId": 2}, thread_id="t")
    assert not page_tool.ok and page_tool.error.code == "not_web_page"
    assert "load one into it with navigate" in page_tool.error.message
    # Only the browser's own start pages: a page that sent itself to about:blank#... is not one.
    fake.tabs[2]["url"] = "about:blank#anything"
    moved = await gateway.call("navigate", {"url": "https://shop.example/cart", "tabId": 2}, thread_id="t")
    assert not moved.ok and moved.error.code == "not_web_page"


async def test_a_thread_captured_on_a_start_page_navigates_there_and_nowhere_else(gateway, fake):
    gateway.routes.bind("t", None)  # the user submitted from the new-tab page: no web page captured
    fake.tabs[2]["userLooking"] = True
    page_tool = await gateway.call("read_page", {}, thread_id="t")
    assert not page_tool.ok and page_tool.error.code == "no_target"
    result = await gateway.call("navigate", {"url": "https://shop.example/cart"}, thread_id="t")
    assert not result.ok and result.error.code == "approval_required"
    assert result.error.details["targetOrigin"] == "https://shop.example"
    assert gateway.routes.default("t").tab_id == 2
    fake.tabs[2]["userLooking"] = False  # looking at a web page instead: never taken for the thread
    gateway.routes.bind("u", None)
    elsewhere = await gateway.call("navigate", {"url": "https://shop.example/cart"}, thread_id="u")
    assert not elsewhere.ok and elsewhere.error.code == "no_target"


async def test_a_tab_is_guarded_only_once_a_call_on_it_is_allowed_then_looked_at_once_per_call(gateway, fake):
    gateway.routes.bind("t", 1)
    await read(gateway)
    guard = gateway.gateway.guard
    gateway.gatekeeper.set_scope_lock("t", ["https://elsewhere.example"])
    denied = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1"}, thread_id="t", policy="auto")
    assert not denied.ok and denied.error.code == "denied", denied
    assert not guard.covers("t", 1) and fake.guard_installs == []  # a denied write guards nothing
    gateway.gatekeeper.set_scope_lock("t", None)
    looks = lambda: sum(1 for c in fake.api_calls if c.api == "tabs.get")  # noqa: E731
    before = looks()
    done = await gateway.call("click", {"element": "Save", "ref": "sdoc_1_1"}, thread_id="t", policy="auto")
    assert done.ok and guard.covers("t", 1), done
    assert looks() - before == 2  # judged, then held, guarded and looked at again
    before = looks()
    again = await gateway.call("click", {"element": "Save", "ref": "sdoc_2_1"}, thread_id="t", policy="auto")
    assert again.ok and looks() - before == 1, again  # the thread drives the tab: one look, under its hold
