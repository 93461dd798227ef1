"""Benchmarks: each prints medians and ratios against an anchor measured in the same run."""
