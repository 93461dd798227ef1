"""The extension names only failure codes the host declares: every code its worker and page
executor use comes from a generated table and is declared in `protocol.errors` (ToolCode for a
tool call, ErrorCode for the link), so a typo or a new undeclared code fails here instead of
reaching the host as something it cannot tell apart. Each side builds failures one way."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from protocol.errors import ErrorCode, ToolCode, code_values
from tests.protocol.js_codes import PROTOCOL, TOOL, Literal, Lookup, injected_lists, literals, lookups

EXTENSION = Path(__file__).resolve().parents[2] / "extension"
DECLARED = {TOOL: code_values(ToolCode), PROTOCOL: code_values(ErrorCode)}
# The sides that build tool failures; the UI pages read the UI protocol's own codes.
FAILURE_SIDES = ("background", "content")


def sources(*folders: str, root: Path = EXTENSION) -> dict[str, str]:
    """`<root>/<folder>/**/*.js` by path relative to root (generated files left out)."""
    tops = [root / folder for folder in folders] if folders else [root]
    found = {path.relative_to(root).as_posix(): path for top in tops for path in sorted(top.rglob("*.js"))}
    return {name: path.read_text(encoding="utf-8") for name, path in found.items() if not name.startswith("generated/")}


def undeclared(root: Path) -> list[str]:
    """Every code named through a table under `root` that protocol.errors does not declare."""
    return [f"{path}:{use.line}: {use.table} code {use.name} is not declared"
            for path, text in sources(root=root).items()
            for use in lookups(text) if use.name not in DECLARED[use.table]]


def test_every_code_the_extension_names_is_declared():
    missing = undeclared(EXTENSION)
    assert not missing, "declare it in protocol/errors.py and run `make generate`:\n" + "\n".join(missing)


def test_the_worker_and_the_page_name_their_codes_from_the_tables():
    spelled = [f"{path}:{literal.line}: {literal.value!r} ({literal.where})"
               for path, text in sources(*FAILURE_SIDES).items() for literal in literals(text)]
    assert not spelled, "name these codes as CODES.NAME (or PROTOCOL_CODES.NAME):\n" + "\n".join(spelled)


@pytest.mark.parametrize("side", FAILURE_SIDES)
def test_the_scan_sees_each_side_use_codes(side):
    # Guards the scan itself: a pattern that stopped matching would pass every check above.
    used = {use.name for text in sources(side).values() for use in lookups(text)}
    assert {"INVALID_MESSAGE", "TIMEOUT", "UNKNOWN" if side == "content" else "INTERNAL"} <= used, used


def test_the_worker_builds_failures_in_one_module():
    definition = re.compile(r"function\s+failure\s*\(|(?:const|let|var)\s+failure\s*=\s*(?:function|\([^)]*\)\s*=>)")
    defined = {path for path, text in sources("background").items() if definition.search(text)}
    assert defined == {"background/failures.js"}
    leftovers = [path for path, text in sources().items() if "protocolError" in text]
    assert not leftovers, leftovers


def test_the_page_builds_failures_with_one_class():
    defined = {path for path, text in sources("content").items() if "class ActionFailure" in text}
    assert defined == {"content/core.js"}
    assert "TW.fail = " in sources("content")["content/core.js"]


def test_every_injected_part_that_reads_the_generated_table_comes_after_it():
    lists = injected_lists((EXTENSION / "background" / "content-relay.js").read_text(encoding="utf-8"))
    assert {"EXECUTOR_FILES", "FRAME_TAKEOVER_FILES"} <= set(lists), lists
    readers = {path for path, text in sources("content").items()
               if lookups(text) or "TW.codes" in text or "__tabwardenTools" in text}
    assert {"content/core.js", "content/params.js", "content/executor.js"} <= readers, readers
    for name, files in lists.items():
        for part in readers & set(files):
            assert "generated/tools.js" in files[:files.index(part)], f"{name} injects {part} before generated/tools.js"


# The scanner on made-up text, so the checks above cannot pass by matching nothing.

SAMPLE = textwrap.dedent("""\
    import { CODES, PROTOCOL_CODES, failure } from "./failures.js";
    export function failure(code, message) {}
    throw failure(CODES.TAB_CLOSD, `tab ${id} is closed`, "resolve");
    throw failure(PROTOCOL_CODES.BAD_FRAME, "not JSON");
    throw TW.fail(
      "stale_reff",
      "gone", "resolve", true);
    const wire = { code: "unknown", message: "x" };
    if (typeof err.code === "string" && err.code !== "aborted") err.code = TW.codes.TIMEOUT;
    reject(new ActionFailure(ok ? CODES.ABORTED : "timeout", "m"));
    x.failure("not_a_constructor");
""")


def test_the_scanner_finds_lookups_with_their_table_and_line():
    assert lookups(SAMPLE) == [
        Lookup(3, TOOL, "TAB_CLOSD"), Lookup(4, PROTOCOL, "BAD_FRAME"), Lookup(9, TOOL, "TIMEOUT"),
        Lookup(10, TOOL, "ABORTED"),
    ]


def test_the_scanner_finds_literal_codes_but_not_types_or_messages():
    assert literals(SAMPLE) == [
        Literal(5, "stale_reff", "constructor"), Literal(8, "unknown", "field"), Literal(9, "aborted", "compared"),
        Literal(10, "timeout", "constructor"),
    ]


def test_an_undeclared_lookup_is_reported_and_generated_files_are_not_read(tmp_path):
    for folder in ("background", "generated"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "typo.js").write_text(SAMPLE)
    assert undeclared(tmp_path) == ["background/typo.js:3: tool code TAB_CLOSD is not declared"]
