"""Differential tests: our adapters against the frameworks' own in-memory stores.

Hypothesis generates operation sequences (writes with and without ids and embeddings, a
repeated id among them, deletes, queries with filters and k, a save and reload) and runs each
on LangChain's ``InMemoryVectorStore`` and ``PlaceboVectorStore`` (the ``"langchain"``
profile), and on LlamaIndex's ``SimpleVectorStore`` and ``PlaceboLlamaVectorStore`` (the
``"qdrant"`` profile: cosine similarities), both sides embedding with the same ``FakeEmbedder``.
Every answer must be the same where the documented semantics agree: the same documents, the
same scores (to float32 rounding: our store holds float32 rows), in the same order except among
exact ties (neither framework defines a tie order; ``docs/profiles.md``).

Each documented difference has its own test below, asserting that the two still differ: the
day a framework (or we) changes, that test fails and the documentation must be updated.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from placeborag import FakeEmbedder, PlaceboragTypeError
from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

EMBEDDER = FakeEmbedder(dimensions=32)
WORDS = ["refund", "policy", "parcel", "ship", "days", "password", "reset", "login"]
IDS = ["a", "b", "c", "d", "e", "f"]
LANGS = ["en", "hu"]
# Scores agree to float32 rounding of the stored unit rows.
TOLERANCE = 1e-5
EXAMPLES = 60

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
metadata = st.fixed_dictionaries({"n": st.integers(0, 4), "lang": st.sampled_from(LANGS)})


def _ranking_agrees(
    ours: Sequence[tuple[str, float]], theirs: Sequence[tuple[str, float]], cut: bool
) -> None:
    """The same scores, and the same documents within every group of tied scores; the last
    group may differ in which documents it keeps when ``k`` cut through it."""
    assert len(ours) == len(theirs)
    assert [s for _, s in ours] == pytest.approx([s for _, s in theirs], abs=TOLERANCE)
    groups: list[list[int]] = []
    for i in range(len(theirs)):
        if groups and abs(theirs[i][1] - theirs[groups[-1][-1]][1]) <= TOLERANCE:
            groups[-1].append(i)
        else:
            groups.append([i])
    for n, group in enumerate(groups):
        if cut and n == len(groups) - 1:
            break
        assert sorted(ours[i][0] for i in group) == sorted(theirs[i][0] for i in group)


def _cut(full: Sequence[tuple[str, float]], k: int) -> bool:
    """True when the k-th and (k+1)-th of the full ranking are tied."""
    return 0 < k < len(full) and abs(full[k - 1][1] - full[k][1]) <= TOLERANCE


# -- LangChain -----------------------------------------------------------------------------------

lc_operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            st.lists(
                st.tuples(texts, metadata, st.one_of(st.none(), st.sampled_from(IDS))),
                min_size=1,
                max_size=4,
            ),
        ),
        st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=3)),
        st.tuples(
            st.just("query"),
            st.tuples(texts, st.integers(0, 7), st.one_of(st.none(), st.sampled_from(LANGS))),
        ),
        st.tuples(st.just("persist"), st.none()),
    ),
    max_size=12,
)


class _LangChainPair:
    def __init__(self) -> None:
        self.theirs = InMemoryVectorStore(PlaceboEmbeddings(EMBEDDER))
        self.ours = PlaceboVectorStore(PlaceboEmbeddings(EMBEDDER))
        self.same: dict[str, str] = {}  # their id -> ours (generated ids differ)

    def add(self, rows: list[tuple[str, dict[str, Any], str | None]]) -> None:
        documents = [Document(page_content=t, metadata=dict(m)) for t, m, _ in rows]
        ids = [i for _, _, i in rows]
        given = ids if any(i is not None for i in ids) else None
        theirs = self.theirs.add_documents(documents, ids=given)
        ours = self.ours.add_documents(documents, ids=given)
        self.same.update(zip(theirs, ours))

    def delete(self, ids: list[str]) -> None:
        self.theirs.delete(ids)
        self.ours.delete(ids)

    def query(self, text: str, k: int, lang: str | None) -> None:
        options: dict[str, Any] = {}
        if lang is not None:
            options["filter"] = lambda d: d.metadata["lang"] == lang
        full_k = len(self.theirs.store) + 1

        def run(store: Any, count: int) -> list[tuple[str, float]]:
            return [
                (d.id, s) for d, s in store.similarity_search_with_score(text, k=count, **options)
            ]

        theirs_full = run(self.theirs, full_k)
        theirs = [(self.same[i], s) for i, s in run(self.theirs, k)]
        _ranking_agrees(run(self.ours, k), theirs, _cut(theirs_full, k))
        assert {d.id: d.page_content for d in self.ours.get_by_ids(list(self.same.values()))} == {
            self.same[d.id]: d.page_content
            for d in self.theirs.get_by_ids(list(self.same))
            if d.id is not None
        }

    def persist(self, _: None) -> None:
        with tempfile.TemporaryDirectory() as folder:
            self.theirs.dump(str(Path(folder) / "theirs.json"))
            self.ours.dump(Path(folder) / "ours.json")
            self.theirs = InMemoryVectorStore.load(
                str(Path(folder) / "theirs.json"), PlaceboEmbeddings(EMBEDDER)
            )
            self.ours = PlaceboVectorStore.load(
                Path(folder) / "ours.json", PlaceboEmbeddings(EMBEDDER)
            )


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(lc_operations)
def test_placebo_vector_store_answers_as_in_memory_vector_store(operations: list[Any]) -> None:
    pair = _LangChainPair()
    for name, argument in operations:
        if name == "query":
            pair.query(*argument)
        else:
            getattr(pair, name)(argument)
    pair.query("refund policy", 10, None)


# -- LlamaIndex ----------------------------------------------------------------------------------

llama_operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            st.lists(
                st.tuples(st.sampled_from(IDS), texts, metadata, st.booleans()),
                min_size=1,
                max_size=4,
            ),
        ),
        st.tuples(st.just("delete"), st.lists(st.sampled_from(IDS), min_size=1, max_size=3)),
        st.tuples(
            st.just("query"),
            st.tuples(
                texts,
                st.integers(1, 7),  # similarity_top_k=0 is a difference, below
                st.one_of(
                    st.none(),
                    st.tuples(st.just("lang"), st.just("=="), st.sampled_from(LANGS)),
                    st.tuples(st.just("n"), st.sampled_from([">", "<=", "=="]), st.integers(0, 4)),
                    st.tuples(st.just("n"), st.just("in"), st.lists(st.integers(0, 4), min_size=1)),
                ),
            ),
        ),
        st.tuples(st.just("persist"), st.none()),
    ),
    max_size=12,
)


class _LlamaPair:
    def __init__(self) -> None:
        self.theirs = SimpleVectorStore()
        self.ours = PlaceboLlamaVectorStore(embedder=EMBEDDER)
        self.model = PlaceboEmbedding(EMBEDDER)

    def add(self, rows: list[tuple[str, str, dict[str, Any], bool]]) -> None:
        # SimpleVectorStore needs every node's embedding; ours embeds a node without one, so
        # that node gets its vector from the same model on their side.
        theirs, ours = [], []
        for node_id, text, meta, with_embedding in rows:
            vector = self.model.get_text_embedding(text)
            theirs.append(TextNode(id_=node_id, text=text, metadata=dict(meta), embedding=vector))
            ours.append(
                TextNode(
                    id_=node_id,
                    text=text,
                    metadata=dict(meta),
                    embedding=vector if with_embedding else None,
                    excluded_embed_metadata_keys=list(meta),
                )
            )
        self.theirs.add(theirs)
        self.ours.add(ours)

    def delete(self, ids: list[str]) -> None:
        self.theirs.delete_nodes(ids)
        self.ours.delete_nodes(ids)

    def query(self, text: str, k: int, condition: Any) -> None:
        filters = None
        if condition is not None:
            key, operator, value = condition
            filters = MetadataFilters(
                filters=[MetadataFilter(key=key, operator=FilterOperator(operator), value=value)]
            )
        vector = self.model.get_query_embedding(text)

        def run(store: Any, count: int) -> list[tuple[str, float]]:
            result = store.query(
                VectorStoreQuery(query_embedding=vector, similarity_top_k=count, filters=filters)
            )
            return list(zip(result.ids, result.similarities))

        theirs_full = run(self.theirs, len(IDS) + 1)
        _ranking_agrees(run(self.ours, k), run(self.theirs, k), _cut(theirs_full, k))

    def persist(self, _: None) -> None:
        # SimpleVectorStore persists to a JSON file; ours pickles (docs/integrations.md).
        with tempfile.TemporaryDirectory() as folder:
            path = str(Path(folder) / "vector_store.json")
            self.theirs.persist(path)
            self.theirs = SimpleVectorStore.from_persist_path(path)
        self.ours = pickle.loads(pickle.dumps(self.ours))


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(llama_operations)
def test_placebo_llama_vector_store_answers_as_simple_vector_store(operations: list[Any]) -> None:
    pair = _LlamaPair()
    for name, argument in operations:
        if name == "query":
            pair.query(*argument)
        else:
            getattr(pair, name)(argument)
    pair.query("refund policy", 10, None)


# -- every documented difference, each asserted to still differ ---------------------------------


def _lc_pair() -> tuple[InMemoryVectorStore, PlaceboVectorStore]:
    theirs = InMemoryVectorStore(PlaceboEmbeddings(EMBEDDER))
    ours = PlaceboVectorStore(PlaceboEmbeddings(EMBEDDER))
    for store in (theirs, ours):
        store.add_texts(["refund policy", "parcel ship"], [{"lang": "en"}, {}], ids=["a", "b"])
    return theirs, ours


def test_difference_delete_without_ids_empties_ours_and_leaves_theirs() -> None:
    theirs, ours = _lc_pair()

    theirs.delete()
    ours.delete()

    assert len(theirs.store) == 2 and len(ours.store) == 0


def test_difference_a_bare_string_is_three_documents_there_and_refused_here() -> None:
    theirs, ours = _lc_pair()

    theirs.add_texts("abc")
    with pytest.raises(PlaceboragTypeError):
        ours.add_texts("abc")

    assert len(theirs.store) == 5 and len(ours.store) == 2


def test_difference_an_int_id_is_kept_as_an_int_there_and_as_its_text_here() -> None:
    theirs, ours = _lc_pair()

    (their_id,) = theirs.add_texts(["login reset"], ids=[7])  # type: ignore[list-item]
    (our_id,) = ours.add_texts(["login reset"], ids=[7])  # type: ignore[list-item]

    assert their_id == 7 and our_id == "7"


def test_difference_load_embeds_again_here_and_keeps_the_vectors_there(tmp_path: Path) -> None:
    theirs, ours = _lc_pair()
    theirs.dump(str(tmp_path / "theirs.json"))
    ours.dump(tmp_path / "ours.json")
    other_vectors = FakeEmbedder(dimensions=8)

    their_copy = InMemoryVectorStore.load(
        str(tmp_path / "theirs.json"), PlaceboEmbeddings(other_vectors)
    )
    our_copy = PlaceboVectorStore.load(tmp_path / "ours.json", PlaceboEmbeddings(other_vectors))

    assert len(their_copy.store["a"]["vector"]) == 32  # the vectors of the file
    assert our_copy.store.records().dimensions == 8  # embedded again by the embedding given


def _llama_pair() -> tuple[SimpleVectorStore, PlaceboLlamaVectorStore]:
    model = PlaceboEmbedding(EMBEDDER)
    theirs, ours = SimpleVectorStore(), PlaceboLlamaVectorStore(embedder=EMBEDDER)
    for store in (theirs, ours):
        store.add(
            [
                TextNode(
                    id_="a",
                    text="refund policy",
                    metadata={"lang": "en"},
                    embedding=model.get_text_embedding("refund policy"),
                ),
                TextNode(
                    id_="b",
                    text="parcel ship",
                    metadata={},
                    embedding=model.get_text_embedding("parcel ship"),
                ),
            ]
        )
    return theirs, ours


@pytest.mark.parametrize(("operator", "value"), [("!=", "en"), ("nin", ["en"])])
def test_difference_a_negation_keeps_a_node_without_the_key_there_and_not_here(
    operator: str, value: Any
) -> None:
    theirs, ours = _llama_pair()
    filters = MetadataFilters(
        filters=[MetadataFilter(key="lang", operator=FilterOperator(operator), value=value)]
    )
    query = VectorStoreQuery(
        query_embedding=PlaceboEmbedding(EMBEDDER).get_query_embedding("parcel"),
        similarity_top_k=5,
        filters=filters,
    )

    assert theirs.query(query).ids == ["b"] and ours.query(query).ids == []


def test_difference_nested_filters_are_refused_there_and_evaluated_here() -> None:
    theirs, ours = _llama_pair()
    inner = MetadataFilters(filters=[MetadataFilter(key="lang", value="en")])
    query = VectorStoreQuery(
        query_embedding=PlaceboEmbedding(EMBEDDER).get_query_embedding("refund"),
        similarity_top_k=5,
        filters=MetadataFilters(filters=[inner]),
    )

    with pytest.raises((ValueError, TypeError, AttributeError)):
        theirs.query(query)
    assert ours.query(query).ids == ["a"]


def test_difference_the_store_keeps_text_here_and_not_there() -> None:
    theirs, ours = _llama_pair()

    with pytest.raises(NotImplementedError):
        theirs.get_nodes(["a"])
    assert [node.get_content() for node in ours.get_nodes(["a"])] == ["refund policy"]
    assert (theirs.stores_text, ours.stores_text) == (False, True)


def test_difference_similarity_top_k_0_returns_every_node_there_and_none_here() -> None:
    theirs, ours = _llama_pair()
    query = VectorStoreQuery(
        query_embedding=PlaceboEmbedding(EMBEDDER).get_query_embedding("refund"),
        similarity_top_k=0,
    )

    assert sorted(theirs.query(query).ids) == ["a", "b"] and ours.query(query).ids == []
