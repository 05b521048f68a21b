"""Markers, fixtures and the two alternative runs of the example tests.

Two environment variables change what the suite runs against (``measure_random_mock.py`` and
the meta-tests set them in a subprocess; a plain ``pytest examples`` sets neither):

* ``RAGDEMO_EMBEDDER=random``: every embedder is a random-vector mock seeded with
  ``RAGDEMO_SEED`` (default 0) instead of a ``FakeEmbedder``, the kind of mock placeborag's
  README argues against. Tests that use no embedder (the query engine's) are deselected.
* ``RAGDEMO_MUTATE=1``: each test marked ``catches(...)`` runs on the correct pipeline and then
  once per bug it names, with that bug switched on; every other test is deselected.

``RAGDEMO_REPORT=<path>`` appends one JSON line per test outcome to ``path``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from ragdemo import BUGS, Document, Pipeline

# unit, integration, p0 and p1 are registered by placeborag's plugin from the
# `placeborag_markers` option in pyproject.toml; only the example's own machinery is here.
MARKERS = {
    "catches(*bugs)": "the ragdemo bug switches this test exists to catch",
    "meta": "runs the suite in a subprocess (mutation and random-vector runs)",
}


def pytest_configure(config: pytest.Config) -> None:
    for name, help in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {help}")


def _mutating() -> bool:
    return os.environ.get("RAGDEMO_MUTATE") == "1"


def _caught(item: pytest.Item | pytest.Function) -> list[str]:
    return [bug for marker in item.iter_markers("catches") for bug in marker.args]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if _mutating() and "ragdemo_bug" in metafunc.fixturenames:
        bugs = [b for m in metafunc.definition.iter_markers("catches") for b in m.args]
        unknown = sorted(set(bugs) - BUGS.keys())
        if unknown:
            raise pytest.UsageError(f"{metafunc.definition.nodeid}: unknown bug {unknown[0]!r}")
        if bugs:
            metafunc.parametrize(
                "ragdemo_bug", [None, *bugs], ids=["correct", *bugs], indirect=True
            )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    inner = "RAGDEMO_REPORT" in os.environ
    keep, drop = [], []
    for item in items:
        if inner and item.get_closest_marker("meta"):
            drop.append(item)  # a subprocess run never starts another one
        elif _mutating() and not (_caught(item) and "ragdemo_bug" in item.fixturenames):
            drop.append(item)
        elif _random_vectors() and "fake_embedder" not in item.fixturenames:
            drop.append(item)  # no embedder, so random vectors cannot change its outcome
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    path = os.environ.get("RAGDEMO_REPORT")
    if path and (report.when == "call" or report.outcome != "passed"):
        callspec = getattr(item, "callspec", None)
        record = {
            "test": getattr(item, "originalname", item.name),
            "nodeid": item.nodeid,
            "bug": callspec.params.get("ragdemo_bug") if callspec else None,
            "when": report.when,
            "outcome": "xfailed" if getattr(report, "wasxfail", None) else report.outcome,
            "catches": _caught(item),
        }
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    return report


# -- the random-vector mock --------------------------------------------------------------------


class RandomVectorEmbedder:
    """Seeded random vectors of the right shape: every call draws fresh ones.

    This is what generic LLM mocks hand back for embeddings. The shape is right and a fixed
    seed makes a run repeatable, but a text gets a different vector on every call, so no
    ranking means anything.
    """

    def __init__(self, *, model_name: str = "random-mock", dimensions: int = 256, seed: int = 0):
        self.model_name = model_name
        self.dimensions = dimensions
        self._rng = np.random.default_rng(seed)

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        return self._rng.standard_normal((len(texts), self.dimensions))

    def embed(self, text: str) -> list[float]:
        return self.embed_batch([text])[0].tolist()


def _random_vectors() -> bool:
    return os.environ.get("RAGDEMO_EMBEDDER") == "random"


def _seed() -> int:
    return int(os.environ.get("RAGDEMO_SEED", "0"))


@pytest.fixture
def fake_embedder(fake_embedder: Any) -> Any:
    """placeborag's fixture, or in a random-vector run a mock of the same name and width."""
    if _random_vectors():
        return RandomVectorEmbedder(
            model_name=fake_embedder.model_name, dimensions=fake_embedder.dimensions, seed=_seed()
        )
    return fake_embedder


@pytest.fixture
def make_embedder(fake_embedder: Any) -> Callable[..., Any]:
    """Another embedder like ``fake_embedder`` but for a different model name."""
    from placeborag import FakeEmbedder

    def make(model_name: str) -> Any:
        if _random_vectors():
            return RandomVectorEmbedder(
                model_name=model_name, dimensions=fake_embedder.dimensions, seed=_seed() + 1000
            )
        return FakeEmbedder(model_name=model_name, dimensions=fake_embedder.dimensions)

    return make


# -- the pipeline under test -------------------------------------------------------------------


@pytest.fixture
def ragdemo_bug(request: pytest.FixtureRequest) -> str | None:
    return getattr(request, "param", None)


@pytest.fixture
def bugs(ragdemo_bug: str | None) -> frozenset[str]:
    """The bug switched on for this run: none, except in a mutation run."""
    return frozenset() if ragdemo_bug is None else frozenset({ragdemo_bug})


@pytest.fixture
def open_store(fake_vector_store: Any) -> Callable[[Any], Any]:
    """Opens a FakeVectorStore configured like ``fake_vector_store`` (so by the marker)."""
    from placeborag import FakeVectorStore

    def open_(embedder: Any) -> Any:
        return FakeVectorStore(
            embedder=embedder,
            profile=fake_vector_store.profile,
            filter_mode=fake_vector_store.filter_mode,
            recall=fake_vector_store.recall,
            visibility=fake_vector_store.visibility,
        )

    return open_


@pytest.fixture
def make_pipeline(
    fake_embedder: Any, open_store: Callable[[Any], Any], bugs: frozenset[str]
) -> Callable[..., Pipeline]:
    """A pipeline over the fixtures, with the corpus ingested unless ``docs`` says otherwise."""
    from demo_corpus import CORPUS

    def make(*, docs: Sequence[Document] = CORPUS, **options: Any) -> Pipeline:
        options.setdefault("embedder", fake_embedder)
        pipeline = Pipeline(open_store=open_store, bugs=bugs, **options)
        pipeline.ingest(docs)
        return pipeline

    return make
