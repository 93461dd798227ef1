"""Waiting for something to become true: one polling loop for synchronous code and one for
coroutines, each failing with a message that names what was awaited.

`what` is a short text ("the host to exit") or a function returning one; a function is called
only on failure, so the message can show what was seen instead of the awaited thing.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, Awaitable, Callable, TypeVar, Union

T = TypeVar("T")
Description = Union[str, Callable[[], Union[str, Awaitable[str]]]]


def wait_until(predicate: Callable[[], T], timeout: float, what: Description, *, interval: float = 0.05) -> T:
    """Call `predicate` until it returns a truthy value and return that value; raise an
    AssertionError naming `what` once `timeout` seconds have passed. Blocks the thread."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            description = what() if callable(what) else what
            raise AssertionError(_timed_out(timeout, description))
        time.sleep(interval)


async def until(predicate: Callable[[], Any], timeout: float, what: Description, *, interval: float = 0.01) -> Any:
    """Call `predicate` (a plain function or a coroutine function) until it gives a truthy
    value and return that value; raise an AssertionError naming `what` once `timeout` seconds
    have passed. Sleeps on the event loop between calls, so other tasks keep running."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            description = what() if callable(what) else what
            if inspect.isawaitable(description):
                description = await description
            raise AssertionError(_timed_out(timeout, description))
        await asyncio.sleep(interval)


def _timed_out(timeout: float, description: Any) -> str:
    return f"timed out after {timeout:g} s waiting for {description}"
