"""Writes of many records are checked a column at a time and vectors normalised a block of
rows at a time: a bad value is still named by its index, and the rows stored are the bits the
documented rule gives, whatever the batch size."""

import math

import numpy as np
import pytest

from placeborag import FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag import _storage as store_module
from placeborag._records import id_hashes, text_hash

N = 300


def _columns():
    ids = [f"id{i}" for i in range(N)]
    texts = [f"text {i}" for i in range(N)]
    metas = [{"n": i, "f": i / 7, "s": "x"} if i % 4 else None for i in range(N)]
    return ids, texts, metas


@pytest.mark.parametrize(
    ("column", "index", "bad", "error", "message"),
    [
        ("ids", 170, 5, PlaceboragTypeError, "ids[170]=5 must be a str"),
        ("ids", 171, "", PlaceboragValueError, "ids[171]='' must be a non-empty str"),
        ("ids", 172, "id3", PlaceboragValueError, "ids[172]='id3' repeats ids[3]"),
        ("texts", 173, b"t", PlaceboragTypeError, "texts[173]=b't' must be a str"),
        ("metas", 174, {"$k": 1}, PlaceboragValueError, "metadatas[174] key '$k'"),
        ("metas", 175, {"k": math.nan}, PlaceboragValueError, "metadatas[175]['k']=nan"),
        ("metas", 176, {"k": object}, PlaceboragTypeError, "metadatas[176]['k']="),
        ("metas", 177, [1], PlaceboragTypeError, "metadatas[177]=[1] must be a dict"),
    ],
)
def test_a_bad_value_in_a_large_batch_is_named_and_nothing_is_written(
    column, index, bad, error, message
):
    ids, texts, metas = _columns()
    {"ids": ids, "texts": texts, "metas": metas}[column][index] = bad
    store = FakeVectorStore()
    with pytest.raises(error) as excinfo:
        store.upsert_many(ids, texts, metas)
    assert message in str(excinfo.value)
    assert len(store) == 0


def test_metadata_checked_by_column_is_copied_as_one_by_one():
    ids, texts, metas = _columns()
    metas[5] = {"np": np.int64(3), "nested": {"a": [1, (2, 3)]}}  # the long way
    store = FakeVectorStore()
    store.upsert_many(ids, texts, metas)
    one = FakeVectorStore()
    for i, t, m in zip(ids, texts, metas):
        one.upsert(i, t, m)
    assert store.records().metadata == one.records().metadata
    metas[1]["n"] = "changed later"
    assert store.records().metadata[1]["n"] == 1
    assert type(store.records().metadata[5]["np"]) is int


def test_id_hashes_are_the_hash_of_each_id():
    ids = ["a", "é", "\ud800x", "", "a" * 1000]
    assert id_hashes(ids).tolist() == [text_hash(i) for i in ids]
    assert id_hashes([]).dtype == np.uint64 and id_hashes([]).size == 0


def _reference_rows(array):
    """The documented rule on the whole array at once (what the store did before blocks)."""
    array = np.asarray(array)
    as64 = array.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", as64, as64))
    out = (as64 / norms[:, None]).astype(np.float32)
    as32 = as64.astype(np.float32)
    if array.dtype == np.float32 or np.array_equal(as32.astype(np.float64), as64):
        unit = np.abs(np.einsum("ij,ij->i", as32.astype(np.float64), as32) - 1.0) <= 2.0**-20
        out[unit] = as32[unit]
    return out


@pytest.mark.parametrize("kind", ["float32", "float64", "float64 of float32", "unit float32"])
def test_vectors_normalised_in_blocks_are_the_rule_s_bits(monkeypatch, kind):
    monkeypatch.setattr(store_module, "_BLOCK", 64)  # several blocks, one partial
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(N, 9))
    if kind == "float32":
        vectors = vectors.astype(np.float32)
    elif kind == "float64 of float32":
        vectors = vectors.astype(np.float32).astype(np.float64)
    elif kind == "unit float32":
        vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    store = FakeVectorStore.from_vectors([f"v{i}" for i in range(N)], vectors)
    stored = store.records().vectors
    assert stored.tobytes() == _reference_rows(vectors).tobytes()


def test_a_bad_row_past_the_first_block_is_named(monkeypatch):
    monkeypatch.setattr(store_module, "_BLOCK", 64)
    vectors = np.ones((N, 4))
    vectors[200] = 0.0
    vectors[250, 1] = math.inf
    with pytest.raises(PlaceboragValueError, match=r"vectors\[200\] \(id 'v200'\)"):
        FakeVectorStore.from_vectors([f"v{i}" for i in range(N)], vectors)
