"""Make cdp-use's generated TypedDicts decodable at run time.

cdp-use imports the names its annotations refer to only under `if TYPE_CHECKING:`, so
`msgspec` (and `typing.get_type_hints`) cannot resolve `"List[AXNode]"` in a return type. This
shim reads each module's `if TYPE_CHECKING:` block and binds those names into the module, then
does the same for every module it reached that way, so a type and everything it refers to
resolve. Only the modules of the types we actually decode are touched, once each.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import threading
from types import ModuleType
from typing import Any

_done: set[str] = set()
_lock = threading.Lock()


def _type_checking_imports(module: ModuleType) -> list[tuple[str, str, str]]:
    """(absolute module, imported name, bound name) of the module's TYPE_CHECKING imports."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return []
    found = []
    package = module.__name__.rpartition(".")[0]
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module is not None:
                target = importlib.util.resolve_name("." * stmt.level + stmt.module, package) if stmt.level else stmt.module
                for alias in stmt.names:
                    found.append((target, alias.name, alias.asname or alias.name))
    return found


def _bind(module_name: str) -> None:
    pending = [module_name]
    while pending:
        name = pending.pop()
        if name in _done or not name.startswith("cdp_use.cdp."):
            continue
        _done.add(name)
        module = sys.modules.get(name) or importlib.import_module(name)
        for source, imported, bound in _type_checking_imports(module):
            if source.endswith(".client") or source.endswith(".library"):
                continue  # the client itself is not a type we decode
            value = getattr(importlib.import_module(source), imported)
            module.__dict__.setdefault(bound, value)
            pending.append(source)


def resolvable(kind: Any) -> Any:
    """Return `kind` (a cdp-use TypedDict) after making its annotations resolvable."""
    with _lock:
        _bind(kind.__module__)
    return kind
