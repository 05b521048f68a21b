"""The export's modules import downwards only: the proof types live below the export and the
proof, and neither imports the other back (issue #37's circle `_export` <-> `_proof`)."""

from __future__ import annotations

import ast
from pathlib import Path

import placeborag.explore

EXPLORE = Path(placeborag.explore.__file__).parent
EXPORT_MODULES = ("_export", "_proof", "_verdict", "_export_names", "_application")


def _imports(module: str) -> set[str]:
    """The ``placeborag.explore`` modules ``module`` imports anywhere in its text (at the top,
    inside a function, or under ``TYPE_CHECKING``)."""
    tree = ast.parse((EXPLORE / f"{module}.py").read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            "placeborag.explore."
        ):
            found.add(node.module.rsplit(".", 1)[1])
        elif isinstance(node, ast.Import):
            found |= {
                a.name.rsplit(".", 1)[1]
                for a in node.names
                if a.name.startswith("placeborag.explore.")
            }
    return found


def test_no_module_of_the_export_is_reached_again_from_what_it_imports():
    graph = {module: _imports(module) for module in EXPORT_MODULES}
    for start in EXPORT_MODULES:
        seen, stack = set(), list(graph[start])
        while stack:
            module = stack.pop()
            assert module != start, f"{start} imports itself back through {sorted(seen)}"
            if module in seen or module not in graph:
                continue
            seen.add(module)
            stack.extend(graph[module])


def test_the_proof_imports_only_the_verdicts_types():
    assert _imports("_proof") == {"_verdict"}
    assert _imports("_verdict") == set()
