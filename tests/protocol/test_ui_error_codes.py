"""Every code a page can receive in `command.rejected` or `error` is one `protocol.ui` declares:
the codes the host's op handlers and the engine write at their call sites, the codes of the
refusals a handler passes on (`reject(..., exc.code, ...)`), and the codes the extension's own
pages and service worker use."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from protocol import ui
from protocol.errors import ToolCode, code_values

from host.ui.op_context import TRANSIENT_CODES

ROOT = Path(__file__).resolve().parents[2]
DECLARED = set(ui.ERROR_CODES)

# Codes of refusals a handler passes on that never reach a page, and why.
NEVER_SENT = {
    "invalid_decision": "Gatekeeper.apply_decision: a page's answer is decoded against DecisionKind first",
    "invalid_policy_file": "policy files: the settings page lists their problems; policy.setDefault says "
                           "invalid_policy",
    "policy_example_failed": "policy files, as above",
    "invalid_session": "session grants: the engine's, from approval answers, never from a settings op",
    "invalid_grant": "session grants, as above",
    "no_browser_session": "session grants, as above",
}


def _modules() -> Iterator[tuple[str, ast.AST]]:
    for path in sorted((ROOT / "host").rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _strings(node: ast.expr | None) -> set[str]:
    """The codes an argument can be: a literal, or either side of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body) | _strings(node.orelse)
    return set()


def _code_argument(call: ast.Call, position: int | None) -> ast.expr | None:
    """The `code` keyword, else the positional argument at `position`."""
    keyword = next((k.value for k in call.keywords if k.arg == "code"), None)
    if keyword is not None or position is None:
        return keyword
    return call.args[position] if len(call.args) > position else None


def _forwarded_refusals(tree: ast.AST) -> set[str]:
    """Exception classes whose code a handler answers with: `except X as exc: ... reject(..., exc.code, ...)`."""
    found = set()
    for handler in ast.walk(tree):
        if not (isinstance(handler, ast.ExceptHandler) and handler.name and isinstance(handler.type, ast.Name)):
            continue
        for call in ast.walk(handler):
            if isinstance(call, ast.Call) and _name(call.func) == "reject":
                code = _code_argument(call, 3)
                if isinstance(code, ast.Attribute) and code.attr == "code" and \
                        isinstance(code.value, ast.Name) and code.value.id == handler.name:
                    found.add(handler.type.id)
    return found


def _sent_codes() -> dict[str, set[str]]:
    """code -> the files that send it (or raise a refusal a handler sends on with it)."""
    modules = list(_modules())
    forwarded = set().union(*(_forwarded_refusals(tree) for _, tree in modules))
    assert {"InvalidInput", "EditRefused", "MemoryRefused"} <= forwarded, forwarded
    sites: dict[str, set[str]] = {}
    for rel, tree in modules:
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            name = _name(call.func)
            if name in ("CommandRejected", "ErrorEvent"):
                codes = _strings(_code_argument(call, None))
            elif name == "reject":
                codes = _strings(_code_argument(call, 3))
            elif name == "_failed" and rel.startswith("host/engine/"):
                codes = _strings(_code_argument(call, 0))
            elif name in forwarded:
                codes = _strings(_code_argument(call, 0))
            else:
                continue
            for code in codes:
                sites.setdefault(code, set()).add(rel)
    return sites


def test_every_code_the_host_sends_a_page_is_declared():
    sites = _sent_codes()
    assert {"thread_not_found", "invalid_command", "queue_full", "invalid_rule", "memory_full",
            "mcp_server_exists", "provider_error"} <= set(sites)  # the scan finds each kind of call site
    undeclared = {code: sorted(files) for code, files in sites.items() if code not in DECLARED | set(NEVER_SENT)}
    assert not undeclared, f"add these to protocol.ui's UiErrorCode: {undeclared}"


def test_the_codes_said_never_to_be_sent_exist_and_are_not_declared():
    sites = _sent_codes()
    assert set(NEVER_SENT) <= set(sites), set(NEVER_SENT) - set(sites)
    assert not set(NEVER_SENT) & DECLARED


def test_transient_codes_are_declared():
    assert TRANSIENT_CODES <= DECLARED


def _js(name: str) -> str:
    return (ROOT / "extension" / name).read_text(encoding="utf-8")


def test_the_codes_the_extension_sends_and_reads_are_declared():
    client = _js("ui/engine-client.js")
    undelivered = re.search(r"const UNDELIVERED = new Set\(\[([^\]]*)\]\)", client)
    compared = re.findall(r"\.code === \"(\w+)\"", client)
    memory = _js("ui/settings-memory.js")
    refusals = re.search(r"const known = \{(.*?)\}\[reply\.code\]", memory, re.DOTALL)
    # The worker names its codes from the generated table (CODES.X is ToolCode.X there).
    worker = [code_values(ToolCode)[name]
              for name in re.findall(r"type: \"error\", code: CODES\.(\w+)", _js("background/ui-ports.js"))]
    assert undelivered and compared and refusals and worker, "the code the test reads has moved"
    names = {
        *re.findall(r"\"(\w+)\"", undelivered.group(1)),
        *compared,
        *re.findall(r"^\s*(\w+): \(\)", refusals.group(1), re.MULTILINE),
        *worker,
    }
    assert names - DECLARED == set()
