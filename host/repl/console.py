"""A Python console whose statements may `await` at top level.

Lines are read in the main thread; a complete statement is compiled with top-level await
allowed. Code that awaits runs as a coroutine on the background loop (`LoopThread`), other code
runs right here. An expression whose value is a coroutine is awaited for you, so `tw.tabs()`
and `await tw.tabs()` show the same thing. Ctrl-C at the prompt clears the line; during a
statement it cancels it. Errors from the host print as one line with their code.
"""

from __future__ import annotations

import ast
import builtins
import codeop
import inspect
import sys
import traceback
from typing import Any, Callable

from host.repl.loop_thread import LoopThread
from host.repl.style import Style

PS1 = "tw> "
PS2 = "... "
FILENAME = "<tw>"
# Frames from these files are plumbing, not the user's code: left out of tracebacks.
_PLUMBING = ("host/repl/console.py", "host/repl/loop_thread.py", "/asyncio/", "/concurrent/", "/threading.py")


class AsyncConsole:
    """Read, compile (top-level await allowed), run, show."""

    def __init__(self, namespace: dict[str, Any], runner: LoopThread, style: Style,
                 read_line: Callable[[str], str] = input):
        self.namespace = namespace
        self.runner = runner
        self.style = style
        self._read_line = read_line
        self._compile = codeop.CommandCompiler()
        self._compile.compiler.flags |= ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        self._awaiting: list[Any] = []

    def interact(self, banner: str = "") -> None:
        """Run until end of input (Ctrl-D)."""
        if banner:
            print(banner, flush=True)
        previous_hook = sys.displayhook
        sys.displayhook = self.display
        try:
            self._loop()
        finally:
            sys.displayhook = previous_hook

    def _loop(self) -> None:
        lines: list[str] = []
        while True:
            try:
                lines = self._step(lines)
            except EOFError:
                print(flush=True)
                return
            except KeyboardInterrupt:  # at the prompt, or between reading and running
                print("\nKeyboardInterrupt", flush=True)
                lines = []

    def _step(self, lines: list[str]) -> list[str]:
        """Read one line; run the statement once it is complete. Returns the unfinished lines."""
        lines = [*lines, self._read_line(PS2 if lines else PS1)]
        try:
            code = self._compile("\n".join(lines), FILENAME, "single")
        except (SyntaxError, OverflowError, ValueError) as exc:
            self._show_error(exc, with_traceback=False)
            return []
        if code is None:
            return lines  # an unfinished statement: read more
        self.run(code)
        return []

    def run(self, code: Any) -> None:
        """Run one compiled statement and show its result or its error."""
        before = self._coroutines()
        try:
            if code.co_flags & inspect.CO_COROUTINE:
                self.runner.run(eval(code, self.namespace))
            else:
                exec(code, self.namespace)
            while self._awaiting:
                self.display(self.runner.run(self._awaiting.pop(0)))
        except SystemExit:
            raise
        except KeyboardInterrupt:
            print("cancelled", flush=True)
        except BaseException as exc:  # the user's code may raise anything
            self._show_error(exc)
        finally:
            for leftover in self._awaiting:
                leftover.close()
            self._awaiting.clear()
            self._warn_stored_coroutines(before)

    def _coroutines(self) -> dict[str, int]:
        return {name: id(value) for name, value in self.namespace.items() if inspect.iscoroutine(value)}

    def _warn_stored_coroutines(self, before: dict[str, int]) -> None:
        # `t = tw.run(...)` stores an unstarted coroutine: say so instead of failing later, and
        # close it (it will never run) so Python does not warn again at exit.
        for name, ident in self._coroutines().items():
            if before.get(name) != ident:
                print(f"note: `{name}` holds a coroutine that has not run; write `{name} = await ...`", flush=True)
                self.namespace[name].close()

    def display(self, value: Any) -> None:
        """sys.displayhook while the console runs: coroutines are awaited, views print pretty."""
        if value is None:
            return
        if inspect.iscoroutine(value):
            self._awaiting.append(value)
            return
        builtins._ = value  # type: ignore[attr-defined]
        self.namespace["_"] = value
        print(repr(value), flush=True)

    def _show_error(self, exc: BaseException | None, with_traceback: bool = True) -> None:
        from host.repl.errors import UsageError
        from host.transport.errors import RequestError

        if exc is None:
            return
        if isinstance(exc, UsageError):
            print(f"{self.style('usage', 'yellow', 'bold')}: {exc}", flush=True)
            return
        if isinstance(exc, RequestError):
            info = exc.info
            line = f"{self.style('error', 'red', 'bold')} {info.code}: {info.message}"
            if info.details:
                line += f"  {info.details}"
            print(line, flush=True)
            return
        frames = [] if not with_traceback else [
            f for f in traceback.extract_tb(exc.__traceback__) if not any(p in f.filename.replace("\\", "/") for p in _PLUMBING)
        ]
        text = "".join(traceback.format_list(frames)) if frames else ""
        if text:
            text = "Traceback (most recent call last):\n" + text
        text += "".join(traceback.format_exception_only(type(exc), exc))
        print(text.rstrip("\n"), file=sys.stdout, flush=True)
