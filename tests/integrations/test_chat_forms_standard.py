"""LangChain's standard chat-model unit suite, run against PlaceboChatModel, offline."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("langchain_core")
langchain_tests = pytest.importorskip("langchain_tests")

from langchain_tests.unit_tests import ChatModelUnitTests  # noqa: E402

from placeborag import ScriptedChatModel, search_on_topics  # noqa: E402
from placeborag.integrations.langchain import PlaceboChatModel  # noqa: E402

for _klass in ChatModelUnitTests.__mro__:
    for _name, _value in vars(_klass).items():
        if (
            _name.startswith("test_")
            and inspect.iscoroutinefunction(_value)
            and not any(m.name == "asyncio" for m in getattr(_value, "pytestmark", []))
        ):
            pytest.mark.asyncio(_value)


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
