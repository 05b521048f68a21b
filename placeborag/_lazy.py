"""Public namespaces whose names load on first use (``placeborag``, ``placeborag.query_engine``).

``import placeborag`` runs in every pytest session of every project that installs us (to load
the plugin), so a namespace maps each public name to the private module defining it and
imports that module only when the name is first read. A name that has left a namespace keeps
working there for a while: each read gives a ``DeprecationWarning`` saying what to use instead.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def lazy_namespace(
    namespace: dict[str, Any],
    table: Mapping[str, str],
    elsewhere: tuple[str, ...] = (),
    deprecated: Mapping[str, tuple[str, str]] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a namespace built from ``table``.

    ``namespace`` is the namespace module's ``globals()``; ``table`` maps each public name to the
    module defining it under that name. A name read once is cached in ``namespace``. An unknown
    name raises ``AttributeError`` saying which of the namespaces ``elsewhere`` has it (they are
    imported only then), or else naming the nearest public names. ``deprecated`` maps a name
    that has left the namespace to its module and what to use instead: it still resolves, never
    cached, so every read warns (``DeprecationWarning``), and ``dir()`` no longer lists it.
    """
    module = namespace["__name__"]
    gone = deprecated or {}

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None and name in gone:
            home, instead = gone[name]
            warnings.warn(
                f"{module}.{name} is deprecated and will be removed in a future release: {instead}",
                DeprecationWarning,
                stacklevel=2,
            )
            return getattr(importlib.import_module(home), name)
        if source is None:
            if name.startswith("__"):  # copy, pickle and inspect probe for dunders: no hint
                raise AttributeError(f"module {module!r} has no attribute {name!r}")
            from placeborag._validation import did_you_mean

            homes = [ns for ns in elsewhere if name in importlib.import_module(ns).__all__]
            hint = f"; it is in {homes[0]}" if homes else did_you_mean(name, table)
            raise AttributeError(f"module {module!r} has no attribute {name!r}{hint}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(namespace["__all__"]))

    return __getattr__, __dir__
