"""The package's import graph: no circle, and every arrow runs down the declared layers.

The graph is read from the package's own files with ``ast``: every import of a ``placeborag``
module counts, at the top of a module, inside a function or under ``TYPE_CHECKING``, and so do
the module names a lazy namespace loads by name (the values of its table, the arguments of
``import_module`` and ``lazy_namespace``). A circle says that a piece lives on the wrong side
of the modules around it; an arrow running back up says that a lower layer knows a higher one.

``python tests/test_import_graph.py`` prints the circles and the wrong-way arrows.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "placeborag"

# The layers, lowest first. A module may import modules of its own layer and of the layers
# below it; the layers of one rank (the explorer and the adapters) do not import each other.
BASE = frozenset(
    {
        # the helpers every layer uses: errors, checks, limits, hashing, threads, files
        "placeborag._errors",
        "placeborag._validation",
        "placeborag._limits",
        "placeborag._hashing",
        "placeborag._threads",
        "placeborag._files",
        "placeborag._lazy",
        # the vocabulary the doubles are built from: records, metadata, the filter language,
        # profiles, options, ranking, the embedder contract, results, scripts, failures
        "placeborag._metadata",
        "placeborag._filters",
        "placeborag._profiles",
        "placeborag._options",
        "placeborag._records",
        "placeborag._ranking",
        "placeborag._embedding",
        "placeborag._results",
        "placeborag._querylog",
        "placeborag._script",
        "placeborag._failures",
    }
)
PUBLIC = frozenset({"placeborag", "placeborag.toolkit", "placeborag.query_engine"})
# The pytest plugin's own parts (the audit, the failure report: it saves a failing store as an
# explorer scenario) sit with it, above the explorer.
ENTRY = frozenset(
    {
        "placeborag._pytest_plugin",
        "placeborag._audit",
        "placeborag._failure_report",
        "placeborag._cli",
        "placeborag.__main__",
    }
)
LAYER_ORDER = ("core base", "core", "public namespaces", "explore | integrations", "plugin, cli")

# Circles that are being removed elsewhere, listed once; whoever removes one deletes its line
# (the test fails while a listed circle is gone, so the list stays exact).
KNOWN_CIRCLES: frozenset[frozenset[str]] = frozenset()


def layer(module: str) -> tuple[int, str]:
    """The rank and the name of the layer ``module`` belongs to."""
    if module in ENTRY:
        return 4, "plugin, cli"
    if module.startswith("placeborag.explore"):
        return 3, "explore"
    if module.startswith("placeborag.integrations"):
        return 3, "integrations"
    if module in PUBLIC:
        return 2, "public namespaces"
    if module in BASE:
        return 0, "core base"
    return 1, "core"


def modules_of(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _strings(node: ast.AST) -> Iterable[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def imported(
    source: str, module: str, modules: Iterable[str], *, package: bool = False
) -> set[str]:
    """The modules of ``modules`` that ``source`` (the text of ``module``) imports."""
    known = set(modules)

    def owner(dotted: str) -> str | None:
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    names: list[str] = []  # imported by a statement: the module or a name in it
    by_name: list[str] = []  # loaded by name: counted when the string is a module's name
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, up level - 1 more
                parts = module.split(".") if package else module.split(".")[:-1]
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            names += [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        elif isinstance(node, ast.Dict):  # a lazy namespace's table: name -> module
            by_name += [v.value for v in node.values if isinstance(v, ast.Constant)]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "lazy_namespace"):
                by_name += [s for arg in node.args for s in _strings(arg)]
    found = {owner(name) for name in names} | {name for name in by_name if name in known}
    return {m for m in found if m is not None and m != module and m.startswith("placeborag")}


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = modules_of(package)
    return {
        name: imported(
            path.read_text(encoding="utf-8"), name, modules, package=path.name == "__init__.py"
        )
        for name, path in modules.items()
    }


def circles(graph: Mapping[str, Iterable[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return sorted(found, key=sorted)


def wrong_way(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, str]]:
    """Every arrow into a higher layer, or across to a sibling layer of the same rank."""
    out = []
    for source in sorted(graph):
        rank, name = layer(source)
        for target in sorted(graph[source]):
            to_rank, to_name = layer(target)
            if to_rank > rank or (to_rank == rank and to_name != name):
                out.append((source, target))
    return out


def report(graph: Mapping[str, Iterable[str]]) -> str:
    lines = [f"layers, lowest first: {' -> '.join(LAYER_ORDER)}", "circles:"]
    for component in circles(graph):
        known = " (known: removed elsewhere)" if component in KNOWN_CIRCLES else ""
        lines.append(f"  {', '.join(sorted(component))}{known}")
        lines += [
            f"    {a} -> {b}" for a in sorted(component) for b in sorted(graph[a]) if b in component
        ]
    lines.append("arrows running back up (or across):")
    for source, target in wrong_way(graph):
        lines.append(f"  {source} [{layer(source)[1]}] -> {target} [{layer(target)[1]}]")
    return "\n".join(lines)


# -- the checker finds what it is for -----------------------------------------------------------

MODULES = (
    "placeborag",
    "placeborag._a",
    "placeborag._b",
    "placeborag._errors",
    "placeborag.explore",
    "placeborag.explore._c",
)


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("from placeborag._a import x\n", {"placeborag._a"}),
        ("import placeborag._a.deep\n", {"placeborag._a"}),
        ("from placeborag import _a, FakeEmbedder\n", {"placeborag._a", "placeborag"}),
        ("def f():\n    from placeborag._a import x\n", {"placeborag._a"}),
        ("if TYPE_CHECKING:\n    from placeborag._a import x\n", {"placeborag._a"}),
        ("from . import _c\n", {"placeborag.explore._c"}),
        ("from .._a import x\n", {"placeborag._a"}),
        ("_LAZY = {'x': 'placeborag._a'}\n", {"placeborag._a"}),
        ("importlib.import_module('placeborag.explore._c')\n", {"placeborag.explore._c"}),
        ("lazy_namespace(g, T, ('placeborag._b',))\n", {"placeborag._b"}),
        # a logger or a resource named after a module is no import
        ("logging.getLogger('placeborag.explore')\nfiles('placeborag')\n", set()),
        ("import numpy\nfrom placeborag.explore._d import y\n", {"placeborag.explore"}),
    ],
)
def test_the_checker_counts_every_form_of_an_import(source, found):
    assert imported(source, "placeborag.explore._d", MODULES) == found


def test_the_checker_finds_a_circle_through_a_function_level_import():
    graph = {
        "placeborag._a": {"placeborag._b"},
        "placeborag._b": {"placeborag._c", "placeborag._errors"},
        "placeborag._c": {"placeborag._a"},
        "placeborag._errors": set(),
    }
    assert circles(graph) == [frozenset({"placeborag._a", "placeborag._b", "placeborag._c"})]
    assert circles({**graph, "placeborag._c": set()}) == []


def test_the_checker_finds_an_arrow_running_back_up_or_across():
    graph = {
        "placeborag._errors": {"placeborag._store"},  # base -> core
        "placeborag._store": {"placeborag.toolkit", "placeborag._errors"},  # core -> public
        "placeborag.toolkit": {"placeborag._store"},
        "placeborag.explore._app": {"placeborag.integrations._shared", "placeborag.toolkit"},
        "placeborag.integrations._shared": {"placeborag"},
        "placeborag": set(),
        "placeborag._cli": {"placeborag.explore._app"},
    }
    assert wrong_way(graph) == [
        ("placeborag._errors", "placeborag._store"),
        ("placeborag._store", "placeborag.toolkit"),
        ("placeborag.explore._app", "placeborag.integrations._shared"),
    ]


def test_the_graph_is_read_from_every_module_of_the_package():
    graph = import_graph()
    assert {"placeborag", "placeborag._store", "placeborag.explore._app"} <= set(graph)
    assert "placeborag._validation" in graph["placeborag._store"]
    assert "placeborag._store" in graph["placeborag"]  # through the lazy table


# -- the package ---------------------------------------------------------------------------------


def test_every_base_module_exists():
    assert sorted(BASE - set(modules_of())) == []


def test_no_import_circle_but_the_known_ones():
    found = circles(import_graph())
    assert [sorted(c) for c in found if c not in KNOWN_CIRCLES] == []
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in found]
    assert gone == [], "a known circle is gone: delete it from KNOWN_CIRCLES"


def test_no_arrow_runs_back_up_the_layers():
    assert wrong_way(import_graph()) == []


if __name__ == "__main__":
    sys.stdout.write(report(import_graph(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE)))
    sys.stdout.write("\n")
