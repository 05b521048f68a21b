"""Print the public names of every public namespace (its ``__all__``), one namespace a line.

Run it from the repository's root: ``python scripts/public_names.py``.
"""

from __future__ import annotations

import importlib

NAMESPACES = (
    "placeborag",
    "placeborag.query_engine",
    "placeborag.toolkit",
    "placeborag.explore",
    "placeborag.integrations.langchain",
    "placeborag.integrations.llama_index",
    "placeborag.integrations.haystack",
)


def main() -> None:
    for name in NAMESPACES:
        try:
            names = sorted(importlib.import_module(name).__all__)
        except ImportError as error:  # an extra that is not installed
            print(f"{name}: not importable here ({error})")
            continue
        print(f"{name} ({len(names)}): {', '.join(names)}")


if __name__ == "__main__":
    main()
