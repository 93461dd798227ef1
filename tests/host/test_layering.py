"""The op server (host.ui) is a client of the engine: the agent loop and the domain packages never
import it, and op handlers never import the dispatcher or the handler table. Every import counts,
at module level, inside functions and under `if TYPE_CHECKING:`."""

from __future__ import annotations

import ast
from pathlib import Path

import host

HOST = Path(host.__file__).parent


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, as dotted names (`from a import b` gives `a` and `a.b`)."""
    found: set[str] = set()
    package = ".".join(path.relative_to(HOST.parent).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _offenders(folders: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(f"{path.relative_to(HOST.parent)} imports {name}"
                  for folder in folders for path in folder.rglob("*.py") for name in _imports(path)
                  if any(name == f or name.startswith(f + ".") for f in forbidden))


def test_the_engine_and_the_domain_packages_do_not_import_the_op_server():
    assert _offenders([HOST / "engine", HOST / "builtins", HOST / "mcp"], ("host.ui",)) == []


def test_op_handlers_do_not_import_the_dispatcher_or_the_handler_table():
    ui = HOST / "ui"
    handlers = [p for p in ui.glob("*.py") if p.name.startswith("ops_") or p.name in ("op_context.py", "client.py")]
    assert len(handlers) >= 10
    offenders = sorted(f"{p.name} imports {name}" for p in handlers for name in _imports(p)
                       if name in ("host.ui.commands", "host.ui.handlers"))
    assert offenders == []
