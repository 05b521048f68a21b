"""A pytest plugin that swaps LangChain's test doubles for placeborag's, at run time.

Loaded with ``-p placebo_swap`` into a run of LangChain's own published unit tests (see
``run_suites.py``). Before any test module is imported it rebinds, in LangChain's modules:

* ``DeterministicFakeEmbedding`` and ``FakeEmbeddings`` to :class:`SwappedFakeEmbedding`, a
  ``PlaceboEmbeddings`` over a ``FakeEmbedder`` of the requested ``size``;
* ``InMemoryVectorStore`` to ``PlaceboVectorStore`` (its default profile is ``"langchain"``).

langchain-classic's retriever tests use a toy store of their own,
``tests.unit_tests.indexes.test_indexing.InMemoryVectorStore``; when that module is imported,
its class is replaced by :class:`SwappedToyStore`, a ``PlaceboVectorStore`` that takes the
toy's one option (``permit_upserts``). Nothing of theirs is edited: the swap is name binding.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
from typing import Any

import langchain_core.embeddings as _embeddings
import langchain_core.embeddings.fake as _fake
import langchain_core.vectorstores as _vectorstores
import langchain_core.vectorstores.in_memory as _in_memory

from placeborag import FakeEmbedder
from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore


class SwappedFakeEmbedding(PlaceboEmbeddings):
    """``DeterministicFakeEmbedding(size=n)`` as a ``PlaceboEmbeddings`` of ``n`` dimensions."""

    def __init__(self, *, size: int, **kwargs: Any) -> None:
        super().__init__(FakeEmbedder(dimensions=size, **kwargs))
        self.size = size


class SwappedToyStore(PlaceboVectorStore):
    """langchain-classic's toy dict store as a ``PlaceboVectorStore``.

    The toy refuses an existing id unless ``permit_upserts=True``: the store's
    ``on_existing_id`` says the same.
    """

    def __init__(self, *, permit_upserts: bool = False) -> None:
        super().__init__(on_existing_id="replace" if permit_upserts else "error")
        self.permit_upserts = permit_upserts


# The names of the doubles the swap rebinds (in LangChain's modules and in classic's tests).
_ORIGINALS = ("DeterministicFakeEmbedding", "FakeEmbeddings", "InMemoryVectorStore")

for _module in (_embeddings, _fake):
    _module.DeterministicFakeEmbedding = SwappedFakeEmbedding  # type: ignore[attr-defined]
    _module.FakeEmbeddings = SwappedFakeEmbedding  # type: ignore[attr-defined]
for _module in (_vectorstores, _in_memory):
    _module.InMemoryVectorStore = PlaceboVectorStore  # type: ignore[attr-defined,misc]

_TOY_MODULE = "tests.unit_tests.indexes.test_indexing"


class _ToyStoreSwap(importlib.abc.MetaPathFinder):
    """Rebinds the toy store right after its module runs, before any other module imports it."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _TOY_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            if hasattr(module, "InMemoryVectorStore"):
                module.InMemoryVectorStore = SwappedToyStore

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _ToyStoreSwap())


def pytest_sessionfinish(session: Any) -> None:
    """Write which test modules saw the swapped names (``PLACEBO_SWAP_REPORT``, if set).

    A test module whose name for a double is not one of ours at the end of the run was not
    swapped; the test that runs this plugin asserts there is none.
    """
    path = os.environ.get("PLACEBO_SWAP_REPORT")
    if not path:
        return
    swapped, original = [], []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith(("tests.", "langchain_tests.")):
            continue
        for attribute in _ORIGINALS:
            bound = getattr(module, attribute, None)
            if not isinstance(bound, type):
                continue
            ours = issubclass(bound, (SwappedFakeEmbedding, PlaceboVectorStore))
            (swapped if ours else original).append(f"{name}.{attribute}")
    with open(path, "w", encoding="utf-8") as stream:
        json.dump({"swapped": swapped, "original": original}, stream)
