"""Who may talk to the control endpoint, and how several clients share it: the server runs in
this process (no subsystems), real Unix sockets, real clients; refusals are logged and counted."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import struct
import tempfile
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

import host.control.methods as methods
from host.control import discovery
from host.control.client import ControlClient
from host.control.hello_gate import MAX_BYTES_BEFORE_HELLO
from host.transport.errors import RequestError
from protocol.control import ControlHello, ControlRequest
from protocol.framing import FrameEncoder
from tests.support.hosts import tabwarden_home

NOBODY = 65534


@pytest.fixture
def home(tmp_path):
    # Under /tmp with a traversable root, so a test may let another user reach the socket.
    root = Path(tempfile.mkdtemp(prefix="twctl-", dir="/tmp"))
    os.chmod(root, 0o755)
    with tabwarden_home(root):
        yield root
    import shutil

    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
async def server(home, monkeypatch):
    monkeypatch.setattr(methods, "register_subsystems", lambda server: None)
    host = SimpleNamespace(endpoint=None, session=None, extension_id="test-extension", ready=asyncio.Event())
    control = methods.control_server(host, hello_timeout=0.5)
    calls: list[str] = []
    release = asyncio.Event()

    async def record(params, conn):
        calls.append(conn.client)
        return "recorded"

    async def slow(params, conn):
        await release.wait()
        return "slow done"

    control.register("test.record", record)
    control.register("test.slow", slow)
    control.calls, control.release = calls, release
    await control.start()
    yield control
    release.set()
    await control.stop()


def entry() -> discovery.HostEntry:
    return next(h for h in discovery.running_hosts() if h.pid == os.getpid())


async def raw_exchange(data: bytes) -> bytes:
    """Send bytes on a fresh connection; return everything the server sends before closing."""
    reader, writer = await asyncio.open_unix_connection(str(entry().socket_path))
    writer.write(data)
    await writer.drain()
    try:
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()


def frames(*messages) -> bytes:
    encoder = FrameEncoder()
    return b"".join(b"".join(encoder.encode(m)) for m in messages)


async def test_the_endpoint_is_private_to_the_user(server):
    found = entry()
    assert (found.socket_path.stat().st_mode & 0o777) == 0o600
    assert (found.folder.stat().st_mode & 0o777) == 0o700
    assert ((found.folder / "token").stat().st_mode & 0o777) == 0o600


async def test_a_wrong_token_is_refused_logged_and_counted(server, caplog):
    caplog.set_level(logging.WARNING, "tabwarden.control")
    reply = await raw_exchange(frames(ControlHello(token="x" * 43, client="intruder"),
                                      ControlRequest(id=1, method="test.record")))
    assert reply == b""  # no welcome, no error report: nothing for an intruder to learn
    assert server.calls == []  # the request pipelined behind the bad hello never ran
    assert "control connection refused [bad_token]: wrong token from client 'intruder'" in caplog.text
    assert server.refusals.counts() == {"bad_token": 1}


async def test_anything_but_a_hello_first_is_refused(server):
    assert await raw_exchange(frames(ControlRequest(id=1, method="test.record"))) == b""
    assert await raw_exchange(struct.pack("<I", 9) + b"not json!") == b""
    assert server.calls == []
    counts = server.refusals.counts()
    assert counts["not_hello_first"] == 1 and counts["not_control_protocol"] == 1


async def test_silence_and_floods_before_the_hello_are_refused(server):
    assert await raw_exchange(b"") == b""  # connects, says nothing: the hello timeout ends it
    flood = struct.pack("<I", 10 * MAX_BYTES_BEFORE_HELLO) + b"a" * (MAX_BYTES_BEFORE_HELLO + 1)
    assert await raw_exchange(flood) == b""
    counts = server.refusals.counts()
    assert counts["no_hello"] == 1 and counts["too_much_before_hello"] == 1


async def test_the_right_token_attaches_and_the_refusals_are_visible(server):
    await raw_exchange(frames(ControlHello(token="y" * 43)))
    client = await ControlClient.connect(pid=os.getpid(), client="owner")
    try:
        assert await client.call("test.record") == "recorded"
        status = await client.call("control.status")
        assert [c["client"] for c in status["clients"]] == ["owner"]
        assert status["refused"] == {"bad_token": 1} and status["transport"] == "unix"
    finally:
        await client.close()


async def test_what_a_request_leaves_for_later_runs_after_its_answer_left(server):
    from host.calls import after_answer

    seen: list[bool] = []

    async def leaves(params, conn):
        # By the time the work runs, the writer has taken the answer from its queue.
        after_answer.later(lambda: seen.append(conn.endpoint.outbox.empty()))
        return "answered"

    server.register("test.leaves", leaves)
    client = await ControlClient.connect(pid=os.getpid(), client="owner")
    try:
        assert await client.call("test.leaves") == "answered"
        assert await client.call("test.record") == "recorded"  # the next request sees the work done
        assert seen == [True]
    finally:
        await client.close()


async def test_what_the_last_request_left_runs_when_the_server_stops(server, monkeypatch):
    from host.calls import after_answer

    monkeypatch.setattr(after_answer, "QUIET_S", 60.0)  # no quiet moment comes in time
    seen: list[str] = []

    async def leaves(params, conn):
        after_answer.later(lambda: seen.append("audited"))
        return "answered"

    server.register("test.leaves", leaves)
    client = await ControlClient.connect(pid=os.getpid(), client="owner")
    try:
        assert await client.call("test.leaves") == "answered"
        assert seen == []
        await server.stop()
        assert seen == ["audited"]
    finally:
        await client.close()


async def test_what_a_request_cut_off_by_the_stop_left_runs_before_the_server_is_gone(server, monkeypatch):
    from host.calls import after_answer

    monkeypatch.setattr(after_answer, "QUIET_S", 60.0)
    seen: list[str] = []
    started = asyncio.Event()

    async def leaves_then_waits(params, conn):
        after_answer.later(lambda: seen.append("audited"))
        started.set()
        try:
            await asyncio.Event().wait()  # still running when the host stops
        except asyncio.CancelledError:
            await asyncio.sleep(0.05)  # and it takes a moment to end
            raise

    server.register("test.leaves_then_waits", leaves_then_waits)
    client = await ControlClient.connect(pid=os.getpid(), client="owner")
    try:
        pending = asyncio.ensure_future(client.call("test.leaves_then_waits"))
        await asyncio.wait_for(started.wait(), 5)
        await server.stop()
        assert seen == ["audited"]
        await asyncio.gather(pending, return_exceptions=True)
    finally:
        await client.close()

def _connect_as(uid: int, path: str, token: str) -> str:
    """In a forked child that became `uid`: connect, say hello, report what happened."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: plain system calls only, then _exit
        outcome = "?"
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(5)
            try:
                sock.connect(path)
            except PermissionError:
                outcome = "permission denied"
            else:
                try:
                    sock.sendall(frames(ControlHello(token=token, client="other user")))
                    outcome = "closed" if sock.recv(65536) == b"" else "answered"
                except (BrokenPipeError, ConnectionResetError):
                    outcome = "closed"  # the server hung up before the hello was even sent
        except BaseException as exc:  # report anything, never return into pytest
            outcome = f"error {exc!r}"
        os.write(write_end, outcome.encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end, "rb") as answer:
        return answer.read().decode()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to act as another user")
async def test_another_user_is_kept_out_by_the_modes_and_then_by_the_peer_check(server, caplog):
    caplog.set_level(logging.WARNING, "tabwarden.control")
    found = entry()
    loop = asyncio.get_running_loop()
    # As installed: the 0700 folder and the 0600 socket keep the other user out.
    assert await loop.run_in_executor(None, _connect_as, NOBODY, str(found.socket_path), found.token()) \
        == "permission denied"
    # Loosen every mode on the way (as a careless admin might): the kernel still reports the
    # peer's uid, and the server refuses it even with the right token.
    for folder in (found.folder.parent.parent, found.folder.parent, found.folder):
        os.chmod(folder, 0o755)
    os.chmod(found.socket_path, 0o666)
    assert await loop.run_in_executor(None, _connect_as, NOBODY, str(found.socket_path), found.token()) == "closed"
    assert server.refusals.counts() == {"foreign_user": 1}
    assert f"control connection refused [foreign_user]: peer is uid {NOBODY}" in caplog.text


async def test_several_clients_at_once_each_with_its_own_topics(server):
    clients = [await ControlClient.connect(pid=os.getpid(), client=name) for name in ("a", "b", "c")]
    a, b, c = clients
    try:
        await a.subscribe("browser.*")
        await b.subscribe("alert")
        await c.subscribe("*")
        slow = asyncio.ensure_future(a.call("test.slow"))  # a slow request blocks nobody
        assert await b.call("test.record") == "recorded"
        assert await a.call("test.record") == "recorded"
        server.broadcast("browser.paused", {"tab": 1})
        server.broadcast("alert", {"code": "burst"})
        assert (await asyncio.wait_for(a.events.get(), 5)).topic == "browser.paused"
        assert (await asyncio.wait_for(b.events.get(), 5)).topic == "alert"  # never saw browser.paused
        assert [(await asyncio.wait_for(c.events.get(), 5)).topic for _ in range(2)] == ["browser.paused", "alert"]
        assert a.events.empty()
        server.release.set()
        assert await slow == "slow done"
    finally:
        for client in clients:
            await client.close()


async def test_a_stream_yields_its_topics_and_releases_them_when_left(server):
    client = await ControlClient.connect(pid=os.getpid(), client="streamer")
    try:
        seen = []

        async def consume() -> None:
            async for event in client.stream("turn.*"):
                seen.append((event.topic, event.data))
                if len(seen) == 2:
                    return

        task = asyncio.ensure_future(consume())
        while not any(conn.topics for conn in server.connections):
            await asyncio.sleep(0.01)
        for topic in ("turn.started", "approval.asked", "turn.ended"):
            server.broadcast(topic, topic)
        await asyncio.wait_for(task, 5)
        assert seen == [("turn.started", "turn.started"), ("turn.ended", "turn.ended")]
        status = await client.call("control.status")
        assert status["clients"][0]["topics"] == []
    finally:
        await client.close()


async def test_bad_subscriptions_get_structured_errors(server):
    client = await ControlClient.connect(pid=os.getpid(), client="picky")
    try:
        for params, message in (({"topics": "alert"}, "topics must be a list of strings"),
                                ({"topics": ["Alert!"]}, "not a topic: 'Alert!'"),
                                ({"topics": ["*"], "extra": 1}, "unknown parameter 'extra'")):
            with pytest.raises(RequestError) as caught:
                await client.request("host.subscribe", params)
            assert caught.value.code == "invalid_message" and message in caught.value.info.message
    finally:
        await client.close()


async def test_ten_thousand_pipelined_requests_each_get_a_result_or_a_refusal(server):
    from protocol.messages import Failure, Result
    from tests.support.hosts import pipelined_answers

    found = entry()
    total = 10_000
    answered = await pipelined_answers(str(found.socket_path), found.token(), "test.record", total, 120)
    assert sorted(answered) == list(range(1, total + 1))  # none went unanswered
    refused = [m for m in answered.values() if isinstance(m, Failure)]
    assert all(m.error.code == "overloaded" and m.error.retryable and m.error.details["retryAfterMs"] > 0
               for m in refused)
    ran = [m for m in answered.values() if isinstance(m, Result)]
    assert len(ran) == len(server.calls) > 0
    assert all(msgspec.json.decode(bytes(m.value)) == "recorded" for m in ran)
    # The connection still serves: a polite client gets every request through.
    client = await ControlClient.connect(pid=os.getpid(), client="after")
    try:
        assert await client.call("test.record") == "recorded"
    finally:
        await client.close()


async def test_a_client_retries_what_the_host_refused_as_overloaded_until_all_ran(server):
    client = await ControlClient.connect(pid=os.getpid(), client="burst")
    try:
        results = await asyncio.gather(*(client.call("test.record", timeout=60) for _ in range(3000)))
    finally:
        await client.close()
    assert results == ["recorded"] * 3000 and len(server.calls) == 3000


def test_the_short_socket_folder_is_never_one_someone_else_made(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    fixed = tmp_path / f"tw-{os.getuid()}"
    assert discovery.short_socket_dir() == fixed and (fixed.stat().st_mode & 0o777) == 0o700
    # Made first by another user (root can show it: chown), left open, or a link: a fresh folder.
    if os.geteuid() == 0:
        os.chown(fixed, NOBODY, NOBODY)
        assert discovery.short_socket_dir() != fixed
    elsewhere = Path(tempfile.mkdtemp(dir=tmp_path))
    fixed.rmdir()
    fixed.mkdir(mode=0o777)
    os.chmod(fixed, 0o777)
    assert discovery.short_socket_dir() != fixed
    fixed.rmdir()
    fixed.symlink_to(elsewhere)
    assert discovery.short_socket_dir() not in (fixed, elsewhere)
