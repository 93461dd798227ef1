"""Helpers for talking to a host started by a real browser."""

from __future__ import annotations

import asyncio
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from host.control.client import ControlClient
from host.control.discovery import running_hosts
from host.transport.errors import RequestError
from tests.support.waiting import until


@contextmanager
def tabwarden_home(path: Path):
    """Point this process at a run's Tabwarden home (for discovery and the control client)."""
    old = os.environ.get("TABWARDEN_HOME")
    os.environ["TABWARDEN_HOME"] = str(path)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TABWARDEN_HOME", None)
        else:
            os.environ["TABWARDEN_HOME"] = old


async def attach(timeout: float = 20.0, client: str = "test") -> ControlClient:
    """Wait for a host to publish its control endpoint and finish its handshake; attach."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: Exception | None = None

    async def attached() -> ControlClient | None:
        nonlocal last
        if not running_hosts():
            _raise_if_host_refused_the_extension()
            return None
        try:
            control = await ControlClient.connect(client=client)
            await control.call("host.wait_ready", timeout=max(1.0, deadline - loop.time()))
            return control
        except (RequestError, OSError) as exc:
            last = exc  # not listening yet, or still handshaking: try again
            return None

    return await until(attached, timeout, lambda: f"a host to become ready (last error: {last})", interval=0.1)


def _raise_if_host_refused_the_extension() -> None:
    """A host that refused its extension's handshake will not come back for this run: say so now
    rather than after the whole wait (a stale generated protocol would cost every browser test
    its full timeout)."""
    from host.paths import dirs

    try:
        text = (dirs().log / "host.log").read_text(errors="replace")[-4000:]
    except OSError:
        return
    refused = [line for line in text.splitlines() if "handshake refused" in line]
    if refused:
        raise AssertionError(f"the host refused the extension: {refused[-1]} (run `make generate`?)")


def control_call(home: Path, method: str, **params: object) -> object:
    """One control-socket call to the host under `home`, from synchronous code (made on a thread of
    its own, since a sync Playwright test owns the calling thread's event loop)."""
    from concurrent.futures import ThreadPoolExecutor

    async def call() -> object:
        with tabwarden_home(home):
            client = await attach(timeout=30)
        try:
            return await client.call(method, **params)
        finally:
            await client.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, call()).result(timeout=90)


def write_settings(home: Path, model_url: str, **extra: Any) -> None:
    """engine.json pointing the host at a fake model server."""
    config = home / "config"
    config.mkdir(parents=True, exist_ok=True)
    data = {"providers": {"fake": {"kind": "openai", "baseUrl": model_url, "model": "m-1", "maxRetries": 0}}, **extra}
    (config / "engine.json").write_text(json.dumps(data))


async def pipelined_answers(socket_path: str, token: str, method: str, total: int, within: float) -> dict[int, Any]:
    """Say hello on a fresh control connection, wait for the welcome, then send `total` requests
    of `method` without waiting; return every Result or Failure by request id (the host closing
    the link before all are answered fails)."""
    from protocol.control import ControlHello, ControlRequest, ControlServerMessage
    from protocol.framing import FrameEncoder, FrameSplitter, MessageDecoder
    from protocol.limits import BROWSER_LIMITS
    from protocol.messages import Failure, Result

    reader, writer = await asyncio.open_unix_connection(socket_path)
    encoder, splitter = FrameEncoder(), FrameSplitter()
    decoder = MessageDecoder(ControlServerMessage, BROWSER_LIMITS)
    writer.write(b"".join(encoder.encode(ControlHello(token=token, client="flood"))))
    assert splitter.feed(await asyncio.wait_for(reader.read(1 << 16), 10)), "no welcome"
    writer.write(b"".join(b"".join(encoder.encode(ControlRequest(id=i, method=method))) for i in range(1, total + 1)))
    drained = asyncio.ensure_future(writer.drain())
    answered: dict[int, Any] = {}

    async def read_all() -> None:
        while len(answered) < total:
            data = await reader.read(1 << 20)
            assert data, f"the host closed the link after {len(answered)} answers"
            for payload in splitter.feed(data):
                message = decoder.decode(payload)
                if isinstance(message, (Result, Failure)):
                    answered[message.id] = message

    try:
        await asyncio.wait_for(read_all(), within)
        await drained
    finally:
        writer.close()
    return answered
