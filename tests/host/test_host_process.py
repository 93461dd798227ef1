"""The host as a process, driven the way Chrome drives it: argv origin, stdio frames, EOF."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from install.extension_id import default_extension_id
from protocol.framing import FrameSplitter, browser_encoder, extension_decoder
from protocol.messages import Fatal, Hello, Ping, Pong, ProtocolErrorReport, Welcome
from protocol.schema import schema_hash

from host.nativehost import exit_codes

ROOT = Path(__file__).resolve().parents[2]
ORIGIN = f"chrome-extension://{default_extension_id()}/"


def hello(**overrides) -> Hello:
    fields = dict(protocol="tabwarden/native-v1", protocol_version=1, schema_hash=schema_hash(),
                  extension_version="0.1.0", browser_session_id="session-1234")
    fields.update(overrides)
    return Hello(**fields)


class HostProc:
    def __init__(self, home: Path, *args: str):
        env = dict(os.environ, TABWARDEN_HOME=str(home))
        self.home = home
        self.proc = subprocess.Popen([sys.executable, "-m", "host", "host", *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        self.splitter, self.decoder, self.encoder = FrameSplitter(), extension_decoder(), browser_encoder()
        self.pending: list = []

    def send(self, message) -> None:
        for frame in self.encoder.encode(message):
            self.proc.stdin.write(frame)
        self.proc.stdin.flush()

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self, timeout: float = 5.0):
        deadline = time.monotonic() + timeout
        while not self.pending:
            assert time.monotonic() < deadline, "no frame from the host"
            data = self.proc.stdout.read1(65536)
            if not data:
                raise EOFError
            for payload in self.splitter.feed(data):
                message = self.decoder.decode(payload)
                if message is not None:
                    self.pending.append(message)
        return self.pending.pop(0)

    def finish(self, timeout: float = 10.0) -> int:
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(timeout)

    def log(self) -> str:
        return (self.home / "log" / "host.log").read_text()


@pytest.fixture
def host_home(tmp_path):
    return tmp_path / "tw"


def test_refuses_an_unregistered_caller(host_home):
    host = HostProc(host_home, "chrome-extension://" + "a" * 32 + "/")
    code = host.finish()
    assert code == exit_codes.FORBIDDEN_CALLER
    assert host.proc.stdout.read() == b""
    assert "is not a registered Tabwarden extension" in host.log()
    assert "refusing to start" in host.proc.stderr.read().decode()


def test_refuses_a_missing_or_malformed_origin(host_home):
    for args in ([], ["chrome-extension://XYZ/"], ["https://evil.example/"]):
        host = HostProc(host_home, *args)
        assert host.finish() == exit_codes.FORBIDDEN_CALLER


def test_accepts_the_windows_parent_window_argument(host_home):
    host = HostProc(host_home, ORIGIN, "--parent-window=0")
    host.send(Ping(id=3))
    assert host.receive() == Pong(id=3)
    assert host.finish() == exit_codes.OK


def test_handshake_then_eof_exits_zero(host_home):
    host = HostProc(host_home, ORIGIN)
    host.send(Ping(id=1))
    assert host.receive() == Pong(id=1)  # a ping is answered even before hello (doctor relies on it)
    host.send(hello())
    welcome = host.receive()
    assert isinstance(welcome, Welcome) and welcome.schema_hash == schema_hash()
    assert welcome.host_pid == host.proc.pid
    assert host.finish() == exit_codes.OK
    log = host.log()
    assert "handshake complete" in log and "host exits with 0" in log


def test_schema_mismatch_gets_fatal_and_exit_code(host_home):
    host = HostProc(host_home, ORIGIN)
    host.send(hello(schema_hash="0" * 64))
    fatal = host.receive()
    assert isinstance(fatal, Fatal) and fatal.error.code == "protocol_mismatch"
    assert fatal.schema_hash == schema_hash()
    assert host.finish() == exit_codes.PROTOCOL_MISMATCH


def test_bad_frames_are_reported_and_the_host_survives(host_home):
    host = HostProc(host_home, ORIGIN)
    host.send(hello())
    assert isinstance(host.receive(), Welcome)
    host.send_raw(struct.pack("<I", 4) + b"nope")
    host.send_raw(struct.pack("<I", 28) + b'{"type":"warp","id":12,"x":1}'[:28])
    reports = [host.receive(), host.receive()]
    assert all(isinstance(r, ProtocolErrorReport) for r in reports)
    assert reports[0].error.code == "bad_frame"
    host.send(Ping(id=5))
    assert host.receive() == Pong(id=5)
    assert host.finish() == exit_codes.OK


def test_events_before_hello_are_refused_as_not_ready(host_home):
    from protocol.messages import BrowserEvent

    host = HostProc(host_home, ORIGIN)
    host.send(BrowserEvent(name="tabs.updated"))
    report = host.receive()
    assert isinstance(report, ProtocolErrorReport) and report.error.code == "not_ready"
    assert host.finish() == exit_codes.OK


def test_corrupt_length_prefix_closes_cleanly(host_home):
    host = HostProc(host_home, ORIGIN)
    host.send(hello())
    assert isinstance(host.receive(), Welcome)
    host.send_raw(struct.pack("<I", 0x7FFFFFFF) + b"{}")
    assert host.proc.wait(10) == exit_codes.LINK_BROKEN
    assert "stream is out of sync" in host.log()


def test_truncated_frame_at_eof_exits_cleanly(host_home):
    host = HostProc(host_home, ORIGIN)
    host.send_raw(struct.pack("<I", 100) + b'{"type":')
    assert host.finish() == exit_codes.OK
    assert "end of input inside a frame" in host.log()


def test_stray_prints_never_reach_the_frame_stream():
    code = (
        "import sys, os\n"
        "from host.transport.stdio import claim_stdout\n"
        "out = claim_stdout()\n"
        "print('stray print')\n"
        "os.write(1, b'stray fd write')\n"
        "out.write(b'FRAME')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=ROOT, timeout=30)
    assert done.stdout == b"FRAME"
    assert b"stray print" in done.stderr and b"stray fd write" in done.stderr


def test_sigterm_shuts_down_in_order(host_home):
    import signal

    host = HostProc(host_home, ORIGIN)
    host.send(hello())
    assert isinstance(host.receive(), Welcome)
    host.proc.send_signal(signal.SIGTERM)
    assert host.proc.wait(10) == exit_codes.OK
    assert "signal SIGTERM" in host.log()
    host.proc.stdin.close()
