"""The policy files behind the settings page: which ones the gatekeeper loaded, what they fix, and
writing the default policy into the user's file.

The gatekeeper reads its files at start and on `reload()`; it has no setter for the default
policy, so the page's choice is written where a person would write it (the user policy file)
and the gatekeeper is asked to reload. A file the gatekeeper then refuses is put back as it was.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.permissions import describe_policy

from host.config_files import EditRefused
from host.gatekeeper.policy_files import PolicyLayer, load_policy_file, parse_policy, user_policy_path


@dataclass(frozen=True)
class Layers:
    """The policy files in force (None when absent or unreadable)."""

    user_path: Path
    user: PolicyLayer | None
    managed: PolicyLayer | None


def _loaded_path(sources: list[str], kind: str) -> Path | None:
    prefix = f"{kind}:"
    return next((Path(s[len(prefix):]) for s in sources if s.startswith(prefix)), None)


def layers(loaded_sources: list[str]) -> Layers:
    """The gatekeeper's files, found from its `loaded_sources` (`user:<path>`, `managed:<path>`);
    the user file it would read is the default one when it does not exist yet."""
    user_path = _loaded_path(loaded_sources, "user") or user_policy_path()
    managed_path = _loaded_path(loaded_sources, "managed")
    return Layers(user_path, _read(user_path, managed=False), _read(managed_path, managed=True) if managed_path else None)


def _read(path: Path, *, managed: bool) -> PolicyLayer | None:
    try:
        return load_policy_file(path, managed=managed)
    except Exception:  # the gatekeeper reports invalid files itself; here they just contribute nothing
        return None


def set_default_policy(gatekeeper: Any, policy: str) -> Path:
    """Write `policy` into the user policy file and make the gatekeeper reload it."""
    found = layers(gatekeeper.active_permissions().loaded_sources)
    if found.managed is not None and found.managed.policy is not None:
        raise EditRefused("policy_locked", f"the administrator's policy file ({found.managed.label.split(':', 1)[1]}) "
                                               f"sets the default policy to {describe_policy(found.managed.policy)}")
    path = found.user_path
    try:
        before = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        before = None
    except OSError as exc:
        raise EditRefused("invalid_policy", f"cannot read {path}: {exc.strerror}") from None
    try:
        document = json.loads(before) if before else {"version": 1}
    except json.JSONDecodeError as exc:
        raise EditRefused("invalid_policy", f"{path} is not valid JSON (line {exc.lineno}); fix it by hand first") \
            from None
    if not isinstance(document, dict):
        raise EditRefused("invalid_policy", f"{path} does not hold a JSON object; fix it by hand first")
    document["policy"] = policy
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        parse_policy(text, source=str(path), rule_source="user_setting")
    except Exception as exc:
        raise EditRefused("invalid_policy", f"{path} would not be valid: {exc}") from None
    _write(path, text)
    problems = gatekeeper.reload()
    if problems:
        if before is None:
            path.unlink(missing_ok=True)
        else:
            _write(path, before)
        gatekeeper.reload()
        raise EditRefused("invalid_policy", "; ".join(str(p) for p in problems))
    return path


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_suffix(".tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temp, path)
