"""The query engine's doubles, all from placeborag, and a factory for the engine under test.

* the chat model: ``ScriptedChatModel`` (its search decision scripted per test, or a rule);
* the knowledge store: ``StubKnowledgeStore`` with scripted hybrid results per standalone
  query, recording the identity of every call, and an access rule that withholds HR records
  from anyone outside the ``hr`` group;
* the candidate cache: ``CandidateCache`` (exact standalone query + identity);
* sessions and conversations: ``Sessions``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from qe_support import RESULTS, VPN_PAGE, StaticWeb, hr_only
from ragdemo import Budget, ChatStore, QueryEngine

from placeborag.query_engine import CandidateCache, ScriptedChatModel, Sessions, StubKnowledgeStore


@pytest.fixture
def knowledge() -> StubKnowledgeStore:
    return StubKnowledgeStore(results=RESULTS, access=hr_only)


@pytest.fixture
def cache() -> CandidateCache:
    return CandidateCache()


@pytest.fixture
def web() -> StaticWeb:
    return StaticWeb({"vpn client linux": [VPN_PAGE]})


@pytest.fixture
def sessions() -> Sessions:
    return Sessions()


@pytest.fixture
def alice(sessions):
    return sessions.open("alice", groups=["support"])


@pytest.fixture
def bob(sessions):
    return sessions.open("bob", groups=["hr"])


@pytest.fixture
def make_engine(knowledge, cache, web, bugs: frozenset[str]) -> Callable[..., QueryEngine]:
    """An engine over the doubles; ``model`` (a ScriptedChatModel) or ``models`` required."""

    def make(*, model: ScriptedChatModel | None = None, **options: Any) -> QueryEngine:
        if model is not None:
            options["models"] = {"default": model}
        options.setdefault("knowledge", knowledge)
        options.setdefault("cache", cache)
        options.setdefault("web", web)
        options.setdefault("store", ChatStore(bugs=bugs))
        options.setdefault("budget", Budget(window=4096, reserve=512, bugs=bugs))
        return QueryEngine(bugs=bugs, **options)

    return make
