"""Generate `extension/generated/tools.js`, the extension's copy of the tool declarations.

    python -m host.tools.generate          # write the file
    python -m host.tools.generate --check  # exit 1 if the file is stale

The file is a classic script (content scripts cannot import modules; pages import it for its
effect) that sets a frozen `globalThis.__tabwardenTools`:

    categories   the action categories rules match with `category:<name>`
    codes        the failure codes of a tool call
    tools        name -> label, level, effects, category (what pages show)
    content      tool -> the JSON Schema of what the page executor takes (host-only keys
                 removed, `allowRecovery` where the host may send it, read_page's `keepRefs`,
                 for a write the element `expect`ed beside every ref), with its cross-field rules
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from typing import Any

from protocol.bundle import extension_dir
from protocol.errors import ToolCode, code_values

from host.tools import catalog
from host.tools.params import (EXPECT_KEY, EXPECT_METHOD_MAX, EXPECT_NAME_MAX, EXPECT_ROLE_MAX, EXPECT_URL_MAX,
                               HOST_ONLY_KEYS, Rule)
from host.tools.schema import provider_schema
from host.tools.spec import CATEGORIES, ToolSpec

OUTPUT = extension_dir() / "generated" / "tools.js"
GLOBAL = "__tabwardenTools"


# What the host expects of the element behind a ref (see host.tools.params.EXPECT_KEY).
EXPECT_SCHEMA = {
    "type": "object",
    "properties": {"role": {"type": "string", "maxLength": EXPECT_ROLE_MAX},
                   "name": {"type": "string", "maxLength": EXPECT_NAME_MAX},
                   "leads": {"type": "object",
                             "properties": {"url": {"type": "string", "maxLength": EXPECT_URL_MAX},
                                            "method": {"type": "string", "maxLength": EXPECT_METHOD_MAX},
                                            "newTab": {"type": "boolean"}},
                             "required": ["url", "method", "newTab"],
                             "additionalProperties": False}},
    "required": ["role", "name"],
    "additionalProperties": False,
}
# A write's optional ref (press_key's) still comes with what the host expects of its element.
EXPECT_RULE = Rule("needs", ("ref", EXPECT_KEY), "a ref needs the element the host expects there")


def content_schema(spec: ToolSpec) -> dict[str, Any]:
    """What the page executor takes for `spec`: its parameters without the host-only keys (in
    batch actions too), plus `allowRecovery` for tools whose stale ref may be recovered and, for
    a write, `expect` beside every ref (required with it)."""
    schema = copy.deepcopy(provider_schema(spec))
    _strip(schema)
    for definition in schema.get("$defs", {}).values():
        definition.pop("title", None)
        _strip(definition)
    if spec.ref_recovery:
        schema["properties"]["allowRecovery"] = {"type": "boolean"}
    if spec.name == "read_page":
        # The host's own read after trusted input: the refs already given stay what they are.
        schema["properties"]["keepRefs"] = {"type": "boolean"}
    rules = list(getattr(spec.params_type, "rules", ()))
    if spec.is_write:
        for holder in (schema, *schema.get("$defs", {}).values()):
            _add_expect(holder)
        if "ref" in schema["properties"] and "ref" not in schema.get("required", ()):
            rules.append(EXPECT_RULE)
    if rules:
        schema["rules"] = [rule.wire() for rule in rules]
    return schema


def _add_expect(holder: dict[str, Any]) -> None:
    """`expect` beside the `ref` of one object schema, required when the ref is."""
    properties = holder.get("properties", {})
    if "ref" not in properties:
        return
    properties[EXPECT_KEY] = copy.deepcopy(EXPECT_SCHEMA)
    if "ref" in holder.get("required", ()):
        holder["required"] = [*holder["required"], EXPECT_KEY]


def _strip(schema: dict[str, Any]) -> None:
    for key in HOST_ONLY_KEYS:
        schema.get("properties", {}).pop(key, None)
        if key in schema.get("required", ()):
            schema["required"] = [name for name in schema["required"] if name != key]
    for value in schema.get("properties", {}).values():
        value.pop("description", None)
        for branch in value.get("anyOf", ()):
            branch.pop("description", None)


def document() -> dict[str, Any]:
    """Everything tools.js holds."""
    return {
        "categories": list(CATEGORIES),
        "codes": code_values(ToolCode),
        "tools": {name: {"label": spec.label, "level": spec.level, "effects": spec.effects,
                         "category": spec.category} for name, spec in catalog.CATALOG.items()},
        "content": {name: content_schema(spec) for name, spec in catalog.CATALOG.items() if spec.page_executor},
    }


def render() -> str:
    """The text of tools.js."""
    body = json.dumps(document(), indent=2, sort_keys=True)
    return "\n".join([
        "// Generated by `python -m host.tools.generate` from the tool declarations (host/tools). Do not",
        "// edit by hand; tests/tools/test_generated_tools.py fails when this file is stale.",
        "(() => {",
        "  const freeze = (value) => {",
        "    if (value && typeof value === \"object\") Object.values(value).forEach(freeze);",
        "    return Object.freeze(value);",
        "  };",
        f"  globalThis.{GLOBAL} = globalThis.{GLOBAL} || freeze({body});".replace("\n", "\n  "),
        "})();",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m host.tools.generate")
    parser.add_argument("--check", action="store_true", help="fail if the generated file is stale")
    args = parser.parse_args(argv)
    text = render()
    current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
    if args.check:
        if current != text:
            print(f"{OUTPUT.name} is stale: run `make generate`", file=sys.stderr)
            return 1
        return 0
    if current != text:
        OUTPUT.parent.mkdir(parents=True, exist_ok=True)
        OUTPUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUTPUT.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
