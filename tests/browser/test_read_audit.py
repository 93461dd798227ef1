"""A read's audit rows on the one authorisation path, with a real SQLite audit log: a read on a tab
its thread already drives is judged once, goes to the page before its decision row is written,
and its answer is taken only once that row is in the log (decision before outcome). A row the
log cannot take ends the read as storage being unavailable, the page's answer unread; a read
whose caller goes away as it is sent, or whose caller's own bookkeeping fails before it is sent,
still has its row; a write keeps both judgements and its rows before it is sent."""

from __future__ import annotations

import pytest

from host.browser.gateway import BrowserGateway
from host.browser.service import BrowserTools
from host.calls.authorize import Authorizer
from host.calls.direct import call_directly
from host.calls.router import Router
from host.gatekeeper.service import Gatekeeper
from host.store import Store
from host.store.db import StoreError
from protocol.messages import ContentCall
from tests.support.fake_extension import FakeExtension

SECRET_TEXT = "page text the model must not see"


@pytest.fixture
def fake() -> FakeExtension:
    return FakeExtension()


@pytest.fixture
def gatekeeper(tmp_path, monkeypatch):
    monkeypatch.setenv("TABWARDEN_HOME", str(tmp_path / "home"))
    store = Store(tmp_path / "db.sqlite3")
    keeper = Gatekeeper(store, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    yield keeper
    store.close()


@pytest.fixture
def authorizer(fake, gatekeeper) -> Authorizer:
    gateway = BrowserGateway(lambda: fake, gatekeeper)
    gateway.routes.bind("t", 1)  # the thread drives tab 1: its calls are held and resolved once
    return Authorizer(Router({"browser": BrowserTools(gateway)}), gatekeeper)


def rows(gatekeeper) -> list[tuple[str, str]]:
    """(kind, tool) of every row in the log, oldest first."""
    return [(row["kind"], row["tool"]) for row in gatekeeper.audit.iter_rows()]


def watch_sends(fake, gatekeeper) -> list[list[tuple[str, str]]]:
    """The log's rows at the moment each content call was sent."""
    seen: list[list[tuple[str, str]]] = []
    begin = fake.begin

    def sending(build, timeout=None):
        def built(request_id):
            message = build(request_id)
            if isinstance(message, ContentCall):
                seen.append(rows(gatekeeper))
            return message
        return begin(built, timeout)

    fake.begin = sending  # type: ignore[method-assign]
    return seen


def count_checks(gatekeeper, monkeypatch) -> list[str]:
    """The tools the gatekeeper judges, one entry per judgement."""
    judged: list[str] = []
    check = gatekeeper.check

    def counted(request, **kw):
        judged.append(request.tool)
        return check(request, **kw)

    monkeypatch.setattr(gatekeeper, "check", counted)
    return judged


async def test_a_read_goes_out_before_its_decision_row_and_answers_after_it(authorizer, fake, gatekeeper, monkeypatch):
    await call_directly(authorizer, "read_page", {}, thread_id="t")  # the tab is driven from here on
    before = len(rows(gatekeeper))
    sent = watch_sends(fake, gatekeeper)
    judged = count_checks(gatekeeper, monkeypatch)
    result = await call_directly(authorizer, "read_page", {}, thread_id="t")
    assert result.ok, result
    assert judged == ["read_page"]  # judged once: nothing changed between the two phases
    assert len(sent) == 1 and len(sent[0]) == before  # on its way before its row was written
    new = rows(gatekeeper)[before:]
    assert new == [("decision", "read_page"), ("outcome", "read_page")]
    assert gatekeeper.audit.verify().ok


async def test_a_read_whose_row_cannot_be_written_fails_closed_unread(authorizer, fake, gatekeeper):
    await call_directly(authorizer, "read_page", {}, thread_id="t")

    async def page(call):
        return {"resultText": SECRET_TEXT}

    fake.content = page
    log = gatekeeper.audit
    append = log.append

    def full_disk(**row):
        if row.get("kind") == "decision":
            raise StoreError("database or disk is full")
        return append(**row)

    log.append = full_disk  # type: ignore[method-assign]
    sent = watch_sends(fake, gatekeeper)
    result = await call_directly(authorizer, "read_page", {}, thread_id="t")
    assert not result.ok and result.error.code == "storage_unavailable", result
    assert "answer was not taken" in result.text and result.error.details["dispatched"] is True
    assert SECRET_TEXT not in result.text and SECRET_TEXT not in str(result.details)
    assert len(sent) == 1  # it went out; its answer was dropped


async def test_a_write_keeps_both_judgements_and_its_row_before_it_is_sent(authorizer, fake, gatekeeper, monkeypatch):
    await call_directly(authorizer, "read_page", {}, thread_id="t")
    before = len(rows(gatekeeper))
    sent = watch_sends(fake, gatekeeper)
    judged = count_checks(gatekeeper, monkeypatch)
    result = await call_directly(authorizer, "click", {"element": "Save", "ref": "sdoc_1_1"}, thread_id="t",
                                 policy="auto")
    assert result.ok, result
    assert judged == ["click", "click"]
    assert sent and sent[0][before:] == [("decision", "click"), ("decision", "click")]


async def test_a_read_cancelled_on_its_way_still_has_its_decision_row(authorizer, fake, gatekeeper):
    import asyncio

    await call_directly(authorizer, "read_page", {}, thread_id="t")
    before = len(rows(gatekeeper))
    call: asyncio.Task | None = None
    begin = fake.begin

    def cancel_as_it_goes(build, timeout=None):
        answer = begin(build, timeout)
        assert call is not None
        call.cancel()  # the caller goes away the moment the read is sent, before its row is written
        return answer

    fake.begin = cancel_as_it_goes  # type: ignore[method-assign]
    call = asyncio.ensure_future(call_directly(authorizer, "read_page", {}, thread_id="t"))
    with pytest.raises(asyncio.CancelledError):
        await call
    assert rows(gatekeeper)[before:][:1] == [("decision", "read_page")]


async def test_a_read_whose_callers_bookkeeping_fails_still_has_its_decision_row(authorizer, fake, gatekeeper):
    from host.calls.authorize import Context
    from host.calls.direct import _Refuse

    await call_directly(authorizer, "read_page", {}, thread_id="t")
    before = len(rows(gatekeeper))

    class Failing(_Refuse):
        def dispatching(self, call, judgement, approved):
            raise RuntimeError("the run's record could not be written")

    call = authorizer.router.decode("t", "read_page", {})
    with pytest.raises(RuntimeError):
        await authorizer.process(call, Context("t"), Failing())
    assert rows(gatekeeper)[before:] == [("decision", "read_page")]
    assert len(fake.content_calls) == 1  # nothing went to the page
