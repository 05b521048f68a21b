"""A pytest plugin that makes llama-index-core's own tests use ``PlaceboLlamaVectorStore``.

Loaded with ``-p llama_swap`` into a run of llama-index-core's published tests (see
``run_llama_suites.py``). After collection it rebinds, in every collected test module that
names it, ``SimpleVectorStore`` to ``PlaceboLlamaVectorStore``: exactly the one-line swap a user
makes (``SimpleVectorStore()`` becomes ``PlaceboLlamaVectorStore()``), and nothing else. Stores
an index builds by default (``StorageContext.from_defaults()``) stay LlamaIndex's own.
"""

from __future__ import annotations

import json
import os
from typing import Any

from placeborag.integrations.llama_index import PlaceboLlamaVectorStore

_NAME = "SimpleVectorStore"


def pytest_collection_modifyitems(items: list[Any]) -> None:
    for module in {id(item.module): item.module for item in items if item.module}.values():
        if isinstance(getattr(module, _NAME, None), type):
            setattr(module, _NAME, PlaceboLlamaVectorStore)


def pytest_sessionfinish(session: Any) -> None:
    """Write which test modules hold which store (``PLACEBO_SWAP_REPORT``, if set)."""
    path = os.environ.get("PLACEBO_SWAP_REPORT")
    if not path:
        return
    swapped, original = [], []
    for item in session.items:
        bound = getattr(item.module, _NAME, None)
        if bound is None:
            continue
        name = item.module.__name__
        (swapped if bound is PlaceboLlamaVectorStore else original).append(name)
    with open(path, "w", encoding="utf-8") as stream:
        json.dump({"swapped": sorted(set(swapped)), "original": sorted(set(original))}, stream)
