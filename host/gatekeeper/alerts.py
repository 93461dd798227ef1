"""Denial-burst monitor: many denials in one thread in a short time is the classic sign of a
prompt injection steering the model. The monitor reports an `Alert`; the engine pauses the thread
(through the `on_alert` callback) and shows the alert to the user."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import msgspec

DEFAULT_THRESHOLD = 5
DEFAULT_WINDOW_S = 60.0


class Alert(msgspec.Struct, frozen=True):
    """`count` denials in `thread_id` within `window_s` seconds, the last at `at` (epoch s)."""

    kind: str
    thread_id: str
    count: int
    window_s: float
    at: float
    codes: tuple[str, ...]
    message: str


class DenialBurstMonitor:
    """Counts denials per thread in a sliding window and raises one alert per burst."""

    def __init__(self, *, threshold: int = DEFAULT_THRESHOLD, window_s: float = DEFAULT_WINDOW_S,
                 clock: Callable[[], float] = time.time,
                 on_alert: Callable[[Alert], None] | None = None) -> None:
        if threshold < 1 or window_s <= 0:
            raise ValueError("threshold must be >= 1 and window_s > 0")
        self.threshold = threshold
        self.window_s = window_s
        self._clock = clock
        self._on_alert = on_alert
        self._recent: dict[str, deque[tuple[float, str]]] = {}
        self._lock = threading.Lock()

    def note_denial(self, thread_id: str, code: str, at: float | None = None) -> Alert | None:
        """Record one denial; return (and report to `on_alert`) an alert when it completes a burst.

        After an alert the thread's window starts empty, so one burst raises one alert."""
        now = self._clock() if at is None else at
        with self._lock:
            recent = self._recent.setdefault(thread_id, deque())
            recent.append((now, code))
            while recent and now - recent[0][0] > self.window_s:
                recent.popleft()
            if len(recent) < self.threshold:
                return None
            codes = tuple(c for _, c in recent)
            recent.clear()
        alert = Alert("denial_burst", thread_id, len(codes), self.window_s, now, codes,
                      f"{len(codes)} actions were denied within {self.window_s:g} s in this thread; "
                      "it is paused because this often means injected instructions")
        if self._on_alert is not None:
            self._on_alert(alert)
        return alert

    def reset(self, thread_id: str) -> None:
        """Forget a thread's recent denials (after the user resumed it)."""
        with self._lock:
            self._recent.pop(thread_id, None)
