"""The import graph of the project's own packages, read from their source with `ast` (nothing
is imported). Every import statement counts: at module level, inside functions and under
`if TYPE_CHECKING:` alike, since any of them ties the two modules together. Relative imports
are resolved; imports of anything outside the packages read are left out."""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ImportGraph:
    """Modules by dotted name, and for each the modules it imports with the line of the first
    such import (so a message can point at the statement to change)."""

    files: dict[str, Path]
    edges: dict[str, dict[str, int]]

    def imports(self, module: str) -> dict[str, int]:
        """What `module` imports: {imported module: line}."""
        return self.edges.get(module, {})


def read_graph(root: Path, packages: Iterable[str]) -> ImportGraph:
    """The import graph of `packages` (top-level folders under `root`)."""
    files = {name: path for package in packages for name, path in _module_files(root, package)}
    edges: dict[str, dict[str, int]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        found = edges.setdefault(module, {})
        for node in _statements(tree):
            for target in _targets(node, module, is_package, files):
                if target != module and (target not in found or node.lineno < found[target]):
                    found[target] = node.lineno
    return ImportGraph(files, edges)


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    # Imports are statements, so expressions need not be walked (a third of the time).
    todo: list[ast.AST] = [tree]
    while todo:
        for child in ast.iter_child_nodes(todo.pop()):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                yield child
                todo.append(child)


def _module_files(root: Path, package: str) -> Iterator[tuple[str, Path]]:
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _targets(node: ast.AST, module: str, is_package: bool, files: dict[str, Path]) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            known = _nearest_module(alias.name, files)
            if known is not None:
                yield known
    elif isinstance(node, ast.ImportFrom):
        base = _absolute(node, module, is_package)
        for alias in node.names:
            # `from a import b` imports the module a.b when there is one, else a name of a.
            candidate = f"{base}.{alias.name}" if base else alias.name
            known = candidate if candidate in files else _nearest_module(base, files)
            if known is not None:
                yield known


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    # Level 1 is the importer's own package: the module itself for an __init__, else its parent.
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join([*parts, node.module] if node.module else parts)


def _nearest_module(name: str, files: dict[str, Path]) -> str | None:
    while name and name not in files:
        name = name.rpartition(".")[0]
    return name or None


def strongly_connected(graph: ImportGraph) -> list[list[str]]:
    """Every group of two or more modules that import each other (directly or around a loop),
    each sorted, smallest first name first (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        work.append((node, iter(sorted(graph.imports(node)))))

    for start in sorted(graph.files):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        visit(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    visit(child)
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))
    return sorted(groups)


def shortest_cycle(graph: ImportGraph, group: list[str]) -> list[str]:
    """A shortest loop of imports from the group's first module back to it, inside the group:
    [first, ..., first]."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph.imports(node)):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if child not in came_from:
                came_from[child] = node
                queue.append(child)
    raise ValueError(f"{group} is not a cycle")


def describe_cycle(graph: ImportGraph, path: list[str]) -> str:
    """One line per import of a loop: `a (line 12) imports b`."""
    return "\n".join(f"    {a} (line {graph.imports(a)[b]}) imports {b}" for a, b in zip(path, path[1:]))
