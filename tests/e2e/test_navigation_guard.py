"""The navigation guard in a real browser: while a thread drives a tab, nothing the thread or the
page does reaches an origin the thread may not reach, under a scope lock (origin A only) and under
the blocked list (origin B blocked), with the `auto` policy. Every route a page has to leave: a
link, `location`, a timer after the result, `window.open`, `target=_blank`, a form's `action`
(submitted by a click, by a field on input, or through `formaction`), the redirect hops of
`navigate`, `tab_open` (302, 307, meta refresh) and `download`. For each, B's server records no
request at all, the result (or, for what happens after it, the next result on that tab) names
`navigation_blocked` and B's origin, and the audit has an outcome naming B's origin.

Where a read shows the destination (a link's href, a form's action, a button's formaction), the
gatekeeper refuses the call before anything is sent (`denied`, naming B). The guard is for what
a read cannot show: each of those routes is also tried with the page pointing the element at B
only while the click or the typing runs.

A is 127.0.0.1 on one port, B 127.0.0.1 on another; one case uses `localhost` (a different host,
on which the extension has no host permission) for B."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.support.browser import BrowserRun
from tests.support.browser_tools import hooks_enabled, ref_of
from tests.support.fake_model import FakeOpenAI
from tests.support.guarded_thread import MODES, held_thread, running
from tests.support.scripted_site import Site, html, redirect

pytestmark = pytest.mark.browser


def a_pages(b: str) -> dict[str, Any]:
    """Origin A's pages; every way out leads to B (`b` is B's base URL)."""
    return {
        "/start.html": html("<title>Start</title><h1>Start</h1><a href='/second.html'>Second page</a>"),
        "/second.html": html("<title>Second</title><h1>Second</h1>"),
        "/link.html": html(f"<title>Link</title><a href='{b}/b.html?link'>Go to B</a>"),
        "/location.html": html(f"<title>Location</title><button onclick=\"location = '{b}/b.html?location'\">Leave</button>"),
        "/timer.html": html(f"<title>Timer</title><button onclick=\"setTimeout(() => location = '{b}/b.html?timer', 50)\">"
                            "Later</button>"),
        "/open.html": html(f"<title>Open</title><button onclick=\"window.open('{b}/b.html?open')\">Open B</button>"),
        "/blank.html": html(f"<title>Blank</title><a target='_blank' href='{b}/b.html?blank'>New tab</a>"),
        "/form.html": html(f"<title>Form</title><form method='post' action='{b}/b.html?form'>"
                           "<input name='q' aria-label='Query'><button>Send</button></form>"),
        "/autosubmit.html": html(f"<title>Auto</title><form action='{b}/b.html'>"
                                 "<input name='q' aria-label='Query' oninput='this.form.submit()'></form>"),
        "/formaction.html": html(f"<title>Formaction</title><form action='/second.html'><input name='q' aria-label='Query'>"
                                 f"<button formaction='{b}/b.html?formaction'>Send</button></form>"),
        # The same ways out with the destination hidden from a read: the page points the element
        # at B only while the click or the typing runs (as link-tracking scripts rewrite hrefs).
        "/link-hidden.html": html(f"<title>Link</title><a href='/second.html' onclick=\"this.href = '{b}/b.html?link'\">"
                                  "Go to B</a>"),
        "/blank-hidden.html": html(f"<title>Blank</title><a target='_blank' href='/second.html' "
                                   f"onclick=\"this.href = '{b}/b.html?blank'\">New tab</a>"),
        "/form-hidden.html": html(f"<title>Form</title><form method='post' action='/second.html' "
                                  f"onsubmit=\"this.action = '{b}/b.html?form'\">"
                                  "<input name='q' aria-label='Query'><button>Send</button></form>"),
        "/autosubmit-hidden.html": html(f"<title>Auto</title><form action='/second.html'><input name='q' aria-label='Query' "
                                        f"oninput=\"this.form.action = '{b}/b.html'; this.form.submit()\"></form>"),
        "/formaction-hidden.html": html(f"<title>Formaction</title><form action='/second.html'>"
                                        "<input name='q' aria-label='Query'><button formaction='/start.html' "
                                        f"onclick=\"this.formAction = '{b}/b.html?formaction'\">Send</button></form>"),
        "/frame.html": html("<title>Frame</title><h1>Frame host</h1><iframe id='f' src='/second.html'></iframe>"
                            f"<button onclick=\"document.getElementById('f').src = '{b}/b.html?frame'\">Reframe</button>"),
        "/r302": redirect(f"{b}/b.html?r302"),
        "/r307": redirect(f"{b}/b.html?r307", 307),
        "/refresh.html": html(f"<title>Refresh</title><meta http-equiv='refresh' content='0;url={b}/b.html?refresh'>"),
        "/dl": redirect(f"{b}/file.txt"),
        "/a.txt": (200, {"Content-Type": "text/plain", "Content-Disposition": "attachment"}, b"from A\n"),
    }


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    b = Site("127.0.0.1", {"/b.html": html("<title>B</title><h1>B</h1>"),
                           "/file.txt": (200, {"Content-Type": "text/plain"}, b"from B\n")})
    a = Site("127.0.0.1")
    with a, b, FakeOpenAI() as model, hooks_enabled():
        a.routes.update(a_pages(f"http://127.0.0.1:{b.port}"))
        run = BrowserRun(tmp_path_factory.mktemp("navguard"), host_permissions=["http://127.0.0.1/*"])
        with running(run, a, b, model) as env:
            yield env


@pytest.fixture(params=MODES)
async def thread(env, request):
    async with held_thread(env, request.param) as made:
        yield made


# ---------------------------------------------------------------- what a page does


async def test_a_link_to_b_is_refused_unsent(thread):
    tab, page = await thread.open("/link.html")
    thread.assert_denied_unsent(await thread.call("click", element="Go to B", ref=ref_of(page, "Go to B")))


async def test_a_link_pointed_at_b_during_the_click(thread):
    tab, page = await thread.open("/link-hidden.html")
    result = await thread.call("click", element="Go to B", ref=ref_of(page, "Go to B"))
    assert not result["ok"] and result["error"]["code"] == "navigation_blocked", result
    assert result["error"]["details"]["blockedOrigin"] == thread.b_origin
    await thread.assert_blocked(result)
    # The tab shows the browser's notice: page tools say so; navigate goes on from there.
    again = await thread.call("read_page")
    assert not again["ok"] and again["error"]["code"] == "navigation_blocked"
    back = await thread.call("navigate", url=f"{thread.env.a_origin}/second.html")
    assert back["ok"] and "Second" in back["text"], back


async def test_a_button_that_sets_location(thread):
    tab, page = await thread.open("/location.html")
    result = await thread.call("click", element="Leave", ref=ref_of(page, "Leave"))
    await thread.assert_blocked(result)
    assert result["error"]["code"] == "navigation_blocked"


async def test_a_navigation_after_a_timer_is_reported_with_the_next_result(thread):
    tab, page = await thread.open("/timer.html")
    result = await thread.call("click", element="Later", ref=ref_of(page, "Later"))
    await thread.wait_blocked()
    following = await thread.call("tab_focus", tabId=tab)
    await thread.assert_blocked(result, following)
    if "navigation_blocked" not in result["text"]:  # it came after the result, as it usually does
        assert "Since the previous result on tab" in following["text"]
        [note] = [n for n in following["details"]["sinceLastCall"] if n["kind"] == "blocked"]
        assert note["origin"] == thread.b_origin and note["code"] == "navigation_blocked"


async def test_window_open_by_a_trusted_click(thread):
    tab, page = await thread.open("/open.html")
    before = {t["id"] for t in await thread.control.call("browser.tabs")}
    result = await thread.call("click_trusted", element="Open B", ref=ref_of(page, "Open B"))
    await thread.assert_blocked(result, await thread.call("tab_focus", tabId=tab))
    after = {t["id"] for t in await thread.control.call("browser.tabs")}
    assert after <= before, "the pop-up at B was closed"


async def test_a_target_blank_link_to_b_is_refused_unsent(thread):
    tab, page = await thread.open("/blank.html")
    thread.assert_denied_unsent(await thread.call("click", element="New tab", ref=ref_of(page, "New tab")))


async def test_a_target_blank_link_pointed_at_b_during_the_click(thread):
    tab, page = await thread.open("/blank-hidden.html")
    before = {t["id"] for t in await thread.control.call("browser.tabs")}
    result = await thread.call("click", element="New tab", ref=ref_of(page, "New tab"))
    await thread.assert_blocked(result, await thread.call("tab_focus", tabId=tab))
    assert "new tab" in result["text"].lower()
    after = {t["id"] for t in await thread.control.call("browser.tabs")}
    assert after <= before, "the new tab at B was closed"
    assert "resultTabId" not in result


async def test_typing_into_a_form_bound_for_b_is_refused_unsent(thread):
    tab, page = await thread.open("/form.html")
    thread.assert_denied_unsent(await thread.call("type", element="Query", ref=ref_of(page, "Query"),
                                                  text="secret order 42"))
    thread.assert_denied_unsent(await thread.call("click", element="Send", ref=ref_of(page, "Send")))


async def test_a_form_sent_to_b_by_its_submit_handler(thread):
    tab, page = await thread.open("/form-hidden.html")
    typed = await thread.call("type", element="Query", ref=ref_of(page, "Query"), text="secret order 42")
    assert typed["ok"], typed
    result = await thread.call("click", element="Send", ref=ref_of(page, "Send"))
    await thread.assert_blocked(result)


@pytest.mark.parametrize("path", ["/autosubmit.html", "/formaction.html"])
async def test_a_field_or_button_bound_for_b_is_refused_unsent(thread, path):
    tab, page = await thread.open(path)
    tool, name = ("type", "Query") if "autosubmit" in path else ("click", "Send")
    params = {"text": "x"} if tool == "type" else {}
    thread.assert_denied_unsent(await thread.call(tool, element=name, ref=ref_of(page, name), **params))


async def test_a_field_that_submits_itself_to_b(thread):
    tab, page = await thread.open("/autosubmit-hidden.html")
    result = await thread.call("type", element="Query", ref=ref_of(page, "Query"), text="x")
    await thread.assert_blocked(result, await thread.call("tab_focus", tabId=tab))


async def test_a_button_whose_formaction_turns_to_b(thread):
    tab, page = await thread.open("/formaction-hidden.html")
    result = await thread.call("click", element="Send", ref=ref_of(page, "Send"))
    await thread.assert_blocked(result)


async def test_a_frame_sent_to_b(thread):
    tab, page = await thread.open("/frame.html")
    result = await thread.call("click", element="Reframe", ref=ref_of(page, "Reframe"))
    await thread.assert_blocked(result, await thread.call("tab_focus", tabId=tab))
    assert (await thread.call("read_page"))["ok"], "the page itself stays"


# ---------------------------------------------------------------- redirect hops the agent starts


@pytest.mark.parametrize("path", ["/r302", "/r307"])
async def test_navigate_through_a_redirect(thread, path):
    tab, _ = await thread.open("/start.html")
    result = await thread.call("navigate", url=f"{thread.env.a_origin}{path}")
    assert not result["ok"] and result["error"]["code"] == "navigation_blocked", result
    await thread.assert_blocked(result)


@pytest.mark.parametrize("path", ["/r302", "/r307", "/refresh.html"])
async def test_tab_open_through_a_redirect(thread, path):
    result = await thread.call("tab_open", url=f"{thread.env.a_origin}{path}")
    await thread.wait_blocked()  # a meta refresh may come after the result
    later = await thread.call("tab_focus", tabId=result["tabId"])
    await thread.assert_blocked(result, later)


async def test_download_through_a_redirect(thread):
    result = await thread.in_turn("download", url=f"{thread.env.a_origin}/dl")
    assert not result["ok"] and result["code"] == "navigation_blocked", result  # a turn's result, as the model reads it
    assert result["details"]["blockedOrigin"] == thread.b_origin
    await thread.assert_blocked(result)


# ---------------------------------------------------------------- what still works


async def test_the_thread_still_goes_where_it_may(thread):
    tab, page = await thread.open("/start.html")
    result = await thread.call("click", element="Second page", ref=ref_of(page, "Second page"))
    assert result["ok"] and "Second" in result["text"], result
    state = await thread.control.call("browser.guard")
    assert tab in state["guarded"][thread.thread_id] and state["installedRules"] > 0
    downloaded = await thread.in_turn("download", url=f"{thread.env.a_origin}/a.txt")
    assert downloaded["ok"], downloaded
    with open(downloaded["details"]["filename"], "rb") as saved:
        assert saved.read() == b"from A\n"
    assert thread.env.b.requests == []
    # The turn ended: its tabs are no longer guarded for it.
    assert thread.thread_id not in (await thread.control.call("browser.guard"))["guarded"]


async def test_another_thread_and_the_users_tabs_are_not_held_to_it(thread):
    tab, page = await thread.open("/link.html")
    free = await thread.control.call("tools.call", tool="tab_open", params={"url": f"{thread.b_origin}/b.html?free"},
                                     thread_id=f"free-{uuid.uuid4().hex[:6]}", policy="auto")
    if thread.mode == "lock":  # only the locked thread is held to A
        assert free["ok"], free
        assert [p for _, p in thread.env.b.requests if p != "/favicon.ico"] == ["/b.html?free"]
    else:  # the blocked list is everyone's
        assert not free["ok"] and free["error"]["code"] == "denied"


async def test_b_spelled_localhost_without_host_permission(env):
    b_origin = f"http://localhost:{env.b.port}"
    async with held_thread(env, "lock", b_origin) as made:
        await made.open("/start.html")
        env.a.routes["/r302-localhost"] = redirect(f"{b_origin}/b.html?local")
        result = await made.call("navigate", url=f"{env.a_origin}/r302-localhost")
        await made.assert_blocked(result)
