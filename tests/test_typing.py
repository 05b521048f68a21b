"""What a type checker sees of the package: the py.typed marker and every public name.

mypy itself runs in `make test` (configured in pyproject.toml), not here.
"""

import ast
import importlib.resources
from pathlib import Path

import placeborag


def test_the_package_ships_the_py_typed_marker():
    assert importlib.resources.files("placeborag").joinpath("py.typed").is_file()


def _reexports_for_type_checkers():
    """(name, module) of each `from module import name as name` under `if TYPE_CHECKING:`."""
    tree = ast.parse(Path(placeborag.__file__).read_text(encoding="utf-8"))
    found = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    for alias in statement.names:
                        if alias.asname == alias.name:
                            found[alias.name] = statement.module
    return found


def test_every_lazily_loaded_public_name_is_a_reexport_a_strict_checker_accepts():
    # A strict mypy or pyright refuses `from placeborag import X` unless the package marks X
    # as re-exported: `from module import X as X` is that mark.
    # The names that left (placeborag._DEPRECATED) stay visible to type checkers until removed.
    leaving = {name: module for name, (module, _) in placeborag._DEPRECATED.items()}
    assert _reexports_for_type_checkers() == {**placeborag._LAZY, **leaving}
