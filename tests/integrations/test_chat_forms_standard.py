"""LangChain's standard suites run against the query-engine doubles' LangChain forms, offline."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("langchain_core")
langchain_tests = pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import RetrieversIntegrationTests  # noqa: E402
from langchain_tests.unit_tests import ChatModelUnitTests  # noqa: E402

from placeborag import Match  # noqa: E402
from placeborag.integrations.langchain import (  # noqa: E402
    PlaceboChatModel,
    PlaceboKnowledgeRetriever,
)
from placeborag.query_engine import ScriptedChatModel, StubKnowledgeStore, search_on_topics  # noqa: E402


def _mark_async_tests(*suites: type) -> None:
    """Mark the suites' coroutine tests for pytest-asyncio's strict mode, in place."""
    for suite in suites:
        for klass in suite.__mro__:
            for name, value in vars(klass).items():
                if (
                    name.startswith("test_")
                    and inspect.iscoroutinefunction(value)
                    and not any(m.name == "asyncio" for m in getattr(value, "pytestmark", []))
                ):
                    pytest.mark.asyncio(value)


_mark_async_tests(ChatModelUnitTests, RetrieversIntegrationTests)


class TestPlaceboChatModelUnit(ChatModelUnitTests):
    @property
    def chat_model_class(self) -> type[PlaceboChatModel]:
        return PlaceboChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"model": ScriptedChatModel.following(search_on_topics(["weather"]))}

    @property
    def has_tool_calling(self) -> bool:
        return True

    @property
    def has_structured_output(self) -> bool:
        return False


def _knowledge() -> StubKnowledgeStore:
    matches = [Match(f"refund#{n}", f"refund fact {n}", {"source": "wiki"}, 1.0) for n in range(5)]
    return StubKnowledgeStore(results={"how do I get a refund": matches})


class TestPlaceboKnowledgeRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[PlaceboKnowledgeRetriever]:
        return PlaceboKnowledgeRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": _knowledge(), "identity": {"user": "alice"}}

    @property
    def retriever_query_example(self) -> str:
        return "how do I get a refund"
