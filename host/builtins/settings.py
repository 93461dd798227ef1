"""Limits of the built-in tools, from `<config dir>/builtins.json` (all optional):

    {
      "fetchTimeoutSeconds": 20,        "fetchMaxBytes": 2097152,    "fetchWindowChars": 20000,
      "memoryMaxEntries": 200,          "memoryMaxValueChars": 2000,
      "artifactMaxBytes": 1048576,      "downloadWaitSeconds": 60
    }

A file that is missing means the defaults; a file that does not validate is refused with the
path of each bad field, and the tools then run with the defaults (the limits only ever shrink
what a tool may do, so the defaults are the safe choice). Read with pydantic, lazily.
"""

from __future__ import annotations

import functools
import json
import logging
from pathlib import Path
from typing import Any

from host.config_files import ConfigFileError

log = logging.getLogger("tabwarden.builtins")

FILE_NAME = "builtins.json"


@functools.cache
def _model():
    from pydantic import BaseModel, ConfigDict, Field
    from pydantic.alias_generators import to_camel

    class BuiltinSettings(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)

        fetch_timeout_seconds: float = Field(default=20.0, gt=0, le=120)
        fetch_max_bytes: int = Field(default=2 * 1024 * 1024, ge=1024, le=16 * 1024 * 1024)
        fetch_window_chars: int = Field(default=20_000, ge=1000, le=100_000)
        memory_max_entries: int = Field(default=200, ge=1, le=10_000)
        memory_max_value_chars: int = Field(default=2000, ge=1, le=4000)
        artifact_max_bytes: int = Field(default=1024 * 1024, ge=1, le=4 * 1024 * 1024)
        download_wait_seconds: float = Field(default=60.0, ge=0, le=600)

    return BuiltinSettings


def settings_path() -> Path:
    """`<config dir>/builtins.json`."""
    from host.paths import dirs

    return dirs().config / FILE_NAME


def parse_settings(data: Any, source: str = FILE_NAME) -> Any:
    """Validate decoded JSON as built-in settings; ConfigFileError names each bad field."""
    from pydantic import ValidationError

    try:
        return _model().model_validate(data)
    except ValidationError as exc:
        problems = [("$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]), e["msg"])
                    for e in exc.errors()]
        raise ConfigFileError(source, problems) from None


def defaults() -> Any:
    """The built-in limits when nothing is configured."""
    return _model()()


def load_settings(path: Path | None = None) -> Any:
    """The limits in force: the file's, or the defaults (logged) when it is missing or invalid."""
    path = path or settings_path()
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return defaults()
    except OSError as exc:
        log.warning("cannot read %s (%s); using the default limits", path, exc)
        return defaults()
    try:
        return parse_settings(json.loads(raw), str(path))
    except (json.JSONDecodeError, ConfigFileError) as exc:
        log.warning("%s is not usable (%s); using the default limits", path, exc)
        return defaults()
