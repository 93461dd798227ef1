"""The caps that keep a hostile or careless skill from exhausting memory, disk or the context."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SkillLimits:
    """Sizes are in bytes; `max_ratio` is uncompressed/compressed for one zip member, checked only
    for members over 64 KiB (small files compress absurdly well without being bombs)."""

    max_body_bytes: int = 64 * 1024
    max_skill_md_bytes: int = 80 * 1024
    max_front_matter_bytes: int = 16 * 1024
    max_total_bytes: int = 8 * 1024 * 1024
    max_files: int = 200
    max_file_bytes: int = 2 * 1024 * 1024
    max_resource_bytes: int = 128 * 1024
    max_ratio: int = 100
    max_depth: int = 8


DEFAULT_LIMITS = SkillLimits()

# A plugin holds several skills and its own files: room for them together.
PLUGIN_LIMITS = SkillLimits(max_total_bytes=16 * 1024 * 1024, max_files=600)
