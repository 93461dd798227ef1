"""SKILL.md: YAML front matter between `---` lines, then the Markdown instructions."""

from __future__ import annotations

import datetime
import functools
import re
from dataclasses import dataclass
from typing import Any

from host.skills.errors import (BODY_TOO_LARGE, FILE_TOO_LARGE, INVALID_FRONT_MATTER, INVALID_NAME,
                                MISSING_FRONT_MATTER, SkillError)
from host.skills.limits import DEFAULT_LIMITS, SkillLimits

NAME_RULE = ("a skill name is 1-64 characters: lowercase letters a-z, digits and hyphens, "
             "not starting or ending with a hyphen and with no two hyphens in a row")
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_KNOWN_FIELDS = frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})
_MAX_DESCRIPTION = 1024
_MAX_COMPATIBILITY = 500


@dataclass(frozen=True)
class SkillDoc:
    """A parsed SKILL.md. `ignored_fields` names front matter keys outside the open format (tools
    add their own); they are left out, not refused."""

    name: str
    description: str
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    allowed_tools: tuple[str, ...]
    body: str
    ignored_fields: tuple[str, ...]


def check_name(name: str, where: str | None = None) -> str:
    """Return `name` when it is a valid skill name; otherwise raise `invalid_name` saying the rule."""
    if not isinstance(name, str) or not name:
        raise SkillError(INVALID_NAME, f"the name is empty; {NAME_RULE}", where)
    if len(name) > 64:
        raise SkillError(INVALID_NAME, f"the name is {len(name)} characters long; {NAME_RULE}", where)
    if not _NAME.fullmatch(name):
        raise SkillError(INVALID_NAME, f"{name!r} is not a valid name; {NAME_RULE}", where)
    return name


def parse_skill_md(text: str, limits: SkillLimits = DEFAULT_LIMITS) -> SkillDoc:
    """Parse the text of a SKILL.md into a `SkillDoc`, or raise a `SkillError` naming the field."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_skill_md_bytes:
        raise SkillError(FILE_TOO_LARGE, f"SKILL.md is {size} bytes, over the cap of "
                                         f"{limits.max_skill_md_bytes} bytes", "SKILL.md")
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    if lines[0].rstrip() != "---":
        raise SkillError(MISSING_FRONT_MATTER, "SKILL.md must start with a `---` line that opens its "
                                               "YAML front matter (name and description)", "SKILL.md")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillError(MISSING_FRONT_MATTER, "the front matter of SKILL.md is not closed by a `---` line",
                         "SKILL.md")
    fields = _load_yaml("\n".join(lines[1:end]), limits)
    body = "\n".join(lines[end + 1:]).strip()
    body_size = len(body.encode("utf-8", "surrogatepass"))
    if body_size > limits.max_body_bytes:
        raise SkillError(BODY_TOO_LARGE, f"the body of SKILL.md is {body_size} bytes, over the cap of "
                                         f"{limits.max_body_bytes} bytes; move details into references/",
                         "SKILL.md")
    return SkillDoc(
        name=check_name(_field(fields, "name", required=True), "SKILL.md:name"),
        description=_text(fields, "description", required=True, max_len=_MAX_DESCRIPTION),
        license=_text(fields, "license"),
        compatibility=_text(fields, "compatibility", max_len=_MAX_COMPATIBILITY),
        metadata=_metadata(fields.get("metadata")),
        allowed_tools=_allowed_tools(fields.get("allowed-tools")),
        body=body,
        ignored_fields=tuple(sorted(str(key) for key in fields if key not in _KNOWN_FIELDS)),
    )


def _load_yaml(source: str, limits: SkillLimits) -> dict:
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > limits.max_front_matter_bytes:
        raise SkillError(INVALID_FRONT_MATTER, f"the front matter is {size} bytes, over the cap of "
                                               f"{limits.max_front_matter_bytes} bytes", "SKILL.md")
    import yaml  # lazily: host start-up does not pay for it

    try:
        fields = yaml.load(source, Loader=_no_alias_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # +2: the front matter starts on the second line of SKILL.md.
        at = f" (line {mark.line + 2} of SKILL.md)" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SkillError(INVALID_FRONT_MATTER, f"the front matter is not valid YAML: {problem}{at}",
                         "SKILL.md") from None
    except RecursionError:
        raise SkillError(INVALID_FRONT_MATTER, "the front matter is nested too deeply", "SKILL.md") from None
    if fields is None:
        fields = {}
    if not isinstance(fields, dict):
        raise SkillError(INVALID_FRONT_MATTER, f"the front matter must be a YAML mapping of fields, "
                                               f"not {_kind(fields)}", "SKILL.md")
    return fields


@functools.cache
def _no_alias_loader() -> type:
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        """A safe loader that refuses anchors and aliases: a few lines of them expand
        exponentially (the "billion laughs"), and no skill needs them."""

        def compose_node(self, parent, index):
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                line = event.start_mark.line + 2
                raise SkillError(INVALID_FRONT_MATTER, f"YAML anchors and aliases (& and *) are not allowed "
                                                       f"in the front matter (line {line} of SKILL.md)",
                                 "SKILL.md")
            return super().compose_node(parent, index)

    return NoAliasLoader


def _field(fields: dict, key: str, *, required: bool) -> str | None:
    value = fields.get(key)
    if value is None:
        if required:
            raise SkillError(INVALID_FRONT_MATTER, f"the front matter has no `{key}` field, which is required",
                             f"SKILL.md:{key}")
        return None
    if not isinstance(value, str):
        raise SkillError(INVALID_FRONT_MATTER, f"`{key}` must be a string, not {_kind(value)} "
                                               f"(quote the value)", f"SKILL.md:{key}")
    return value


def _text(fields: dict, key: str, *, required: bool = False, max_len: int | None = None) -> str | None:
    value = _field(fields, key, required=required)
    if value is None:
        return None
    value = value.strip()
    if not value:
        raise SkillError(INVALID_FRONT_MATTER, f"`{key}` is empty", f"SKILL.md:{key}")
    if max_len is not None and len(value) > max_len:
        raise SkillError(INVALID_FRONT_MATTER, f"`{key}` is {len(value)} characters long, over the "
                                               f"limit of {max_len}", f"SKILL.md:{key}")
    return value


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SkillError(INVALID_FRONT_MATTER, f"`metadata` must be a mapping of strings to strings, "
                                               f"not {_kind(value)}", "SKILL.md:metadata")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            bad = key if not isinstance(key, str) else item
            raise SkillError(INVALID_FRONT_MATTER, f"`metadata` must map strings to strings; {key!r} "
                                                   f"holds {_kind(bad)} (quote the value)",
                             "SKILL.md:metadata")
    return dict(value)


def _allowed_tools(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(value.split())
    # The format says a space-separated string, but a YAML list of names is common and unambiguous.
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(name for item in value for name in item.split())
    raise SkillError(INVALID_FRONT_MATTER, f"`allowed-tools` must be a space-separated string, "
                                           f"not {_kind(value)}", "SKILL.md:allowed-tools")


def _kind(value: Any) -> str:
    """How YAML would describe a value, for messages."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, (datetime.date, datetime.datetime)):
        return "a date"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bytes):
        return "binary data"
    return "a " + type(value).__name__
