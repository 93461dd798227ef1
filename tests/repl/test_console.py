"""The console without a terminal: scripted lines in, printed text out."""

from __future__ import annotations

import asyncio

import pytest

from host.repl.console import AsyncConsole
from host.repl.errors import UsageError
from host.repl.loop_thread import LoopThread
from host.repl.style import Style
from host.transport.errors import RequestError
from protocol.errors import ErrorInfo
from tests.repl.scripted_input import scripted


@pytest.fixture
def run_lines(capsys):
    runner = LoopThread()
    runner.start()

    def run(*lines: str, namespace: dict | None = None) -> str:
        ns = {"__name__": "__console__", "asyncio": asyncio, **(namespace or {})}
        AsyncConsole(ns, runner, Style(False), read_line=scripted(lines)).interact()
        return capsys.readouterr().out

    yield run
    runner.stop()


def test_top_level_await_runs_on_the_background_loop(run_lines):
    out = run_lines("import threading", "await asyncio.sleep(0, result=threading.current_thread().name)",
                    "threading.current_thread().name")
    assert "'tw-repl-loop'" in out and "'MainThread'" in out


def test_statements_span_lines_and_keep_their_names(run_lines):
    out = run_lines("async def twice(x):", "    return 2 * x", "", "y = await twice(21)", "y")
    assert out.strip().endswith("42")


def test_a_bare_coroutine_is_awaited_but_a_stored_one_is_reported(run_lines):
    async def answer():
        return "answered"

    out = run_lines("answer()", "pending = answer()", namespace={"answer": answer})
    assert "'answered'" in out
    assert "note: `pending` holds a coroutine that has not run; write `pending = await ...`" in out


def test_errors_are_short_and_the_console_goes_on(run_lines):
    async def refuse():
        raise RequestError(ErrorInfo(code="denied", message="no", details={"rule": "r"}))

    def misuse():
        raise UsageError("pass tab=N")

    out = run_lines("await refuse()", "misuse()", "1/0", "def broken(:", "'after'",
                    namespace={"refuse": refuse, "misuse": misuse})
    assert "error denied: no  {'rule': 'r'}" in out
    assert "usage: pass tab=N" in out
    assert 'File "<tw>", line 1, in <module>' in out and "ZeroDivisionError: division by zero" in out
    assert "loop_thread.py" not in out and "console.py" not in out  # plumbing frames are left out
    assert "SyntaxError" in out and "'after'" in out
