"""An asyncio loop in a background thread, so the console can read lines in the main thread
(where Ctrl-C arrives as KeyboardInterrupt) while host events keep flowing."""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import threading
from typing import Any, Coroutine

CANCEL_GRACE_S = 5.0
MAIN_THREAD_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


class LoopThread:
    """Owns one event loop running in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._main, name="tw-repl-loop", daemon=True)
        self._current: asyncio.Task[Any] | None = None

    def _main(self) -> None:
        # A process-wide signal goes to any thread that does not block it. Ctrl-C (and the
        # termination signals `launch` turns into an exit) must reach the main thread, which
        # may be waiting in readline; here it would only set a flag nobody looks at.
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, MAIN_THREAD_SIGNALS)
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def start(self) -> None:
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run `coro` on the loop and wait for its result. Ctrl-C cancels it, waits (briefly)
        for it to wind down, then raises KeyboardInterrupt."""
        future = asyncio.run_coroutine_threadsafe(self._tracked(coro), self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            task = self._current
            if task is not None:
                self.loop.call_soon_threadsafe(task.cancel)
            try:
                future.result(timeout=CANCEL_GRACE_S)
            except (concurrent.futures.CancelledError, concurrent.futures.TimeoutError, Exception):
                pass
            raise

    async def _tracked(self, coro: Coroutine[Any, Any, Any]) -> Any:
        self._current = asyncio.current_task()
        try:
            return await coro
        finally:
            self._current = None

    def call_soon(self, callback, *args: Any) -> None:
        """Schedule a plain callback on the loop from any thread."""
        self.loop.call_soon_threadsafe(callback, *args)

    def stop(self) -> None:
        """Cancel what is left, stop the loop and join its thread."""
        async def cancel_rest() -> None:
            current = asyncio.current_task()
            rest = [t for t in asyncio.all_tasks() if t is not current]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(cancel_rest(), self.loop).result(timeout=CANCEL_GRACE_S)
            except Exception:
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(CANCEL_GRACE_S)
        if not self.loop.is_running():
            self.loop.close()
