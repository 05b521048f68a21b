"""The seam audit: suites that never used placeborag, audited where they retrieve.

A LangChain suite whose search is patched to return one fixed document, one whose retriever is
a ``MagicMock``, a LlamaIndex suite over ``MockEmbedding``: their tests are reported blind. The
very same tests over placeborag's doubles are reported real. And ten audits of a LlamaIndex
ingestion suite (fresh uuid4 node ids every time) give the same bytes.
"""

from __future__ import annotations

import contextlib
import json

import numpy  # noqa: F401  (loaded once: pytester unloads what an inner run imports)
import pytest

import placeborag
from placeborag import _audit, _mutations, _recorder, _seams  # noqa: F401

for _name in placeborag.__all__:
    getattr(placeborag, _name)
for _adapter in ("langchain", "llama_index", "haystack"):
    with contextlib.suppress(ImportError):
        __import__(f"placeborag.integrations.{_adapter}")
with contextlib.suppress(ImportError):
    import unittest.mock  # noqa: F401

    import langchain_core.vectorstores  # noqa: F401
    import llama_index.core
    import llama_index.core.embeddings  # noqa: F401


@pytest.fixture
def pytester(pytester):
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


def audit(pytester, *args):
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--placeborag-audit-json", "audit.json", "-W", "ignore", *args
    )
    path = pytester.path / "audit.json"
    return result, json.loads(path.read_text(encoding="utf-8")), path.read_bytes()


def by_test(document):
    return {test["nodeid"].split("::")[-1]: test for test in document["tests"]}


# The application: it cites the source of the best document its retriever returns.
LANGCHAIN_APP = """
from langchain_core.documents import Document

POLICIES = [
    ("our refund policy allows returns within 30 days", "refund.txt"),
    ("delivery to remote islands takes two weeks", "shipping.txt"),
    ("the warranty covers water damage for a year", "warranty.txt"),
    ("we never sell your personal data", "privacy.txt"),
]

def cite(retriever, question):
    documents = retriever.invoke(question)
    return documents[0].metadata["source"] if documents else None
"""

LANGCHAIN_TESTS = """
from unittest.mock import MagicMock, patch

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from seam_lc_app import POLICIES, cite

FIXED = [Document("our refund policy", metadata={"source": "refund.txt"})]

def test_cites_the_refund_policy_patched_search():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    with patch.object(InMemoryVectorStore, "similarity_search", return_value=FIXED):
        assert cite(store.as_retriever(), "what is your refund policy") == "refund.txt"

def test_cites_the_refund_policy_mock_retriever():
    retriever = MagicMock()
    retriever.invoke.return_value = FIXED
    assert cite(retriever, "what is your refund policy") == "refund.txt"
"""

PLACEBO_TESTS = """
from placeborag.integrations.langchain import PlaceboEmbeddings, PlaceboVectorStore

from seam_lc_app import POLICIES, cite

def retriever():
    store = PlaceboVectorStore(PlaceboEmbeddings())
    store.add_texts([t for t, _ in POLICIES], [{"source": s} for _, s in POLICIES])
    return store.as_retriever(search_kwargs={"k": 2})

def test_cites_the_refund_policy_patched_search():
    assert cite(retriever(), "what is your refund policy") == "refund.txt"

def test_cites_the_refund_policy_mock_retriever():
    assert cite(retriever(), "what is your refund policy") == "refund.txt"
"""


def test_a_langchain_suite_of_patched_search_and_mock_retrievers_is_reported_blind(pytester):
    pytest.importorskip("langchain_core")
    pytester.makepyfile(seam_lc_app=LANGCHAIN_APP, test_seam_lc_app=LANGCHAIN_TESTS)

    result, document, _ = audit(pytester, "--placeborag-audit-strict")

    assert result.ret == pytest.ExitCode.TESTS_FAILED  # green as usual; strict fails it
    tests = by_test(document)
    for name in (
        "test_cites_the_refund_policy_patched_search",
        "test_cites_the_refund_policy_mock_retriever",
    ):
        test = tests[name]
        assert test["verdict"] == "blind", name
        assert test["seam"] is True
        assert test["note"] == (
            "its retrieval double answers the same to every query: no bug on the way to it "
            "(the question, the filter, k, the index, the embedding) can fail it"
        )
        assert test["survived"] == ["seam-query"]
        assert test["weak"] == ["seam-emptied"]  # an empty answer breaks cite(), nothing more
    assert tests["test_cites_the_refund_policy_mock_retriever"]["doubles"] == ["mock mock.invoke"]
    assert tests["test_cites_the_refund_policy_patched_search"]["doubles"] == [
        "BaseRetriever.invoke"
    ]
    result.stdout.fnmatch_lines(
        [
            "SQ SF SK SV SE  score  verdict *",
            " .  -  -  -  w  1/2    BLIND *test_seam_lc_app.py::test_cites_the_refund_policy_mock_retriever",
            "BLIND: test_seam_lc_app.py::test_cites_the_refund_policy_mock_retriever",
            "  its retrieval double answers the same to every query: no bug on the way to it *",
        ]
    )
    assert document["summary"]["untouched"] == 0


def test_the_same_langchain_tests_over_placeborag_are_reported_real(pytester):
    pytest.importorskip("langchain_core")
    pytester.makepyfile(seam_lc_app=LANGCHAIN_APP, test_seam_lc_app=PLACEBO_TESTS)

    result, document, _ = audit(pytester, "--placeborag-audit-strict")

    assert result.ret == pytest.ExitCode.OK
    for test in document["tests"]:
        assert test["verdict"] == "real"
        assert test["seam"] is False
        assert "reversed" in test["caught"]


def test_a_mock_that_answers_something_else_than_retrieval_is_left_alone(pytester):
    pytester.makepyfile(
        test_llm="""
from unittest.mock import MagicMock

def test_the_llm_mock_is_not_a_seam():
    llm = MagicMock()
    llm.complete.return_value = "a reply"
    assert llm.complete("a prompt") == "a reply"
    llm.complete.assert_called_once_with("a prompt")
"""
    )

    result, document, _ = audit(pytester)

    result.assert_outcomes(passed=1)
    assert document["tests"] == []
    assert document["summary"]["untouched"] == 1


LLAMA_DOCS = """
from llama_index.core import Document

POLICIES = [
    ("refund.txt", "Our refund policy allows returns within 30 days."),
    ("shipping.txt", "Parcels ship to remote islands within two weeks."),
    ("warranty.txt", "The warranty covers water damage for a year."),
    ("privacy.txt", "We never sell your personal data."),
]

def documents():
    return [Document(text=text, metadata={"file_name": name}) for name, text in POLICIES]

def cite(retriever, question):
    nodes = retriever.retrieve(question)
    return nodes[0].node.metadata["file_name"] if nodes else None
"""


def test_a_llama_index_suite_over_mock_embedding_is_reported_blind_and_over_placeborag_real(
    pytester,
):
    pytest.importorskip("llama_index.core")
    pytester.makepyfile(
        seam_llama_app=LLAMA_DOCS,
        test_mock="""
from llama_index.core import VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding

from seam_llama_app import cite, documents

def test_answers_with_a_source():
    index = VectorStoreIndex.from_documents(documents(), embed_model=MockEmbedding(embed_dim=8))
    assert cite(index.as_retriever(similarity_top_k=2), "what is your refund policy")
""",
        test_placebo="""
from llama_index.core import StorageContext, VectorStoreIndex
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

from seam_llama_app import cite, documents

def test_cites_the_refund_policy():
    store = PlaceboLlamaVectorStore()
    index = VectorStoreIndex.from_documents(
        documents(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=PlaceboEmbedding(store.store.embedder),
    )
    assert cite(index.as_retriever(similarity_top_k=2), "what is your refund policy") == "refund.txt"
""",
    )

    _, document, _ = audit(pytester)

    tests = by_test(document)
    blind = tests["test_answers_with_a_source"]
    assert blind["verdict"] == "blind"
    assert "(its embedding gives every text the same vector)" in blind["note"]
    real = tests["test_cites_the_refund_policy"]
    assert real["verdict"] == "real"
    assert "reversed" in real["caught"]


def test_ten_audits_of_a_llama_index_ingestion_suite_with_uuid4_ids_give_the_same_bytes(pytester):
    pytest.importorskip("llama_index.core")
    pytester.makepyfile(
        seam_llama_app=LLAMA_DOCS,
        test_ingest="""
from llama_index.core import StorageContext, VectorStoreIndex
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

from seam_llama_app import POLICIES, cite, documents

def ingest():
    store = PlaceboLlamaVectorStore()
    index = VectorStoreIndex.from_documents(
        documents(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=PlaceboEmbedding(store.store.embedder),
    )
    return store, index

def test_every_document_is_ingested():
    store, _ = ingest()
    assert len(store.store) == len(POLICIES)

def test_the_refund_policy_is_cited():
    _, index = ingest()
    assert cite(index.as_retriever(similarity_top_k=2), "refund policy") == "refund.txt"

def test_something_is_cited():
    _, index = ingest()
    assert cite(index.as_retriever(similarity_top_k=2), "refund policy")
""",
    )

    reports = {audit(pytester)[2] for _ in range(10)}

    assert len(reports) == 1
    tests = by_test(json.loads(reports.pop()))
    assert tests["test_every_document_is_ingested"]["caught"] == ["write-lost"]
    assert tests["test_the_refund_policy_is_cited"]["verdict"] == "real"
    assert tests["test_something_is_cited"]["verdict"] == "weak"
    missed = tests["test_something_is_cited"]["missed"]
    shown = next(m for m in missed if m["mutation"] == "reversed")
    assert shown["usual"][0] == "<file_name='refund.txt'>"  # a uuid4 id, named by its file


def test_a_haystack_pipeline_with_a_patched_retriever_is_reported_blind(pytester):
    pytest.importorskip("haystack")
    pytester.makepyfile(
        test_hay="""
from unittest.mock import patch

from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

FIXED = {"documents": [Document(content="our refund policy", meta={"source": "refund.txt"})]}

def cite(retriever, question):
    found = retriever.run(query=question, top_k=2)["documents"]
    return found[0].meta["source"] if found else None

def test_cites_the_refund_policy():
    retriever = InMemoryBM25Retriever(InMemoryDocumentStore())
    with patch.object(InMemoryBM25Retriever, "run", return_value=FIXED):
        assert cite(retriever, "what is your refund policy") == "refund.txt"

def test_cites_from_a_real_in_memory_store():
    store = InMemoryDocumentStore()
    store.write_documents([
        Document(content="our refund policy allows returns", meta={"source": "refund.txt"}),
        Document(content="delivery to remote islands", meta={"source": "shipping.txt"}),
    ])
    assert cite(InMemoryBM25Retriever(store), "refund policy") == "refund.txt"
"""
    )

    _, document, _ = audit(pytester)

    tests = by_test(document)
    assert tests["test_cites_the_refund_policy"]["verdict"] == "blind"
    ranked = tests["test_cites_from_a_real_in_memory_store"]
    assert ranked["verdict"] == "real"  # BM25 ranks: another question, another answer
    assert "seam-query" in ranked["caught"]


def test_ingestion_through_the_llama_index_adapter_agrees_with_writing_to_the_store(pytester):
    pytest.importorskip("llama_index.core")
    pytester.makepyfile(
        test_ingest="""
from llama_index.core import Document, StorageContext, VectorStoreIndex
from placeborag import FakeVectorStore
from placeborag.integrations.llama_index import PlaceboEmbedding, PlaceboLlamaVectorStore

DOCS = [("refund.txt", "Our refund policy allows returns within 30 days."),
        ("shipping.txt", "Parcels ship to remote islands within two weeks.")]

def test_through_llama_index():
    store = PlaceboLlamaVectorStore()
    VectorStoreIndex.from_documents(
        [Document(text=t, metadata={"file_name": f}) for f, t in DOCS],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=PlaceboEmbedding(store.store.embedder),
    )

def test_into_the_store():
    store = FakeVectorStore()
    for name, text in DOCS:
        store.upsert(name, text, {"file_name": name})
"""
    )

    _, document, _ = audit(pytester)

    tests = by_test(document)
    for name in ("test_through_llama_index", "test_into_the_store"):
        assert tests[name]["verdict"] == "no mutation applies", name
        assert tests[name]["survived"] == tests[name]["caught"] == []


def test_what_real_suites_showed_a_timestamp_a_random_embedding_mock_nodes_and_an_empty_index(
    pytester,
):
    # Each case from auditing two real applications' suites (a LangChain and a LlamaIndex one).
    pytest.importorskip("langchain_core")
    pytester.makepyfile(
        test_real_cases="""
import time
from unittest.mock import MagicMock

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, FakeEmbeddings
from langchain_core.vectorstores import InMemoryVectorStore

def store(embedding, stamp):
    built = InMemoryVectorStore(embedding)
    built.add_texts(["refund policy", "shipping times"],
                    metadatas=[{"modified": stamp(), "source": "a"}, {"modified": stamp(), "source": "b"}])
    return built

def test_a_timestamp_in_the_metadata():
    # The ingestion stamps the time: it changes on every run and is no evidence.
    found = store(DeterministicFakeEmbedding(size=8), time.time).similarity_search("refund", k=1)
    assert found[0].metadata["source"] in ("a", "b")

def test_a_constant_in_the_metadata():
    found = store(DeterministicFakeEmbedding(size=8), lambda: 1.0).similarity_search("refund", k=1)
    assert found[0].metadata["source"] in ("a", "b")

def test_random_vectors_count_only():
    found = store(FakeEmbeddings(size=8), lambda: 1.0).similarity_search("refund", k=2)
    assert len(found) == 2

def test_mock_nodes_from_a_patched_retrieve():
    retriever = MagicMock()
    retriever.retrieve.return_value = [MagicMock(score=0.9), MagicMock(score=0.5)]
    nodes = retriever.retrieve("what is the refund policy")
    assert len(nodes) == 2

def test_an_empty_index():
    found = InMemoryVectorStore(DeterministicFakeEmbedding(size=8)).similarity_search("refund")
    assert found == []

def fuse(retriever, question):
    # The application's own reciprocal rank fusion of two phrasings: by rank, not by score.
    scores = {}
    for phrasing in (question, question.lower()):
        for rank, (document, _) in enumerate(retriever.invoke(phrasing)):
            key = document.metadata["id"]
            scores[key] = scores.get(key, 0.0) + 1.0 / (60 + rank)
    return sorted(scores, key=lambda key: -scores[key])

def test_the_fusion_of_a_mocked_retriever():
    retriever = MagicMock()
    retriever.invoke.return_value = [(Document("a", metadata={"id": "a"}), 0.9),
                                     (Document("b", metadata={"id": "b"}), 0.2)]
    assert fuse(retriever, "Q") == ["a", "b"]
"""
    )

    reports = {audit(pytester)[2] for _ in range(4)}

    assert len(reports) == 1  # the same bytes, random vectors included
    tests = by_test(json.loads(reports.pop()))
    stamped = tests["test_a_timestamp_in_the_metadata"]
    constant = tests["test_a_constant_in_the_metadata"]
    for key in ("verdict", "caught", "weak", "survived", "skipped", "note"):
        assert stamped[key] == constant[key], key
    random = tests["test_random_vectors_count_only"]
    assert random["verdict"] == "blind"
    assert "its embedding gives one text different vectors" in random["note"]
    assert random["skipped"]["seam-query"] == "its embedding answers at random"
    assert tests["test_mock_nodes_from_a_patched_retrieve"]["verdict"] == "blind"
    empty = tests["test_an_empty_index"]
    assert empty["verdict"] == "no mutation applies"
    assert empty["note"] == "its retrieval double answered nothing to every call"
    fused = tests["test_the_fusion_of_a_mocked_retriever"]
    assert fused["verdict"] == "real"
    assert "seam-reversed" in fused["caught"]
    assert fused["note"].endswith("it does check what your code does with the order of the answer")
