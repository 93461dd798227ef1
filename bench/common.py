"""Small helpers shared by the benchmarks: timing, medians, percentiles, table printing."""

from __future__ import annotations

import re
import statistics
import time
from typing import Callable, Sequence


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples)


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(samples)
    index = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def repeat(fn: Callable[[], object], n: int) -> list[float]:
    """Wall-clock seconds of `n` calls of `fn`."""
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def median_ns(fn: Callable[[], object], samples: int) -> float:
    """Median nanoseconds of `samples` calls of `fn`."""
    timer = time.perf_counter_ns
    times = []
    for _ in range(samples):
        start = timer()
        fn()
        times.append(timer() - start)
    return statistics.median(times)


def checks_ns(cases: Sequence[tuple[object, object]], rounds: int) -> list[int]:
    """Nanoseconds of each gatekeeper `check(call, ctx)` over `rounds` passes of `cases`, after one
    pass that warms the caches the way a running host has them warm."""
    from host.gatekeeper.decision import check

    for call, ctx in cases:
        check(call, ctx)
    timer = time.perf_counter_ns
    times = []
    for _ in range(rounds):
        for call, ctx in cases:
            start = timer()
            check(call, ctx)
            times.append(timer() - start)
    return times


def paired(a: Callable[[], object], b: Callable[[], object], n: int) -> tuple[list[float], list[float]]:
    """Seconds of `n` calls of `a` and of `b`, interleaved so both see the same machine state."""
    out_a, out_b = [], []
    for _ in range(n):
        for fn, out in ((a, out_a), (b, out_b)):
            started = time.perf_counter()
            fn()
            out.append(time.perf_counter() - started)
    return out_a, out_b


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain right-aligned text table."""
    cells = [list(map(str, headers))] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in cells)


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value < 100 else f"{value:.1f}"
    return str(value)


def ref_on_line(text: str, part: str, ref: "re.Pattern[str]") -> str:
    """The ref (`ref`'s first group) on the first line of a snapshot `text` containing `part`."""
    line = next(line for line in text.split("\n") if part in line)
    found = ref.search(line)
    assert found, line
    return found.group(1)
