"""LangChain's own standard test suites, run in full against the placeborag adapters, offline."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain_core")
langchain_tests = pytest.importorskip("langchain_tests")

from langchain_core.vectorstores import VectorStore  # noqa: E402
from langchain_tests.integration_tests import (  # noqa: E402
    EmbeddingsIntegrationTests,
    RetrieversIntegrationTests,
    VectorStoreIntegrationTests,
)
from langchain_tests.unit_tests import EmbeddingsUnitTests  # noqa: E402

from placeborag import FakeEmbedder, FakeVectorStore  # noqa: E402
from placeborag.integrations.langchain import (  # noqa: E402
    PlaceboEmbeddings,
    PlaceboRetriever,
    PlaceboVectorStore,
)


def _mark_async_tests(*suites: type) -> None:
    """Mark the suites' coroutine tests for pytest-asyncio's strict mode.

    langchain_tests leaves them unmarked (LangChain runs pytest-asyncio in auto mode). The
    suite's own functions are marked in place rather than overridden, because the suite fails
    any subclass that overrides one of its tests.
    """
    for suite in suites:
        for klass in suite.__mro__:
            for name, value in vars(klass).items():
                marks = getattr(value, "pytestmark", [])
                if (
                    name.startswith("test_")
                    and inspect.iscoroutinefunction(value)
                    and not any(mark.name == "asyncio" for mark in marks)
                ):
                    pytest.mark.asyncio(value)


_mark_async_tests(
    EmbeddingsUnitTests,
    EmbeddingsIntegrationTests,
    VectorStoreIntegrationTests,
    RetrieversIntegrationTests,
)


class TestPlaceboEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[PlaceboEmbeddings]:
        return PlaceboEmbeddings


class TestPlaceboEmbeddingsIntegration(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[PlaceboEmbeddings]:
        return PlaceboEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"embedder": FakeEmbedder(model_name="standard-suite", dimensions=32)}


class TestPlaceboVectorStoreOverLangChainEmbeddings(VectorStoreIntegrationTests):
    """The suite's own embeddings (``DeterministicFakeEmbedding``) ranked by a FakeVectorStore."""

    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:
        yield PlaceboVectorStore(self.get_embeddings())


class TestPlaceboVectorStoreOverFakeEmbedder(VectorStoreIntegrationTests):
    """The same suite with placeborag's embedder, under the Qdrant-style profile."""

    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:
        yield PlaceboVectorStore(PlaceboEmbeddings(), profile="qdrant")


_KNOWLEDGE_BASE = [
    ("refund-window", "refunds are possible within 30 days of delivery"),
    ("refund-how", "request a refund from the orders page"),
    ("refund-card", "refunds reach your card within ten business days"),
    ("ship-times", "standard shipping takes three to five days"),
    ("ship-lost", "report a lost parcel after seven days without tracking updates"),
]


def _filled_store() -> FakeVectorStore:
    store = FakeVectorStore()
    store.upsert_many([i for i, _ in _KNOWLEDGE_BASE], [t for _, t in _KNOWLEDGE_BASE])
    return store


class TestPlaceboRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[PlaceboRetriever]:
        return PlaceboRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": _filled_store()}

    @property
    def retriever_query_example(self) -> str:
        return "how do I get a refund"
