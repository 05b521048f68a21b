"""Precomputed vectors as a store: bad tables are PlaceboragErrors naming what is wrong."""

import math

import pytest

from placeborag import PlaceboragTypeError, PlaceboragValueError
from placeborag.explore import VectorTable, store_from_vectors


def test_a_store_over_precomputed_vectors_ranks_by_them():
    store = store_from_vectors(
        [[1.0, 0.0], [0.0, 1.0]], ["a", "b"], ["east", "north"], queries={"up": [0.1, 1.0]}
    )
    assert [m.id for m in store.query("up", k=2)] == ["b", "a"]


@pytest.mark.parametrize(
    ("texts", "vectors", "error", "message"),
    [
        (["a", "b"], [[1.0, 0.0], [1.0]], PlaceboragTypeError, "must be rows of numbers"),
        (["a"], [[math.nan, 1.0]], PlaceboragValueError, "not finite"),
        ("ab", [[1.0], [2.0]], PlaceboragTypeError, "texts='ab' must be a sequence of str"),
        (["a", 2], [[1.0], [2.0]], PlaceboragTypeError, "texts[1]=2 must be a str"),
    ],
    ids=["ragged", "nan", "bare-str", "non-str"],
)
def test_a_bad_vector_table_is_refused_with_a_placeborag_error(texts, vectors, error, message):
    # issue 13 item 12: ragged rows gave numpy's bare ValueError, a bare str was split.
    with pytest.raises(error) as excinfo:
        VectorTable(texts, vectors)
    assert message in str(excinfo.value)


def test_looking_up_a_non_str_is_a_type_error_not_a_hash_error():
    table = VectorTable(["a"], [[1.0, 0.0]])
    with pytest.raises(PlaceboragTypeError, match=r"texts\[0\]=\['a'\] must be a str"):
        table.embed_batch([["a"]])
