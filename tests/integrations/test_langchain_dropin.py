"""PlaceboVectorStore as a drop-in for InMemoryVectorStore: one test per reported bug/refusal."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import warnings
from typing import Any
from unittest.mock import Mock

import numpy as np
import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings, FakeEmbeddings
from langchain_core.indexing import InMemoryRecordManager, aindex, index
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    FilterError,
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
)
from placeborag.integrations.langchain import (
    PlaceboEmbeddings,
    PlaceboRetriever,
    PlaceboVectorStore,
)
from placeborag.integrations.llama_index import PlaceboLlamaVectorStore  # noqa: F401

TEXTS = [
    "our refund policy allows returns within 30 days",
    "refund policy exceptions for sale items",
    "parcels ship in two days",
    "express shipping arrives tomorrow",
    "reset your password from the login page",
    "two-factor authentication codes expire after a minute",
]


class CountingEmbeddings(Embeddings):
    """A LangChain model that counts what it is asked to embed."""

    def __init__(self, inner: Embeddings | None = None) -> None:
        self.inner = inner or PlaceboEmbeddings(FakeEmbedder(dimensions=64))
        self.documents: list[str] = []
        self.queries: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.inner.embed_query(text)


def ids(documents: list[Document]) -> list[str | None]:
    return [doc.id for doc in documents]


def filled(**options: Any) -> PlaceboVectorStore:
    vector_store = PlaceboVectorStore(**options)
    vector_store.add_texts(TEXTS, [{"n": i} for i in range(len(TEXTS))], ids=list("abcdef"))
    return vector_store


# -- bugs --------------------------------------------------------------------------------------


def test_the_indexing_api_writes_through_the_adapter_with_its_batch_size() -> None:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings())
    manager = InMemoryRecordManager(namespace="kb")
    manager.create_schema()
    docs = [Document(page_content=text, metadata={"source": "kb"}) for text in TEXTS]

    first = index(docs, manager, vector_store, cleanup="full", source_id_key="source", batch_size=4)
    again = index(docs, manager, vector_store, cleanup="full", source_id_key="source")

    assert first["num_added"] == len(TEXTS) and again["num_skipped"] == len(TEXTS)
    assert len(vector_store.store) == len(TEXTS)


@pytest.mark.asyncio
async def test_the_async_indexing_api_writes_through_the_adapter() -> None:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings())
    manager = InMemoryRecordManager(namespace="kb")
    await manager.acreate_schema()
    docs = [Document(page_content=text, metadata={"source": "kb"}) for text in TEXTS[:3]]

    result = await aindex(
        docs, manager, vector_store, cleanup="incremental", source_id_key="source"
    )

    assert result["num_added"] == 3
    assert len(vector_store.store) == 3


def test_batch_size_splits_the_writes_into_embedding_calls_of_that_size() -> None:
    model = Mock(wraps=PlaceboEmbeddings())
    vector_store = PlaceboVectorStore(model)

    vector_store.add_texts(TEXTS, batch_size=4)

    assert [len(call.args[0]) for call in model.embed_documents.call_args_list] == [4, 2]


PROFILE_METRICS = [
    (profile, metric)
    for profile, metrics in {
        "langchain": ("cosine",),
        "chroma": ("cosine", "l2", "ip"),
        "qdrant": ("cosine", "l2", "ip"),
        "faiss": ("cosine", "l2", "ip"),
        "lancedb": ("cosine", "l2", "ip"),
        "pgvector": ("cosine", "l2", "ip"),
        "weaviate": ("cosine", "l2", "ip"),
    }.items()
    for metric in metrics
]


@pytest.mark.parametrize(("profile", "metric"), PROFILE_METRICS)
def test_relevance_scores_are_the_cosine_for_every_profile_and_metric(
    profile: str, metric: str
) -> None:
    cosines = filled(profile="qdrant").similarity_search_with_score("refund policy", k=3)

    relevance = filled(profile=profile, metric=metric).similarity_search_with_relevance_scores(
        "refund policy", k=3
    )

    assert ids([d for d, _ in relevance]) == ids([d for d, _ in cosines])
    assert [s for _, s in relevance] == pytest.approx([s for _, s in cosines], abs=1e-12)


@pytest.mark.parametrize(("profile", "metric"), [("chroma", "l2"), ("pgvector", "ip")])
def test_a_score_threshold_retriever_keeps_the_same_documents_under_any_metric(
    profile: str, metric: str
) -> None:
    reference = filled(profile="qdrant").as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.3}
    )
    other = filled(profile=profile, metric=metric).as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.3}
    )

    expected = ids(reference.invoke("refund policy"))
    assert 0 < len(expected) < len(TEXTS)
    assert ids(other.invoke("refund policy")) == expected


def test_a_langchain_model_is_called_once_per_document_and_once_per_query() -> None:
    model = CountingEmbeddings()
    vector_store = PlaceboVectorStore(model)
    vector_store.add_texts(TEXTS)

    vector_store.similarity_search("refund policy", k=3)
    vector_store.similarity_search_with_relevance_scores("shipping", k=6)
    vector_store.max_marginal_relevance_search("password", k=2, fetch_k=6)

    assert model.documents == TEXTS
    assert model.queries == ["refund policy", "shipping", "password"]


def test_scores_under_a_random_model_follow_the_returned_order() -> None:
    vector_store = PlaceboVectorStore(FakeEmbeddings(size=16), profile="qdrant")
    vector_store.add_texts(TEXTS)

    scores = [s for _, s in vector_store.similarity_search_with_score("refund", k=6)]

    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    "model", [lambda: DeterministicFakeEmbedding(size=8), CountingEmbeddings], ids=["fake", "ngram"]
)
def test_a_store_over_a_langchain_model_copies_and_pickles_like_in_memory_vector_store(
    clone: Any, model: Any
) -> None:
    theirs = InMemoryVectorStore(model())
    theirs.add_texts(TEXTS, ids=list("abcdef"))
    clone(theirs)  # what the drop-in promises: InMemoryVectorStore copies and pickles
    ours = filled(embedding=model())

    again = clone(ours)

    assert again.store.ids == ours.store.ids
    for query in ("refund policy", "parcels", "password"):
        assert again.similarity_search_with_score(query, k=6) == ours.similarity_search_with_score(
            query, k=6
        )
    again.add_texts(["a new text"], ids=["g"])  # the copy embeds with its own model
    assert "g" in again.store and "g" not in ours.store


# -- refusals now accepted with InMemoryVectorStore's semantics ----------------------------------


def test_the_default_profile_is_langchain_and_scores_match_in_memory_vector_store() -> None:
    embeddings = PlaceboEmbeddings()
    theirs = InMemoryVectorStore(embeddings)
    theirs.add_texts(TEXTS, ids=list("abcdef"))
    ours = PlaceboVectorStore(embeddings)
    ours.add_texts(TEXTS, ids=list("abcdef"))

    expected = theirs.similarity_search_with_score("refund policy", k=4)
    found = ours.similarity_search_with_score("refund policy")

    assert ours.store.profile.name == "langchain"
    assert ids([d for d, _ in found]) == ids([d for d, _ in expected])
    assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_k_zero_returns_no_documents() -> None:
    vector_store = filled()

    assert vector_store.similarity_search("refund", k=0) == []
    assert vector_store.max_marginal_relevance_search("refund", k=0) == []
    assert vector_store.as_retriever(search_kwargs={"k": 0}).invoke("refund") == []


def test_int_ids_are_kept_as_their_decimal_text() -> None:
    vector_store = PlaceboVectorStore()

    written = vector_store.add_texts(["refund", "shipping"], ids=[1, 2])

    assert written == ["1", "2"]
    assert ids(vector_store.get_by_ids([1, "2"])) == ["1", "2"]
    vector_store.delete([1])
    assert vector_store.store.ids == ["2"]


def test_an_id_repeated_in_one_batch_keeps_its_first_place_and_last_text() -> None:
    theirs = InMemoryVectorStore(PlaceboEmbeddings())
    ours = PlaceboVectorStore(PlaceboEmbeddings())

    for vector_store in (theirs, ours):
        vector_store.add_texts(["a", "b", "c"], ids=["x", "y", "x"])

    assert ours.get_by_ids(["x", "y"]) == theirs.get_by_ids(["x", "y"])
    assert ours.store.ids == ["x", "y"]
    assert ours.get_by_ids(["x"])[0].page_content == "c"


ON_EXISTING = {
    # mode: (ids in insertion order, the texts a query finds)
    "replace": (["f1", "y"], ["b", "c"]),
    "ignore": (["f1", "y"], ["a", "b"]),
    "duplicate": (["y", "f1"], ["a", "b", "c"]),
    "move_to_end": (["y", "f1"], ["b", "c"]),
}


@pytest.mark.parametrize("batch_size", [None, 2])
@pytest.mark.parametrize("mode", [*ON_EXISTING, "error"])
def test_an_id_repeated_in_one_call_is_written_as_by_a_second_call(
    mode: str, batch_size: int | None
) -> None:
    one_call = PlaceboVectorStore(PlaceboEmbeddings(), on_existing_id=mode)
    two_calls = PlaceboVectorStore(PlaceboEmbeddings(), on_existing_id=mode)
    if mode == "error":
        with pytest.raises(PlaceboragValueError) as excinfo:
            one_call.add_texts(["a", "b", "c"], ids=["f1", "y", "f1"], batch_size=batch_size)
        assert excinfo.value.args == (
            "ids[2]='f1' repeats ids[0] and on_existing_id='error' forbids writing an id twice; "
            "nothing was written",
        )
        assert len(one_call.store) == 0
        return

    written = one_call.add_texts(["a", "b", "c"], ids=["f1", "y", "f1"], batch_size=batch_size)
    two_calls.add_texts(["a", "b"], ids=["f1", "y"])
    two_calls.add_texts(["c"], ids=["f1"])

    assert written == ["f1", "y", "f1"]
    ids, texts = ON_EXISTING[mode]
    for vector_store in (one_call, two_calls):
        assert vector_store.store.ids == ids
        assert sorted(d.page_content for d in vector_store.similarity_search("a", k=5)) == texts


def test_every_chunk_of_a_file_written_under_one_id_is_kept_under_duplicate() -> None:
    # langchain's PGVector writes each chunk of an upload under the file's id, and keeps them
    # all (docs/profiles.md: the options that model that client).
    vector_store = PlaceboVectorStore(
        PlaceboEmbeddings(), profile="pgvector", on_existing_id="duplicate", filter_mode="pre"
    )
    chunks = [f"chunk {n} of the refund policy" for n in range(5)]

    assert vector_store.add_documents([Document(page_content=c) for c in chunks], ids=["f1"] * 5)
    found = vector_store.similarity_search("refund policy", k=10)

    assert sorted(d.page_content for d in found) == chunks
    assert {d.id for d in found} == {"f1"}


def test_a_langchain_model_embeds_a_batch_with_repeated_ids_in_one_call() -> None:
    model = CountingEmbeddings()
    vector_store = PlaceboVectorStore(model, on_existing_id="duplicate")

    vector_store.add_texts(["a", "b", "c", "d"], ids=["f1", "f1", "f1", "g"])

    assert model.documents == ["a", "b", "c", "d"]
    assert len(vector_store.similarity_search("a", k=10)) == 4


def test_a_bad_record_after_a_repeated_id_refuses_the_whole_call() -> None:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings(), on_existing_id="duplicate")

    with pytest.raises(PlaceboragTypeError, match=r"^texts\[2\]=3 must be a str"):
        vector_store.add_texts(["a", "b", 3], ids=["f1", "f1", "g"])  # type: ignore[list-item]

    assert len(vector_store.store) == 0


def test_a_bare_string_is_refused_instead_of_split_into_characters() -> None:
    vector_store = PlaceboVectorStore()

    with pytest.raises(PlaceboragTypeError, match=r"^texts='abc' is a single str; pass a list"):
        vector_store.add_texts("abc")
    with pytest.raises(PlaceboragTypeError, match=r"^texts='refund' is a single str"):
        PlaceboEmbeddings().embed_documents("refund")  # type: ignore[arg-type]
    assert len(vector_store.store) == 0


def test_a_mock_wrapping_a_langchain_model_is_used_and_records_the_calls() -> None:
    model = Mock(wraps=DeterministicFakeEmbedding(size=8))
    vector_store = PlaceboVectorStore(model)

    vector_store.add_texts(["refund", "shipping"])
    vector_store.similarity_search("refund", k=1)

    assert model.embed_documents.call_count == 1
    assert model.embed_query.call_count == 1
    assert vector_store.embeddings is model


def test_a_callable_filter_sees_the_document_with_its_id() -> None:
    vector_store = filled()
    seen: list[Document] = []

    def keep(doc: Document) -> bool:
        seen.append(doc)
        return doc.id in {"b", "e"}

    found = vector_store.similarity_search("refund policy", k=4, filter=keep)

    assert ids(found) == ["b", "e"]
    assert {doc.id for doc in seen} == set("abcdef")
    assert seen[0] == Document(id="a", page_content=TEXTS[0], metadata={"n": 0})
    assert vector_store.similarity_search("refund", filter=lambda doc: False) == []


def test_a_qdrant_filter_is_refused_with_what_to_pass_instead() -> None:
    with pytest.raises(FilterError) as excinfo:
        filled().similarity_search("refund", filter={"must": [{"key": "n", "match": 1}]})

    message = excinfo.value.args[0]
    assert message.startswith("filter={'must': [{'key': 'n', 'match': 1}]} is a Qdrant filter")
    assert "callable" in message and "$in" not in message


def test_mmr_picks_what_in_memory_vector_store_picks_over_the_same_vectors() -> None:
    embeddings = PlaceboEmbeddings(FakeEmbedder(dimensions=32))
    theirs = InMemoryVectorStore(embeddings)
    theirs.add_texts(TEXTS, ids=list("abcdef"))
    ours = PlaceboVectorStore(embeddings)
    ours.add_texts(TEXTS, ids=list("abcdef"))

    for lambda_mult in (0.0, 0.25, 0.5, 1.0):
        expected = theirs.max_marginal_relevance_search(
            "refund shipping", k=4, fetch_k=6, lambda_mult=lambda_mult
        )
        found = ours.max_marginal_relevance_search(
            "refund shipping", k=4, fetch_k=6, lambda_mult=lambda_mult
        )
        assert ids(found) == ids(expected), lambda_mult


def test_mmr_breaks_exact_ties_by_insertion_order_and_repeats_exactly() -> None:
    vector_store = PlaceboVectorStore()
    vector_store.add_texts(["foo", "foo", "fou", "foy"], ids=["1", "2", "3", "4"])

    runs = [
        ids(vector_store.max_marginal_relevance_search("foo", k=10, lambda_mult=0.1))
        for _ in range(3)
    ]

    assert runs[0][0] == "1" and len(runs[0]) == 4
    assert runs[0] == runs[1] == runs[2]


def test_mmr_through_as_retriever_honours_fetch_k_and_the_filter() -> None:
    vector_store = filled()
    retriever = vector_store.as_retriever(
        search_type="mmr", search_kwargs={"k": 2, "fetch_k": 3, "filter": {"n": {"$lt": 4}}}
    )

    found = retriever.invoke("refund policy")

    assert len(found) == 2
    assert {doc.metadata["n"] for doc in found} <= {0, 1, 2, 3}
    assert vector_store.store.last_query.k == 3


def test_mmr_matches_langchains_own_function_on_the_stored_vectors() -> None:
    vector_store = filled()
    query = np.asarray(vector_store.embeddings.embed_query("password refund"), dtype=np.float32)
    candidates = vector_store.similarity_search("password refund", k=6)
    records = vector_store.store.records()
    rows = [records.vectors[records.position(doc.id)] for doc in candidates]

    expected = maximal_marginal_relevance(query, rows, lambda_mult=0.3, k=3)
    found = vector_store.max_marginal_relevance_search(
        "password refund", k=3, fetch_k=6, lambda_mult=0.3
    )

    assert ids(found) == [candidates[i].id for i in expected]


def test_the_retriever_honours_search_kwargs_and_refuses_typos() -> None:
    store = filled().store

    assert len(PlaceboRetriever(store, search_kwargs={"k": 1}).invoke("refund")) == 1
    found = PlaceboRetriever(store, search_kwargs={"k": 6, "filter": {"n": {"$gte": 4}}}).invoke(
        "refund"
    )
    assert {doc.id for doc in found} == {"e", "f"}
    with pytest.raises(PlaceboragTypeError, match=r"unexpected keyword argument\(s\) 'kk'"):
        PlaceboRetriever(store, kk=1)
    with pytest.raises(PlaceboragTypeError, match=r"unexpected keyword argument\(s\) 'kk'"):
        PlaceboRetriever(store, search_kwargs={"kk": 1})


@pytest.mark.parametrize(
    ("search_type", "search_kwargs", "error", "message"),
    [
        (
            "similarity_score_threshold",
            {"score_threshold": "0.2"},
            PlaceboragTypeError,
            "score_threshold='0.2' must be a finite real number (a float)",
        ),
        (
            "similarity_score_threshold",
            {"score_threshold": float("nan")},
            PlaceboragValueError,
            "score_threshold=nan must be a finite real number (a float)",
        ),
        (
            "similarity_score_threshold",
            {"score_threshold": True},
            PlaceboragTypeError,
            "score_threshold=True must be a finite real number (a float)",
        ),
        ("mmr", {"lambda_mult": 2}, PlaceboragValueError, "lambda_mult=2 must be between 0 and 1"),
        ("mmr", {"fetch_k": "20"}, PlaceboragTypeError, "fetch_k='20' must be an int, not str"),
    ],
)
def test_the_retriever_checks_its_search_kwargs_when_it_is_built(
    search_type: str, search_kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as excinfo:
        PlaceboRetriever(filled(), search_type=search_type, search_kwargs=search_kwargs)

    assert excinfo.value.args == (message,)


def test_a_score_threshold_may_be_any_number_as_in_vector_store_retriever() -> None:
    def found(threshold: float) -> int:
        retriever = PlaceboRetriever(
            filled(),
            search_type="similarity_score_threshold",
            search_kwargs={"score_threshold": threshold, "k": 6},
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # LangChain: "between 0 and 1"
            return len(retriever.invoke("refund policy"))

    assert (found(-1.5), found(0), found(1.5)) == (6, 3, 0)


def test_the_retriever_runs_mmr_and_score_threshold_searches() -> None:
    store = filled().store

    mmr = PlaceboRetriever(store, search_type="mmr", search_kwargs={"k": 2, "fetch_k": 4})
    threshold = PlaceboRetriever(
        store, search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.99}
    )

    assert len(mmr.invoke("refund policy")) == 2
    assert threshold.invoke("refund policy") == []


def test_dump_and_load_round_trip_the_records(tmp_path: Any) -> None:
    vector_store = filled()
    path = tmp_path / "store.json"

    vector_store.dump(path)
    loaded = PlaceboVectorStore.load(path, PlaceboEmbeddings())

    assert loaded.store.ids == vector_store.store.ids
    assert loaded.similarity_search_with_score(
        "refund"
    ) == vector_store.similarity_search_with_score("refund")
    assert json.loads(path.read_text())["format"] == "placeborag.langchain/1"
    assert [p.name for p in tmp_path.iterdir()] == ["store.json"]  # no temporary file left


def test_a_configured_store_keeps_its_own_profile() -> None:
    assert PlaceboVectorStore(store=FakeVectorStore()).store.profile.name == "chroma"
    assert PlaceboVectorStore(profile="qdrant").store.profile.name == "qdrant"


# -- metadata the engines store (the core is widening the accepted types) -----------------------

WIDE_METADATA = [
    {"author": None},
    {"tags": ["refund", "policy"]},
    {"source": {"file": "faq.md", "page": 3}},
    {"last_accessed_at": dt.datetime(2023, 4, 14, 12, 0)},
]


def test_metadata_loaders_and_retrievers_write_is_stored_and_returned() -> None:
    vector_store = PlaceboVectorStore()

    vector_store.add_texts(["a", "b", "c", "d"], WIDE_METADATA, ids=list("abcd"))

    assert [doc.metadata for doc in vector_store.get_by_ids(list("abcd"))] == WIDE_METADATA


def test_the_store_the_adapter_builds_also_reads_like_in_memory_vector_stores_dict() -> None:
    embeddings = PlaceboEmbeddings(FakeEmbedder(dimensions=8))
    theirs = InMemoryVectorStore(embeddings)
    ours = PlaceboVectorStore(embeddings)
    for vector_store in (theirs, ours):
        vector_store.add_texts(["refund", "shipping"], [{"n": 1}, {}], ids=["r", "s"])

    assert list(ours.store) == list(theirs.store) == ["r", "s"]
    assert list(ours.store.keys()) == list(theirs.store.keys())
    assert ours.store["r"]["text"] == theirs.store["r"]["text"] == "refund"
    assert ours.store["r"]["metadata"] == {"n": 1}
    assert ours.store["r"]["vector"] == pytest.approx(theirs.store["r"]["vector"], abs=1e-7)
    assert [key for key, _ in ours.store.items()] == ["r", "s"]
    with pytest.raises(KeyError):
        ours.store["absent"]


def test_a_callable_filter_that_accepts_nothing_still_reaches_the_query_log() -> None:
    vector_store = filled()

    assert vector_store.similarity_search("refund", k=2, filter=lambda doc: False) == []
    assert vector_store.store.last_query.text == "refund"
    assert vector_store.store.last_query.ids == ()


# -- dump and load refuse what they cannot write or read --------------------------------------

BAD_FILES = {
    "not-utf8": (b"\xff\xfe{}", r"is not UTF-8 text \(byte 0xff at offset 0\)"),
    "not-json": (b'{"format": ', r"is not JSON \(Expecting value at line 1 column 12\)"),
    "too-deep": (
        b"[" * 100_000 + b"]" * 100_000,
        r"is nested too deeply to be a file written by PlaceboVectorStore.dump",
    ),
    "other-format": (b'{"format": "x"}', r"is not a file written by PlaceboVectorStore.dump"),
    "no-records": (
        b'{"format": "placeborag.langchain/1"}',
        r": 'records' must be a list of records, not NoneType",
    ),
    "record-not-object": (
        b'{"format": "placeborag.langchain/1", "records": [3]}',
        r": records\[0\] must be an object with 'id', 'text' and 'metadata', not int",
    ),
    "no-text": (
        b'{"format": "placeborag.langchain/1", "records": [{"id": "a", "metadata": {}}]}',
        r": records\[0\] has no 'text'",
    ),
    "id-not-str": (
        b'{"format": "placeborag.langchain/1", "records": '
        b'[{"id": [1], "text": "a", "metadata": {}}]}',
        r": records\[0\]\['id'\]=\[1\] must be str",
    ),
    "bad-metadata-key": (
        b'{"format": "placeborag.langchain/1", "records": '
        b'[{"id": "a", "text": "a", "metadata": {"$x": 1}}]}',
        r": metadatas\[0\] key '\$x' must be a non-empty str not starting with '\$'",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_load_refuses_a_bad_file_naming_the_path_and_what_is_wrong(
    name: str, tmp_path: Any
) -> None:
    content, message = BAD_FILES[name]
    path = tmp_path / f"{name}.json"
    path.write_bytes(content)

    with pytest.raises(PlaceboragError) as excinfo:
        PlaceboVectorStore.load(path, PlaceboEmbeddings())

    text = excinfo.value.args[0]
    assert text.startswith(repr(str(path))), text
    assert re.search(message, text), text


def test_dump_refuses_an_id_utf8_cannot_hold_naming_it_and_leaves_the_old_file(
    tmp_path: Any,
) -> None:
    vector_store = PlaceboVectorStore(PlaceboEmbeddings())
    path = tmp_path / "store.json"
    vector_store.add_texts(["refund"], ids=["ok"])
    vector_store.dump(path)
    before = path.read_bytes()
    vector_store.add_texts(["shipping"], ids=["bad\ud800"])

    with pytest.raises(PlaceboragValueError) as excinfo:
        vector_store.dump(path)

    assert excinfo.value.args[0].startswith(
        f"PlaceboVectorStore.dump({str(path)!r}): records[1]['id']='bad\\ud800' holds the lone "
        "surrogate"
    )
    assert path.read_bytes() == before


def test_a_dump_round_trips_every_metadata_kind_the_store_allows(tmp_path: Any) -> None:
    vector_store = PlaceboVectorStore(embedding=PlaceboEmbeddings())
    vector_store.add_texts(["a", "b", "c", "d"], WIDE_METADATA, ids=["1", "2", "3", "4"])
    path = tmp_path / "store.json"
    vector_store.dump(path)
    loaded = PlaceboVectorStore.load(path, PlaceboEmbeddings())
    assert [dict(loaded.store.get(i).metadata) for i in "1234"] == WIDE_METADATA


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes need POSIX")
def test_loading_a_fifo_or_an_oversized_dump_is_refused_before_reading(tmp_path: Any) -> None:
    # issue 27: an untrusted dump was read whole, from whatever the path was.
    from _guards import no_hang

    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with no_hang(), pytest.raises(PlaceboragValueError, match="is a named pipe"):
        PlaceboVectorStore.load(fifo, PlaceboEmbeddings())
    path = tmp_path / "store.json"
    filled().dump(path)
    with pytest.raises(PlaceboragValueError, match="more than the limit of 10;"):
        PlaceboVectorStore.load(path, PlaceboEmbeddings(), max_bytes=10)
    path.write_text('{"format": "placeborag.langchain/1", "records": [{"id": 1}]}')
    with pytest.raises(PlaceboragValueError, match=r"records\[0\]\['id'\]=1 must be str"):
        PlaceboVectorStore.load(path, PlaceboEmbeddings())
