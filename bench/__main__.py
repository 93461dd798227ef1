"""`python -m bench` runs every benchmark module in bench/ (each prints its own table)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import bench


def main(names: list[str]) -> int:
    modules = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    chosen = [m for m in modules if not names or any(n in m for n in names)]
    failed = []
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        try:
            sys.argv = [f"python -m bench.{name}"]  # a benchmark's own options take their defaults
            importlib.import_module(f"bench.{name}").main()
        except Exception as exc:  # one broken benchmark must not hide the others' figures
            failed.append(name)
            print(f"{name} failed: {type(exc).__name__}: {exc}")
        print(f"({time.perf_counter() - started:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
