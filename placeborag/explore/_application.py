"""The application's function an exported test calls (``build_export(..., under_test=)``).

:func:`application` resolves ``"package.module:function"`` (or the function itself) to a
function the exported module can import by name, and the folder its package is imported
from, which the proof puts on the path; :class:`Application` calls it with the designed store.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placeborag import FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag.explore._export_names import MODULE_NAMES
from placeborag.explore._literals import dotted_name, identifier, plain
from placeborag.toolkit import shown

__all__ = ["Application", "application"]


@dataclass
class Application:
    """The application's function an export calls: where it is imported from, under which
    name the module calls it, and the folder its package is imported from (for the proof)."""

    module: str
    function: str
    call: Callable[..., Any]
    root: str
    alias: str = ""
    test: str = ""

    def named(self, fixture: str) -> Application:
        """Its name in the module (``app_<name>`` where it would take one of the module's
        own, or be collected as a test) and the test's."""
        taken = MODULE_NAMES | {fixture}
        alias = self.function
        if alias in taken or alias.startswith("test"):
            alias = f"app_{alias}"
        test = f"test_{identifier(self.function, 40) or 'the_application'}_on_the_designed_store"
        return dataclasses.replace(self, alias=alias, test=test)

    def answer(self, store: FakeVectorStore, query: str) -> Any:
        """What the function returns for the designed store, as a plain value."""
        given = f"{self.module}:{self.function}"
        try:
            returned = self.call(store, query)
        except Exception as exc:
            raise PlaceboragValueError(
                f"under_test={given!r} raised {type(exc).__name__} on the designed store: {exc}"
            ) from exc
        try:
            return plain(returned, f"what {given} returned")
        except (PlaceboragTypeError, PlaceboragValueError) as exc:
            raise PlaceboragTypeError(
                f"{exc}; under_test must return a plain value a test can compare (the ids, "
                "a text, a list or dict of them)"
            ) from None


def application(under_test: Any) -> Application | None:
    """``under_test`` resolved to the function it names, importable from where it says."""
    if under_test is None:
        return None
    if isinstance(under_test, str):
        module, sep, function = under_test.partition(":")
        if not (sep and module and function):
            raise PlaceboragValueError(
                f"under_test={shown(under_test)} must be 'package.module:function' (or the "
                "function itself)"
            )
    elif callable(under_test):
        module_name = getattr(under_test, "__module__", None)
        qualname = getattr(under_test, "__qualname__", None)
        if (
            not isinstance(module_name, str)
            or not isinstance(qualname, str)
            or (module_name == "__main__")
        ):
            raise PlaceboragValueError(
                f"under_test={shown(under_test)} must be a function the exported module can "
                "import (defined at the top of a module other than __main__), or "
                "'package.module:function'"
            )
        module, function = module_name, qualname
    else:
        raise PlaceboragTypeError(
            f"under_test={shown(under_test)} must be None, 'package.module:function' or a "
            f"function, not {type(under_test).__name__}"
        )
    module = dotted_name(module, "under_test's module")
    if "." in function or not function.isidentifier():
        raise PlaceboragValueError(
            f"under_test={shown(under_test)}: {shown(function)} is not a function at the top of "
            f"{module}, so the exported module cannot import it"
        )
    function = dotted_name(function, "under_test's function")
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        raise PlaceboragValueError(
            f"under_test={shown(under_test)}: {module} cannot be imported ({exc})"
        ) from None
    call = getattr(imported, function, None)
    if not callable(call) or (callable(under_test) and call is not under_test):
        raise PlaceboragValueError(
            f"under_test={shown(under_test)}: {module} has no function {function!r} "
            "(the exported module imports it from there)"
        )
    return Application(module, function, call, _import_root(imported, module))


def _import_root(imported: Any, module: str) -> str:
    """The folder on ``sys.path`` that ``module`` was imported from."""
    path = Path(getattr(imported, "__file__", None) or ".").resolve()
    depth = module.count(".") + (1 if path.name == "__init__.py" else 0)
    return str(path.parents[depth])
