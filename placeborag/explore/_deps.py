"""Optional imports of the explorer: each failure names the extra that provides the package."""

from __future__ import annotations

import importlib
from types import ModuleType

from placeborag.toolkit import shown

__all__ = ["EXTRA_HINT", "optional"]

EXTRA_HINT = "pip install 'placeborag[explore]'"


def optional(module: str) -> ModuleType:
    """Import ``module`` or raise an ImportError that says how to install it; a package that
    is installed but fails to import is named with its own error, not called missing."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        parts = module.split(".")
        top = parts[0]
        itself = {".".join(parts[: i + 1]) for i in range(len(parts))}  # module or a parent
        if isinstance(exc, ModuleNotFoundError) and exc.name in itself:
            raise ImportError(
                f"placeborag.explore needs {shown(top)}, which is not installed; {EXTRA_HINT}"
            ) from exc
        raise ImportError(
            f"placeborag.explore needs {shown(top)}, which is installed but failed to import "
            f"{shown(module)}: {type(exc).__name__}: {exc}"
        ) from exc
