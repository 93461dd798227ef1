"""`Client`: someone who sends ops and receives events (an extension page or a control
connection), with the threads whose events it receives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Client:
    """Someone who sends ops and receives events: an extension page or a control connection."""

    def __init__(self, send: Callable[[Any], None], *, key: str | None = None, everything: bool = False,
                 name: str = ""):
        self.key = key  # the command-identity key; None until `initialize`
        self.send = send
        self.everything = everything  # control clients see every thread's events
        self.name = name
        self.subscriptions: set[str] = set()

    def subscribe(self, thread_id: str) -> None:
        """Receive the events of `thread_id` from now on."""
        self.subscriptions.add(thread_id)

    def wants(self, thread_id: str | None) -> bool:
        """Whether an event of `thread_id` (None: for everyone) goes to this client."""
        return thread_id is None or self.everything or thread_id in self.subscriptions
