"""The import-graph reader on a small made-up package: which statements count, how relative
imports resolve, and how a cycle is reported."""

from __future__ import annotations

import textwrap

from tests.architecture.import_graph import describe_cycle, read_graph, shortest_cycle, strongly_connected


def write(root, path: str, text: str = "") -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(textwrap.dedent(text))


def test_every_kind_of_import_counts_and_relative_ones_resolve(tmp_path):
    write(tmp_path, "pkg/__init__.py", "from . import leaf\n")
    write(tmp_path, "pkg/leaf.py")
    write(tmp_path, "pkg/sub/__init__.py", "from ..leaf import thing\n")
    write(tmp_path, "pkg/sub/typed.py", """\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from pkg.sub import late
    """)
    write(tmp_path, "pkg/sub/late.py", """\
        import json

        def later():
            from .. import leaf
            import pkg.sub.typed as typed
            try:
                from pkg.missing import anything
            except ImportError:
                pass
    """)
    graph = read_graph(tmp_path, ["pkg"])
    assert graph.imports("pkg") == {"pkg.leaf": 1}
    assert graph.imports("pkg.sub") == {"pkg.leaf": 1}
    assert graph.imports("pkg.sub.typed") == {"pkg.sub.late": 3}
    # json is not ours; pkg.missing is not a module, so the import is of the package itself.
    assert graph.imports("pkg.sub.late") == {"pkg.leaf": 4, "pkg.sub.typed": 5, "pkg": 7}


def test_a_cycle_is_found_and_shown_import_by_import(tmp_path):
    write(tmp_path, "pkg/__init__.py")
    write(tmp_path, "pkg/a.py", "from pkg import b\n")
    write(tmp_path, "pkg/b.py", "def f():\n    from pkg.c import x\n")
    write(tmp_path, "pkg/c.py", "import pkg.a\n")
    write(tmp_path, "pkg/d.py", "import pkg.a\n")
    graph = read_graph(tmp_path, ["pkg"])
    [group] = strongly_connected(graph)
    assert group == ["pkg.a", "pkg.b", "pkg.c"]
    assert shortest_cycle(graph, group) == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]
    assert describe_cycle(graph, shortest_cycle(graph, group)) == (
        "    pkg.a (line 1) imports pkg.b\n"
        "    pkg.b (line 2) imports pkg.c\n"
        "    pkg.c (line 1) imports pkg.a")
