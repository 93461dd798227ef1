"""Benchmarks: each module prints a table of medians and ratios against an anchor measured in
the same run (never timed assertions in tests)."""
