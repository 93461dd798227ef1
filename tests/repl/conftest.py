"""One real host per module (fed by a scripted browser on its stdin) and REPLs on a pty."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.repl.scripted_input import scripted
from tests.support.hosts import tabwarden_home
from tests.support.pty_session import PtySession
from tests.support.stdio_host import ROOT, StdioHost


@pytest.fixture(scope="module")
def tw_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("repl") / "tw"


@pytest.fixture(scope="module")
def stdio_host(tw_home):
    with tabwarden_home(tw_home):
        host = StdioHost(tw_home)
        try:
            host.wait_published()
            yield host
        finally:
            host.stop()


def repl_env(tw_home: Path) -> dict[str, str]:
    """A plain terminal (no colours) and the run's Tabwarden home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(TABWARDEN_HOME=str(tw_home), NO_COLOR="1", TERM="dumb", HOME=str(tw_home.parent))
    return env


@pytest.fixture
def repl(stdio_host, tw_home):
    """A `tabwarden repl --pid <host>` on a pseudo-terminal, at a prompt that reads what we type."""
    session = PtySession([sys.executable, "-m", "host", "repl", "--pid", str(stdio_host.pid)], repl_env(tw_home), ROOT)
    try:
        session.expect("tw> ")
        session.settle("tw> ")
        yield session
    finally:
        session.close()


@pytest.fixture
def tw_console(stdio_host, capsys):
    """The REPL's console and `tw` in this process, attached to the module's host over its control
    socket: `run(*lines)` types the lines (then Ctrl-D) and returns what was printed; `run.call`
    calls a control method directly on the same connection."""
    from host.control.client import ControlClient
    from host.repl.console import AsyncConsole
    from host.repl.loop_thread import LoopThread
    from host.repl.style import Style
    from host.repl.tw import Tabwarden

    runner = LoopThread()
    runner.start()
    client = runner.run(ControlClient.connect(pid=stdio_host.pid, client="repl-test"))
    tw = Tabwarden(client, Style(False))

    def run(*lines: str) -> str:
        capsys.readouterr()
        AsyncConsole({"__name__": "__console__", "tw": tw}, runner, Style(False), read_line=scripted(lines)).interact()
        return capsys.readouterr().out

    run.tw = tw
    run.call = lambda method, **params: runner.run(client.call(method, **params))  # raw, around the REPL
    try:
        yield run
    finally:
        runner.run(client.close())
        runner.stop()
