"""The built-ins in headless Chromium with the real extension and host (one browser for the
module): watch_page ends when the page really changes, the page indicator appears in the tab a
turn drives, lets the page's own clicks through, stops the turn from its Stop button and goes
away when the turn ends; download and an artifact land in the downloads folder."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tests.support.browser import BrowserRun
from tests.support.cdp import PageSession, debugging_port, our_elements
from tests.support.engine_control import EngineOverControl, open_tab, tab_of
from tests.support.fake_model import FakeOpenAI, Reply, last_tool_result_text
from tests.support.hosts import tabwarden_home, write_settings
from tests.support.scripted_site import Site, html
from tests.support.waiting import until

pytestmark = pytest.mark.browser

WATCH = "<title>Order</title><h1>Order 1</h1><p id='status'>Preparing</p>"
UNDER = """<title>Indicator</title><h1>Indicator</h1><input id="name" aria-label="Name">
<button id="under" style="position: fixed; right: 0; bottom: 0; width: 70%; height: 140px"
        onclick="window.clicks = (window.clicks || 0) + 1">Under</button>"""


async def indicator(run, url_part: str) -> list[dict]:
    """The indicator: our element (known to the executor by reference) fixed at the bottom right."""
    return [box for box in await our_elements(debugging_port(run.profile), url_part) if box["bottom"] == "12px"]


async def no_indicator(run, url_part: str) -> bool:
    return await indicator(run, url_part) == []


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    site = Site("127.0.0.1", {"/watch.html": html(WATCH), "/under.html": html(UNDER),
                              "/notes.txt": (200, {"Content-Type": "text/plain"}, b"downloaded through the browser\n")})
    with site, FakeOpenAI() as model:
        run = BrowserRun(tmp_path_factory.mktemp("builtins-e2e"), host_permissions=["http://127.0.0.1/*"],
                         start_url=site.url("127.0.0.1", "/watch.html"))
        run.prepare()
        write_settings(run.tw_home, model.url)
        run.start()
        with tabwarden_home(run.tw_home):
            try:
                yield run, site, model
            except BaseException:
                print(run.diagnostics())
                raise
            finally:
                run.stop()


async def test_watch_page_is_satisfied_by_a_change_in_the_page(env):
    run, site, model = env
    model.replies.clear()
    model.add(Reply(tool_calls=[("watch_page", {"textAppears": "Delivered", "timeoutSeconds": 120})]),
              Reply(text="Your order was delivered."))
    engine = await EngineOverControl.attach()
    page = await PageSession.open(debugging_port(run.profile), "watch.html")
    try:
        tab = await tab_of(engine, "watch.html")
        thread = await engine.start("tell me when it is delivered", tab)
        asked = await engine.wait("interaction.request", thread)
        assert asked["request"]["tabId"] == tab["id"]
        assert asked["request"]["origin"] == f"http://127.0.0.1:{site.port}"
        await asyncio.sleep(1.5)  # a few rounds of the watcher see no change
        assert not [e for e in engine.events if e.get("type") == "turn.complete" and e.get("threadId") == thread]
        await page.evaluate("document.getElementById('status').textContent = 'Delivered', true")
        done = await engine.wait("turn.complete", thread)
        assert done["stopReason"] == "end"
        [result] = engine.results(thread)
        assert result["ok"] and result["text"].startswith("The condition held after")
        assert "<<<web_content_" in last_tool_result_text(model.requests[-1]["body"])
    finally:
        await page.close()
        await engine.control.close()


async def test_the_indicator_shows_lets_page_clicks_through_and_stops_the_turn(env):
    run, site, model = env
    port = debugging_port(run.profile)
    engine = await EngineOverControl.attach()
    hold = threading.Event()
    page = None
    try:
        open_tab(port, site.url("127.0.0.1", "/under.html"))
        page = await PageSession.open(port, "under.html")
        await until(lambda: page.evaluate("document.readyState === 'complete'"), 30, "the page to load", interval=0.1)
        # The turn reads the page, then the model takes its time: the indicator is up meanwhile.
        model.replies.clear()
        model.add(Reply(tool_calls=[("read_page", {})]), Reply(text="Thinking", hold=hold))
        thread = await engine.start("look at the page", await tab_of(engine, "under.html"))
        [box] = await until(lambda: indicator(run, "under.html"), 30, "the page indicator", interval=0.1)
        # The label part lets a click through to the page's own button underneath.
        await page.trusted_click(box["x"] + 12, box["y"] + box["h"] / 2)
        assert await until(lambda: page.evaluate("window.clicks === 1"), 30, "the page's own click", interval=0.1)
        # Its Stop button (the last 52 px, 4 px from the edge) stops the turn.
        await page.trusted_click(box["x"] + box["w"] - 30, box["y"] + box["h"] / 2)
        done = await engine.wait("turn.complete", thread)
        assert done["stopReason"] == "interrupted"
        assert await page.evaluate("window.clicks") == 1  # the page never saw the press on Stop
        notices = [n["body"]["text"] for n in (await engine.control.call("engine.snapshot", thread_id=thread))["nodes"]
                   if n["kind"] == "system_notice"]
        assert notices == ["Stopped from the page indicator."]
        assert await until(lambda: no_indicator(run, "under.html"), 30, "the indicator to go",
                           interval=0.1)  # gone with the turn
    finally:
        hold.set()
        if page is not None:
            await page.close()
        await engine.control.close()


async def test_a_turn_that_types_is_paused_from_the_indicator_not_by_a_takeover(env):
    run, site, model = env
    engine = await EngineOverControl.attach()
    hold = threading.Event()
    page = await PageSession.open(debugging_port(run.profile), "under.html")
    try:
        model.replies.clear()
        seen = len(model.requests)
        model.add(Reply(tool_calls=[("read_page", {})]),
                  lambda body: Reply(tool_calls=[("type", {"element": "Name", "text": "Ada", "ref": _ref(body)})]),
                  Reply(text="Waiting", hold=hold))
        thread = await engine.start("type my name", await tab_of(engine, "under.html"))
        [box] = await until(lambda: indicator(run, "under.html"), 30, "the page indicator", interval=0.1)
        await until(lambda: page.evaluate("document.getElementById('name').value === 'Ada'"), 30, "the typed name",
                    interval=0.1)
        await asyncio.to_thread(model.wait_requests, seen + 3)  # the model is thinking after the typing
        # Pause: the button left of Stop.
        await page.trusted_click(box["x"] + box["w"] - 30 - 56, box["y"] + box["h"] / 2)
        done = await engine.wait("turn.complete", thread)
        assert done["stopReason"] == "interrupted"
        notices = [n["body"]["text"] for n in (await engine.control.call("engine.snapshot", thread_id=thread))["nodes"]
                   if n["kind"] == "system_notice"]
        assert notices == ["Paused from the page indicator. Send a message to continue."]  # no takeover notice
    finally:
        hold.set()
        await page.close()
        await engine.control.close()


def _ref(body: dict) -> str:
    import re

    text = last_tool_result_text(body)
    line = next(line for line in text.split("\n") if 'textbox "Name"' in line)
    return re.search(r"\[ref=(s[0-9a-z]+_\d+_\d+)\]", line).group(1)


async def test_download_and_artifact_land_in_the_downloads_folder(env):
    run, site, model = env
    engine = await EngineOverControl.attach()
    try:
        model.replies.clear()
        model.add(Reply(tool_calls=[("download", {"url": site.url("127.0.0.1", "/notes.txt"),
                                                  "filename": "notes-from-site.txt"})]),
                  Reply(tool_calls=[("artifact", {"name": "summary.md", "content": "# Summary\nAll done ✓\n"})]),
                  Reply(text="Saved both."))
        thread = await engine.start(f"save things: the notes at {site.url('127.0.0.1', '/notes.txt')}",
                                    await tab_of(engine, "watch.html"))
        assert (await engine.wait("turn.complete", thread))["stopReason"] == "end"
        downloaded, artifact = engine.results(thread)
        assert downloaded["ok"], downloaded
        saved = downloaded["details"]["filename"]
        assert saved.endswith("notes-from-site.txt")
        with open(saved, "rb") as handle:
            assert handle.read() == b"downloaded through the browser\n"
        artifact_id = artifact["details"]["artifact"]["artifactId"]
        [listed] = await engine.control.call("artifacts.list", thread_id=thread)
        assert listed["name"] == "summary.md" and listed["artifactId"] == artifact_id
        ack = await engine.op({"type": "artifact.download", "artifactId": artifact_id})
        assert ack["type"] == "command.ack"
        path = Path(saved).parent / "summary.md"  # the same downloads folder

        async def arrived():
            return path.exists() and path.read_text(encoding="utf-8") == "# Summary\nAll done ✓\n"

        assert await until(arrived, 30, "the artifact in the downloads folder", interval=0.1)
    finally:
        await engine.control.close()
