"""Arguments a probe of the store's public API found unchecked (each raised a bare builtin
exception, or was silently taken for something else): each now gets a correct result or a
PlaceboragError naming the value and what is allowed, before anything changes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragError,
    PlaceboragTypeError,
    PlaceboragValueError,
)


@pytest.fixture
def store():
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=2))
    store.upsert("a", "refund policy")
    store.upsert("b", "delivery times")
    return store


@pytest.mark.parametrize(
    ("vector", "error", "message"),
    [
        # None once made query_by_vector embed text= instead, or blame text= when absent.
        (None, PlaceboragTypeError, "vector=None must be a sequence of numbers, not NoneType"),
        # numpy turned each of these into floats: "1" into 1.0, True into 1.0, 1+2j into 1.0.
        (
            ["1", "2"],
            PlaceboragTypeError,
            "vector[0]='1' must be a real number (int or float), not str",
        ),
        (
            [True, False],
            PlaceboragTypeError,
            "vector[0]=True must be a real number (int or float), not bool",
        ),
        (
            np.array([1 + 2j, 1]),
            PlaceboragTypeError,
            "vector is an array of complex128; a vector must hold real numbers (int or float)",
        ),
        (  # once OverflowError
            [10**400, 1],
            PlaceboragValueError,
            "vector holds a number too large for a float; all values must be finite floats",
        ),
        (
            [[1.0], [2.0, 3.0]],
            PlaceboragValueError,
            "vector must be a one-dimensional sequence of numbers, not nested or ragged",
        ),
    ],
)
def test_query_by_vector_refuses_what_is_not_a_vector(store, vector, error, message):
    with pytest.raises(error) as excinfo:
        store.query_by_vector(vector, text="refund policy")
    assert excinfo.value.args == (message,)
    assert len(store.queries) == 0  # refused before anything was logged


@pytest.mark.parametrize(
    "vector", [[1, 0], (1.0, 0.0), np.array([1, 0], dtype=np.int32), [np.float32(1), 0]]
)
def test_query_by_vector_takes_any_real_numbers(store, vector):
    assert [m.id for m in store.query_by_vector(vector, k=2)] == [
        m.id for m in store.query_by_vector([1.0, 0.0], k=2)
    ]


def test_an_unhashable_value_in_a_store_is_refused_not_a_bare_type_error(store):
    with pytest.raises(PlaceboragTypeError) as excinfo:
        [1] in store  # noqa: B015
    assert excinfo.value.args == ("[1] in store: an id is a str, not list",)
    assert 5 not in store and "a" in store  # hashable values answer as a dict does


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda s: s.reembedded(None),
            "embedder=None must be an embedder with an embed_batch(texts) method (a "
            "FakeEmbedder, a ReplayEmbedder or a compatible object)",
        ),
        (
            lambda s: s.reembedded(FakeEmbedder(dimensions=2), reuse=5),
            "reuse=5 must be a (FakeVectorStore, ids) pair or None",
        ),
        (
            lambda s: s.reembedded(FakeEmbedder(dimensions=2), reuse=(s, [1])),
            "reuse ids[0]=1 must be a str, not int",
        ),
        (
            lambda s: s.reembedded(FakeEmbedder(dimensions=2), reuse=(s, "a")),
            "reuse ids='a' must be a list, not str",
        ),
        (
            lambda s: s.delete(["nope"], missing_ok="no"),  # once taken as True
            "missing_ok='no' must be True or False",
        ),
    ],
)
def test_store_methods_refuse_bad_arguments(store, call, message):
    with pytest.raises(PlaceboragTypeError) as excinfo:
        call(store)
    assert excinfo.value.args == (message,)
    assert store.ids == ["a", "b"]


@pytest.mark.parametrize("value", [np.array([1, 2]), np.array([5]), np.array([[1]])])
def test_a_numpy_array_as_metadata_is_refused_with_the_way_to_store_it(store, value):
    # Once TypeError "only 0-dimensional arrays can be converted", or array([5]) stored as 5.
    with pytest.raises(PlaceboragTypeError, match=r"not a numpy array; store value\.tolist\(\)"):
        store.upsert("c", "refund", {"k": value})
    assert "c" not in store


def test_a_zero_dimensional_numpy_value_is_stored_as_the_number_it_holds(store):
    store.upsert("c", "refund", {"k": np.array(5), "f": np.float32(1.5)})
    assert store.get("c").metadata == {"k": 5, "f": 1.5}


@pytest.mark.parametrize("spread", [10**400, -(10**400)])
def test_a_cluster_spread_beyond_float_range_is_refused_not_an_overflow(spread):
    with pytest.raises(PlaceboragValueError, match=r"must be a finite number between 0 and 50"):
        FakeEmbedder(cluster_spread=spread)


class _Name(str):
    pass


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["d0", "d1", "d2"]),
            st.just(""),
            st.builds(_Name, st.sampled_from(["d0", "d1"])),
            st.integers(),
            st.none(),
            st.binary(max_size=3),
        ),
        max_size=6,
    )
)
def test_reuse_ids_are_checked_one_by_one_whatever_they_hold(ids):
    """``reuse``'s ids, any mix of str, '' and other values: the first bad one is named (as
    the per-id check names it) and nothing changes; good ones (str subclasses too) are used."""
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=4))
    store.upsert_many(["d0", "d1", "d2"], ["a", "b", "c"])
    before = store.records().vectors.copy()
    bad = next((i for i, v in enumerate(ids) if not isinstance(v, str) or not v), None)
    if bad is None:
        twin = store.reembedded(FakeEmbedder(dimensions=4), reuse=(store, ids))
        np.testing.assert_array_equal(twin.records().vectors, before)
    else:
        with pytest.raises(PlaceboragError, match=rf"reuse ids\[{bad}\]="):
            store.reembedded(FakeEmbedder(dimensions=4), reuse=(store, ids))
    np.testing.assert_array_equal(store.records().vectors, before)
