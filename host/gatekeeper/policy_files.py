"""Policy files: the user's (config dir) and the administrator's (system location).

Format (JSON):
    {"version": 1,
     "policy": "untrusted",
     "rules": [{"tool": "click", "origin": "*.shop.example", "verdict": "allow",
                "args": {"name": "^Add to cart"}}],
     "sensitive_origins": ["*.mybank.example"],
     "guarded_origins": ["crm.example.com"],
     "lock_holds_page_requests": true,
     "examples": [{"tool": "click", "origin": "https://a.shop.example", "expect": "allow"}]}
`args` of a tool that acts on an element match the host's facts about it (`name`, `role`, `to`);
a condition on `element`, the model's own description, is refused. Rules in the user file get
source `user_setting`, in the managed file `managed`. `action` is accepted as another name for
`verdict`. `lock_holds_page_requests` (default true) says whether a scope lock holds a driven
page's own requests (scripts, images, beacons, sockets) as well as its navigations; false keeps a
lock to navigations, for sites that load what they need from elsewhere. `examples` are checked when the file loads: a file whose own examples fail is refused
like an invalid one.

Files in the working directory are never read: permissions belong to the user and the
administrator, not to whatever folder the host was started from. A file is validated completely
before any of it is used; an invalid file is reported with the file, the path inside it and what
was expected, and nothing from it is applied. One exception: a rule naming a tool that does not
exist (`clik`) could never match, so it is left out and reported in `PolicyLayer.skipped` (with
the nearest tool name) while the file's other rules apply.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protocol.permissions import PolicyName, Verdict
from protocol.tools import ToolEffects, ToolLevel

from host.gatekeeper.errors import InvalidInput
from host.gatekeeper.patterns import PatternError, parse_origin_pattern
from host.gatekeeper.policy import POLICIES
from host.gatekeeper.rules import Rule, parse_rule
from host.gatekeeper.what_if_target import parse_target

FILE_NAME = "policy.json"
MAX_FILE_BYTES = 4 * 1024 * 1024


def user_policy_path() -> Path:
    """`<config dir>/policy.json` (see `host.paths`)."""
    from host.paths import dirs

    return dirs().config / FILE_NAME


def managed_policy_path() -> Path:
    """The administrator's file: `/etc/tabwarden/policy.json` on Linux,
    `/Library/Application Support/Tabwarden/policy.json` on macOS, `%ProgramData%\\Tabwarden\\policy.json`
    on Windows. Under `TABWARDEN_HOME` (tests, dedicated profiles) it is `<home>/managed/policy.json`."""
    from host.paths import HOME_ENV

    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home) / "managed" / FILE_NAME
    if sys.platform == "win32":
        return Path(os.environ.get("PROGRAMDATA", r"C:\ProgramData")) / "Tabwarden" / FILE_NAME
    if sys.platform == "darwin":
        return Path("/Library/Application Support/Tabwarden") / FILE_NAME
    return Path("/etc/tabwarden") / FILE_NAME


@dataclass(frozen=True)
class PolicyLayer:
    """What one file contributes, validated and normalised."""

    label: str  # "user:<path>" or "managed:<path>"
    policy: str | None = None
    rules: tuple[Rule, ...] = ()
    sensitive_origins: tuple[str, ...] = ()
    guarded_origins: tuple[str, ...] = ()
    examples: tuple[dict[str, Any], ...] = field(default=())
    skipped: tuple[InvalidInput, ...] = ()  # rules left out: they name no tool
    lock_holds_page_requests: bool | None = None


class PolicyFileError(InvalidInput):
    """One or more problems in a policy file; `errors` lists each with its path."""

    def __init__(self, errors: list[InvalidInput]) -> None:
        self.errors = errors
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first.code, first.message + more, first.path, first.source)


def _models():
    # pydantic is imported only when a policy file is actually read (host start-up stays fast).
    from pydantic import AliasChoices, BaseModel, ConfigDict, Field
    from typing import Literal

    class RuleModel(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        tool: str
        origin: str = "*"
        verdict: Verdict = Field(validation_alias=AliasChoices("verdict", "action"))
        args: dict[str, str] | None = None
        source: str | None = None
        id: str | None = None

    class ExampleModel(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        tool: str
        origin: str = ""
        params: dict[str, Any] = Field(default_factory=dict)
        effects: ToolEffects | None = None
        level: ToolLevel | None = None
        policy: str | None = None
        target: dict[str, Any] | None = None
        expect: Verdict
        expect_code: str | None = None

    class FileModel(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        version: Literal[1] = 1
        policy: PolicyName | None = None
        rules: list[RuleModel] = Field(default_factory=list)
        sensitive_origins: list[str] = Field(default_factory=list)
        guarded_origins: list[str] = Field(default_factory=list)
        lock_holds_page_requests: bool | None = None
        examples: list[ExampleModel] = Field(default_factory=list)

    return FileModel


def _json_path(loc: tuple) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def parse_policy(data: bytes | str, *, source: str, rule_source: str) -> PolicyLayer:
    """Validate a policy document; raise `PolicyFileError` listing every problem."""
    from pydantic import ValidationError

    try:
        obj = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "bytes"
        raise PolicyFileError([InvalidInput("invalid_policy_file", f"not valid JSON ({where}): {exc}", "$", source)])
    try:
        model = _models().model_validate(obj)
    except ValidationError as exc:
        errors = [InvalidInput("invalid_policy_file", f"{e['msg']} (got {_short(e.get('input'))})",
                               _json_path(e["loc"]), source) for e in exc.errors()]
        raise PolicyFileError(errors) from None
    errors: list[InvalidInput] = []
    skipped: list[InvalidInput] = []
    rules: list[Rule] = []
    for index, rule_model in enumerate(model.rules):
        body = rule_model.model_dump(exclude_none=True)
        try:
            rules.append(parse_rule(body, path=f"$.rules[{index}]", source=source, force_source=rule_source))
        except InvalidInput as exc:
            (skipped if exc.code == "unknown_tool" else errors).append(exc)
    examples = []
    for index, example in enumerate(model.examples):
        body = example.model_dump()
        if body.get("target") is not None:
            try:
                body["target"] = parse_target(body["target"], path=f"$.examples[{index}].target", source=source)
            except InvalidInput as exc:
                errors.append(exc)
        examples.append(body)
    lists: dict[str, list[str]] = {"sensitive_origins": [], "guarded_origins": []}
    for name, values in (("sensitive_origins", model.sensitive_origins), ("guarded_origins", model.guarded_origins)):
        for index, text in enumerate(values):
            try:
                lists[name].append(parse_origin_pattern(text).text)
            except PatternError as exc:
                errors.append(InvalidInput("invalid_pattern", str(exc), f"$.{name}[{index}]", source))
    if errors:
        raise PolicyFileError(errors)
    return PolicyLayer(
        label=f"{'managed' if rule_source == 'managed' else 'user'}:{source}",
        policy=model.policy,
        rules=tuple(rules),
        sensitive_origins=tuple(lists["sensitive_origins"]),
        guarded_origins=tuple(lists["guarded_origins"]),
        examples=tuple(examples),
        skipped=tuple(skipped),
        lock_holds_page_requests=model.lock_holds_page_requests,
    )


def _short(value: Any) -> str:
    text = json.dumps(value, default=str) if value is not None else "nothing"
    return text if len(text) <= 60 else text[:57] + "..."


def load_policy_file(path: Path, *, managed: bool) -> PolicyLayer | None:
    """Read and validate one file; None when it does not exist. Raises `PolicyFileError`."""
    source = str(path)
    try:
        if not path.is_file():
            if path.exists():
                raise PolicyFileError([InvalidInput("invalid_policy_file", "not a regular file", "$", source)])
            return None
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PolicyFileError([InvalidInput("invalid_policy_file", f"file is larger than {MAX_FILE_BYTES} bytes",
                                                "$", source)])
        data = path.read_bytes()
    except OSError as exc:
        raise PolicyFileError([InvalidInput("invalid_policy_file", f"cannot read: {exc}", "$", source)]) from exc
    return parse_policy(data, source=source, rule_source="managed" if managed else "user_setting")


def policy_names() -> tuple[str, ...]:
    """The policy names a file may use."""
    return POLICIES
