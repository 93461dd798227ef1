"""The foundation in a real browser: Chromium starts our host through the registered
manifest, the handshake matches, large host→extension payloads arrive whole through
chunking, the content-script path answers, and closing the browser ends the host with 0."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from protocol.constants import MAX_HOST_FRAME
from protocol.schema import schema_hash
from tests.support.browser_tools import running_browser
from tests.support.hosts import attach
from tests.support.pages import PageServer
from tests.support.waiting import until, wait_until

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    with PageServer() as pages, running_browser(tmp_path_factory.mktemp("native-link"), ["http://127.0.0.1/*"],
                                                start_url=pages.url("hello.html")) as browser:
        yield browser


def test_install_wrote_a_manifest_for_the_profile(run):
    manifest = run.profile / "NativeMessagingHosts" / "com.tabwarden.host.json"
    assert manifest.is_file()
    doctor = run.cli("doctor", check=False)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "host answers ping" in doctor.stdout


async def test_handshake_completes_with_matching_schema(run):
    control = await attach()
    try:
        info = await control.call("host.info")
        assert info["connected"] is True
        assert len(info["browserSessionId"]) >= 8
        assert info["extensionVersion"] == "0.1.0"
        # The extension sent the hash from generated/protocol.js; the host accepted it, so the
        # two match. Make the equality explicit too.
        generated = (Path(__file__).resolve().parents[2] / "extension/generated/protocol.js").read_text()
        assert f'SCHEMA_HASH = "{schema_hash()}"' in generated
        log = (run.tw_home / "log" / "host.log").read_text()
        assert "handshake complete" in log
    finally:
        await control.close()


async def test_three_mib_payload_arrives_whole_through_chunks(run):
    control = await attach()
    try:
        size = 3 * 1024 * 1024
        assert size > MAX_HOST_FRAME
        result = await control.call("diag.payload", size=size)
        assert result["match"] is True, result
        assert result["received"]["length"] == size
    finally:
        await control.call("host.info")
        await control.close()


async def test_round_trip_through_the_content_script(run):
    control = await attach()
    try:
        # A start tab the browser held before the extension loaded is let go by the extension.
        seen: list = []

        async def start_page() -> list:
            seen[:] = await control.call("browser.tabs")
            return [t for t in seen if t.get("url", "").endswith("/hello.html")]

        fixture = await until(start_page, 10, lambda: f"the start page to load: {seen}")
        result = await control.call("diag.roundtrip", n=5, tab_id=fixture[0]["id"])
        assert len(result["samples"]) == 5
        worker = await control.call("diag.roundtrip", n=5)
        assert len(worker["samples"]) == 5
    finally:
        await control.close()


async def test_a_second_control_client_with_a_wrong_token_is_refused(run):
    control = await attach()
    try:
        from host.control.discovery import running_hosts
        import asyncio
        from protocol.control import ControlHello
        from protocol.framing import FrameEncoder

        entry = running_hosts()[0]
        reader, writer = await asyncio.open_unix_connection(str(entry.socket_path))
        for frame in FrameEncoder().encode(ControlHello(token="x" * 32, client="intruder")):
            writer.write(frame)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), 5)
        assert data == b""  # closed without a welcome
        writer.close()
        assert (await control.call("host.info"))["connected"] is True  # the real client is unaffected
    finally:
        await control.close()


async def test_closing_the_browser_ends_the_host_with_exit_code_0(run):
    control = await attach()
    info = await control.call("host.info")
    await control.close()
    host_pid = info["pid"]
    run.stop()
    wait_until(lambda: not Path(f"/proc/{host_pid}").exists(), 10, f"host {host_pid} to exit")
    log = (run.tw_home / "log" / "host.log").read_text()
    assert f"{host_pid} INFO tabwarden.host: host exits with 0" in log
    assert not run.host_pids()
    _ = (os, time)
