"""The help desk's source lookup: which passages an answer in the caller's language may cite.

The smallest piece of application code worth a test of its own, and the one the explorer's
export calls in ``docs/explorer.md`` (``build_export(..., under_test="ragdemo.search:sources")``):
it asks the store for the caller's language only, and trusts what comes back.
"""

from __future__ import annotations

from ragdemo.protocols import VectorStore

#: How many passages an answer cites at most.
SOURCES = 5


def sources(store: VectorStore, question: str, *, lang: str = "hu") -> list[str]:
    """The ids of the passages in ``lang`` an answer to ``question`` may cite, best first."""
    return [hit.id for hit in store.query(question, k=SOURCES, where={"lang": lang})]
