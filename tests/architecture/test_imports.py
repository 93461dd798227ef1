"""The import structure of `host`, `protocol` and `install`: no import cycles, and a layer order
of the packages in which lower layers never import higher ones.

Every import counts (module level, inside functions, under `if TYPE_CHECKING:`): each one ties
two modules together, however late it runs. The violations that exist today, in code being
restructured, are listed below; the lists may only shrink, and a test fails when an entry no
longer happens so that it is deleted at once.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from tests.architecture.import_graph import (
    ImportGraph,
    describe_cycle,
    read_graph,
    shortest_cycle,
    strongly_connected,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("host", "protocol", "install")

# Bottom to top. A package imports only packages of lower layers; packages that share a layer
# never import each other. A new package has to be placed here (the tests name it until it is).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("protocol",),  # the wire contract: it imports nothing of ours
    ("host", "host.paths", "host.config_files"),  # the version; the per-OS folders; how settings files fail
    # Foundations standing on paths alone: logging, the SQLite store, model providers with
    # their key store (the tool runners use its ToolSchema and secrets), and the native-host
    # registration (launch, the CLI and the host's caller check read it).
    ("host.logs", "host.store", "host.providers", "install"),
    ("host.tools",),  # tool declarations
    ("host.gatekeeper",),  # judges calls by those declarations and the stored rules
    ("host.calls",),  # the router and the one authorisation path every call takes
    ("host.transport",),  # frames, endpoints, stdio
    ("host.cdp",),  # CDP over the debugger bridge
    ("host.browser",),  # the browser tools
    ("host.builtins", "host.mcp", "host.skills"),  # built-in, MCP and skill tools
    ("host.plugins",),  # bundles of skills, MCP servers and stricter rules
    ("host.engine",),  # threads, turns, the agent loop
    ("host.ui",),  # the op server of the extension's pages (side panel, settings)
    ("host.control",),  # the control server, with every subsystem's control methods (below)
    ("host.repl", "host.nativehost"),  # the control client's console; the host process
    ("host.launch",),  # starts a browser with the host and a console
    ("host.demo",),  # a scripted launch
    ("host.cli",),  # every command
    ("host.__main__",),
)

# A subsystem's `control_methods` module is the control server's adapter for that subsystem:
# `host.control.methods` loads it by name and nothing in the subsystem imports it. It belongs to
# the control layer, not to the layer of the subsystem it serves.
CONTROL_ADAPTER = "control_methods"

# Import cycles allowed for now, each as its exact group (none: keep it that way).
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()

# Imports of a higher layer allowed for now, as (importer, imported module) (none: keep it that way).
KNOWN_UPWARD: frozenset[tuple[str, str]] = frozenset()

FIX_HINT = "(tests/architecture/test_imports.py)"


@cache
def project_graph() -> ImportGraph:
    return read_graph(ROOT, PACKAGES)


def package_of(module: str) -> str:
    """The package a module is placed by: `host.<name>` for host's sub-packages and modules,
    the top-level name otherwise; a control adapter goes with `host.control`."""
    parts = module.split(".")
    if parts[0] != "host" or len(parts) == 1:
        return parts[0]
    if parts[-1] == CONTROL_ADAPTER:
        return "host.control"
    return ".".join(parts[:2])


def layer_of() -> dict[str, int]:
    return {package: level for level, packages in enumerate(LAYERS) for package in packages}


def cross_imports(graph: ImportGraph) -> list[tuple[str, str, int]]:
    """Every import from one package to another: (importer, imported, line)."""
    return [(importer, imported, line)
            for importer in sorted(graph.edges)
            for imported, line in sorted(graph.imports(importer).items())
            if package_of(importer) != package_of(imported)]


def layered_imports() -> list[tuple[str, str, int, int]]:
    """Imports between packages that both have a layer: (importer, imported, line, how many
    layers up the imported package is: > 0 upward, 0 sideways, < 0 downward)."""
    layers = layer_of()
    return [(a, b, line, layers[package_of(b)] - layers[package_of(a)])
            for a, b, line in cross_imports(project_graph())
            if package_of(a) in layers and package_of(b) in layers]


def describe_import(importer: str, imported: str, line: int) -> str:
    layers = layer_of()
    a, b = package_of(importer), package_of(imported)
    return (f"  {importer} (line {line}) imports {imported}: {a} is in layer {layers[a]}, "
            f"{b} in layer {layers[b]}")


def test_every_package_has_a_layer():
    graph = project_graph()
    present = {package_of(m) for m in graph.files}
    layers = layer_of()
    problems = []
    for package in sorted(present - set(layers)):
        uses = sorted({package_of(b) for a, b, _ in cross_imports(graph) if package_of(a) == package})
        used_by = sorted({package_of(a) for a, b, _ in cross_imports(graph) if package_of(b) == package})
        problems.append(f"  {package} is in no layer: add it to LAYERS {FIX_HINT}, above every package "
                        f"it imports ({', '.join(uses) or 'none'}) and below every package that imports it "
                        f"({', '.join(used_by) or 'none'})")
    for package in sorted(set(layers) - present):
        problems.append(f"  {package} is in LAYERS but no longer exists: remove it {FIX_HINT}")
    listed = [p for packages in LAYERS for p in packages]
    for package in sorted({p for p in listed if listed.count(p) > 1}):
        problems.append(f"  {package} is in more than one layer {FIX_HINT}")
    if problems:
        pytest.fail("The layer table does not match the packages:\n" + "\n".join(problems), pytrace=False)


def test_no_import_cycles():
    graph = project_graph()
    problems = []
    for group in strongly_connected(graph):
        if frozenset(group) in KNOWN_CYCLES:
            continue
        path = shortest_cycle(graph, group)
        problems.append(f"{len(group)} modules import each other: {', '.join(group)}\n"
                        f"  one loop (remove or invert one of these imports):\n{describe_cycle(graph, path)}")
    if problems:
        pytest.fail("Import cycles:\n" + "\n".join(problems), pytrace=False)


def test_known_cycles_are_still_exactly_as_listed():
    actual = {frozenset(group) for group in strongly_connected(project_graph())}
    stale = [sorted(group) for group in KNOWN_CYCLES if group not in actual]
    if stale:
        pytest.fail(f"These KNOWN_CYCLES are no longer cycles as listed (broken up, shrunk or grown): delete or "
                    f"update them {FIX_HINT}:\n" + "\n".join(f"  {group}" for group in stale)
                    + "\nThe cycles now:\n" + "\n".join(f"  {sorted(g)}" for g in sorted(actual, key=sorted)),
                    pytrace=False)


def test_lower_layers_never_import_higher_ones():
    upward = [(a, b, line) for a, b, line, step in layered_imports() if step > 0 and (a, b) not in KNOWN_UPWARD]
    if upward:
        pytest.fail("Imports of a higher layer (invert the dependency, or move the shared piece down):\n"
                    + "\n".join(describe_import(*u) for u in upward), pytrace=False)


def test_known_upward_imports_still_happen():
    stale = sorted(KNOWN_UPWARD - {(a, b) for a, b, _, step in layered_imports() if step > 0})
    if stale:
        pytest.fail(f"These KNOWN_UPWARD imports no longer happen: delete them {FIX_HINT}:\n"
                    + "\n".join(f"  {a} -> {b}" for a, b in stale), pytrace=False)


def test_packages_of_one_layer_do_not_import_each_other():
    sideways = [(a, b, line) for a, b, line, step in layered_imports() if step == 0]
    if sideways:
        pytest.fail(f"Packages sharing a layer import each other: give the imported one a lower layer {FIX_HINT}:\n"
                    + "\n".join(describe_import(*s) for s in sideways), pytrace=False)
