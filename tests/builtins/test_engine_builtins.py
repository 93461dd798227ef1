"""The built-in tools through the whole loop (engine, gatekeeper, fake model over real HTTP):
fetch_url judged by its destination and fenced, memory across threads, artifacts kept with the
thread, download through the extension, and the page indicator following the turn."""

from __future__ import annotations

import pytest

from tests.support.fake_model import Reply, last_tool_result_text
from tests.support.scripted_site import Site, html
from tests.support.waiting import until


@pytest.fixture(scope="module")
def site():
    with Site("127.0.0.2", {"/news.html": html("<title>News</title><h1>Today</h1><p>Nothing happened.</p>")}) as s:
        yield s


def results(harness, thread):
    return [n.body for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "tool_result"]


async def test_fetch_url_is_judged_by_its_destination_and_fenced(harness, server, site):
    url = site.url("pages.test", "/news.html")
    server.add(Reply(tool_calls=[("fetch_url", {"url": url})]), Reply(text="Read it."))
    thread = await harness.new_thread()
    await harness.submit(thread, "what is new?")
    request = await harness.recorder.wait_for("approval.request")  # a write under `untrusted`
    assert request["request"]["tool"] == "fetch_url"
    assert request["request"]["targetOrigin"] == f"http://pages.test:{site.port}"
    await harness.answer(request["approvalId"], "accept")
    await harness.turn_done()
    sent = last_tool_result_text(server.requests[1]["body"])
    assert sent.startswith("<<<web_content_") and f'origin="http://pages.test:{site.port}"' in sent
    assert "Title: News" in sent and "# Today\n\nNothing happened." in sent
    assert results(harness, thread)[0]["trust"] == "untrusted"


@pytest.mark.parametrize("url", ["http://127.0.0.1/", "http://0x7f000001/", "http://[::1]/", "http://localhost/",
                                 "http://169.254.169.254/latest/", "http://metadata.google.internal/",
                                 "file:///etc/passwd"])
async def test_fetch_url_to_private_places_is_denied_without_asking(harness, server, url):
    server.add(Reply(tool_calls=[("fetch_url", {"url": url})]), Reply(text="Cannot."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "read it")
    await harness.turn_done()
    result = results(harness, thread)[0]
    assert result["ok"] is False and harness.recorder.of("approval.request") == []
    expected = "invalid_params" if url.startswith("file:") else "ssrf_blocked"
    assert result["code"] == expected, result


async def test_memory_survives_threads_and_writes_are_writes(harness, server):
    server.add(Reply(tool_calls=[("memory_write", {"key": "seat", "value": "aisle, never middle"})]), Reply(text="Saved."))
    first = await harness.new_thread()
    await harness.submit(first, "remember I like the aisle")
    approval = await harness.recorder.wait_for("approval.request")
    assert approval["request"]["tool"] == "memory_write"
    await harness.answer(approval["approvalId"], "accept")
    await harness.turn_done()
    # An open settings page is told at once (no op of its own asked).
    [state] = harness.recorder.of("memory.state")
    assert [(e["key"], e["source"]) for e in state["entries"]] == [("seat", "model")] and "submissionId" not in state
    server.add(Reply(tool_calls=[("memory_read", {})]), Reply(text="Aisle."))
    second = await harness.new_thread()
    await harness.submit(second, "which seat do I like?")
    await harness.turn_done(2)
    assert len(harness.recorder.of("approval.request")) == 1  # reads are always allowed
    sent = last_tool_result_text(server.requests[-1]["body"])
    assert "1 saved memories" in sent and "- seat: aisle, never middle" in sent and "<<<web_content_" in sent
    assert [e.source for e in harness.builtins.memory.entries()] == ["model"]


async def test_memory_limits_are_reported_to_the_model(harness, server):
    from host.builtins.settings import parse_settings

    harness.builtins.settings = lambda: parse_settings({"memoryMaxValueChars": 5})
    server.add(Reply(tool_calls=[("memory_write", {"key": "note", "value": "far too long"})]), Reply(text="ok"))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "note it")
    await harness.turn_done()
    assert results(harness, thread)[0]["code"] == "value_too_long"
    assert harness.builtins.memory.entries() == [] and harness.recorder.of("memory.state") == []


async def test_an_artifact_is_kept_with_its_thread(harness, server):
    server.add(Reply(tool_calls=[("artifact", {"name": "report.md", "content": "# Report\nAll good ✓"})]),
               Reply(tool_calls=[("artifact", {"name": "page.html", "content": "<script>x</script>"})]),
               Reply(text="Here is your report."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "write a report")
    await harness.turn_done()
    saved, refused = results(harness, thread)
    assert saved["ok"] and saved["details"]["artifact"]["name"] == "report.md"
    assert refused["code"] == "unsupported_type"
    [row] = harness.engine.store.attachments(thread)
    assert (row.name, row.mime, row.size) == ("report.md", "text/markdown", len("# Report\nAll good ✓".encode()))
    assert harness.engine.store.attachment(row.id, content=True).content.decode() == "# Report\nAll good ✓"
    await harness.op({"type": "thread.delete", "threadId": thread})
    assert harness.engine.store.attachments(thread) == []


async def test_download_goes_through_the_extension_to_the_judged_url(harness, server, bridge):
    server.add(Reply(tool_calls=[("download", {"url": "HTTPS://Files.Example/a b.pdf", "filename": "a.pdf"})]),
               Reply(text="Downloaded."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "get the pdf from files.example")
    await harness.turn_done()
    [(name, (options,))] = [c for c in bridge.calls if c[0] == "downloads.download"]
    assert options["url"] == "https://files.example/a%20b.pdf" and options["filename"] == "a.pdf"
    assert 'Downloaded "https://files.example/a%20b.pdf" to "/home/u/Downloads/a.pdf"' in results(harness, thread)[0]["text"]


async def test_the_indicator_follows_the_turn_and_its_buttons_reach_the_engine(harness, server, bridge):
    from host.nativehost.wiring import indicator_action

    server.add(Reply(tool_calls=[("read_page", {})]), Reply(text="Done."))
    thread = await harness.new_thread()
    await harness.submit(thread, "look")
    await harness.turn_done()
    await until(lambda: "indicator.hide" in bridge.names(), 10, "the indicator to be hidden")
    assert [(n, a) for n, a in bridge.calls if n.startswith("indicator.")] == [("indicator.show", (7,)),
                                                                                ("indicator.hide", (7,))]
    # Pause from the page while a tool runs: the turn ends, with a notice.
    import asyncio

    harness.inner.gate = asyncio.Event()
    harness.inner.running.clear()
    harness.browser.indicator.on_action = lambda t, a: indicator_action(harness.engine, t, a)
    server.add(Reply(tool_calls=[("read_page", {})]), Reply(text="never"))
    await harness.submit(thread, "look again")
    await harness.inner.running.wait()
    assert harness.browser.indicator.threads_on(7) == [thread]

    class Event:
        name = "indicator.action"
        data = {"tabId": 7, "action": "pause"}

    await harness.browser.indicator.on_event(Event())
    assert (await harness.turn_done(2))["stopReason"] == "interrupted"
    notices = [n.body for n in harness.engine.thread_snapshot(thread).nodes if n.kind == "system_notice"]
    assert notices[-1]["text"].startswith("Paused from the page indicator")
    await until(lambda: bridge.names().count("indicator.hide") == 2, 10, "the indicator to be hidden twice")


@pytest.mark.parametrize("url,code", [("https://www.chase.com/statement.pdf", "sensitive_origin"),
                                      ("javascript:alert(1)", "script_scheme"),
                                      ("data:text/plain,hi", "script_scheme")])
async def test_download_to_sensitive_or_script_destinations_is_denied(harness, server, bridge, url, code):
    server.add(Reply(tool_calls=[("download", {"url": url})]), Reply(text="Refused."))
    thread = await harness.new_thread(permissionPolicy="auto")
    await harness.submit(thread, "download it")
    await harness.turn_done()
    result = results(harness, thread)[0]
    assert (result["ok"], result["code"], result["outcome"]) == (False, code, "denied")
    assert "downloads.download" not in bridge.names()
