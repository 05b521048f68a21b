"""The metadata filter language: a table of cases, a differential test against a plain reference
interpreter, and generated malformed filters that must all raise."""

import math

import pytest
from fuzz._reference import reference
from hypothesis import given
from hypothesis import strategies as st

from placeborag import FakeVectorStore, FilterError
from placeborag._filters import OPERATORS, Columns, compile_filter

RECORDS = {
    "f1": {"color": "red", "n": 1},
    "f2": {"color": "blue", "n": 5},
    "f3": {"color": "red", "n": 10},
    "f4": {"n": 7},
    "f5": {"color": "green"},
    "f6": {"color": "red", "n": "7"},
    "f7": None,
    "f8": {"flag": True, "n": 5.0},
}


def matching(where):
    node = compile_filter(where)
    plain = sorted(i for i, m in RECORDS.items() if node.matches(m))
    mask = node.mask(Columns(list(RECORDS.values())))
    vectorised = sorted(i for i, hit in zip(RECORDS, mask) if hit)
    assert plain == vectorised
    return plain


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"color": "red"}, ["f1", "f3", "f6"]),
        ({"color": {"$eq": "red"}}, ["f1", "f3", "f6"]),
        ({"color": {"$ne": "red"}}, ["f2", "f5"]),  # f4 and f7 lack the key
        ({"n": {"$gt": 4}}, ["f2", "f3", "f4", "f8"]),  # the string "7" never compares
        ({"n": {"$gte": 5, "$lt": 10}}, ["f2", "f4", "f8"]),
        ({"n": {"$lte": 1}}, ["f1"]),
        ({"n": 5}, ["f2", "f8"]),  # 5 == 5.0
        ({"n": "7"}, ["f6"]),  # a str never equals a number
        ({"n": {"$in": [1, 7]}}, ["f1", "f4"]),
        ({"n": {"$nin": [1, 7]}}, ["f2", "f3", "f6", "f8"]),
        ({"color": {"$nin": ["red"]}}, ["f2", "f5"]),
        ({"flag": True}, ["f8"]),
        ({"flag": 1}, []),  # a bool is not a number
        ({"nokey": "x"}, []),
        ({"nokey": {"$ne": "x"}}, []),
        ({"color": "red", "n": {"$gt": 1}}, ["f3"]),  # several keys: all must hold
        ({"$and": [{"color": "red"}, {"n": {"$gt": 1}}]}, ["f3"]),
        ({"$or": [{"color": "green"}, {"n": {"$gte": 10}}]}, ["f3", "f5"]),
        ({"$or": [{"$and": [{"color": "red"}, {"n": 1}]}, {"n": 7}]}, ["f1", "f4"]),
        ({"$and": [{"color": "red"}]}, ["f1", "f3", "f6"]),
    ],
)
def test_filter_semantics(where, expected):
    assert matching(where) == expected


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            {"color": {"$regex": "r.*"}},
            "unknown operator '$regex'; expected one of "
            + ", ".join(OPERATORS)
            + " in clause {'color': {'$regex': 'r.*'}}",
        ),
        (
            {"$not": {"color": "red"}},
            "unknown operator '$not'; expected one of "
            + ", ".join(OPERATORS)
            + " in clause {'$not': {'color': 'red'}}",
        ),
        (
            {"color": {"$in": "red"}},
            "$in needs a non-empty list, got 'red' in clause {'color': {'$in': 'red'}}",
        ),
        (
            {"color": {"$in": []}},
            "$in needs a non-empty list, got an empty one in clause {'color': {'$in': []}}",
        ),
        (
            {"n": {"$gt": "4"}},
            "$gt needs a number, got '4' of type str in clause {'n': {'$gt': '4'}}",
        ),
        (
            {"n": {"$gt": True}},
            "$gt needs a number, got True of type bool in clause {'n': {'$gt': True}}",
        ),
        (
            {"n": {"$lt": math.inf}},
            "$lt needs a finite number, got inf in clause {'n': {'$lt': inf}}",
        ),
        (
            {"n": {"$in": [1, "7"]}},
            "$in needs values of one kind (all str, all numbers or all bool) in clause {'n': {'$in': [1, '7']}}",
        ),
        (
            {"n": {}},
            "the condition on 'n' is empty; give at least one operator in clause {'n': {}}",
        ),
        (
            {"n": [1, 2]},
            "a list is not a value; to match any of them use {'$in': [1, 2]} in clause {'n': [1, 2]}",
        ),
        (
            {"n": None},
            "equality needs a str, int, float or bool, got None of type NoneType in clause {'n': None}",
        ),
        ({"$and": []}, "$and needs a non-empty list of filters, got [] in clause {'$and': []}"),
        (
            {"$or": {"a": 1}},
            "$or needs a non-empty list of filters, got {'a': 1} in clause {'$or': {'a': 1}}",
        ),
        (
            {"$eq": 1},
            "$eq compares a value; put it under a metadata key, like {'lang': {'$eq': ...}} in clause {'$eq': 1}",
        ),
        (
            {"n": {"$and": [{"n": 1}]}},
            "$and combines whole filters; use it at the top level, not under 'n' in clause {'n': {'$and': [{'n': 1}]}}",
        ),
        (
            {"meta": {"lang": "en"}},
            "'lang' is not an operator; nested metadata is not supported, expected one of "
            "$eq, $ne, $gt, $gte, $lt, $lte, $in, $nin in clause {'meta': {'lang': 'en'}}",
        ),
        ({}, "the filter {} has no conditions; pass where=None for no filter"),
        ({"$or": ["color"]}, "a filter must be a dict, got 'color' of type str"),
    ],
)
def test_a_malformed_filter_raises_a_message_naming_the_clause(where, message):
    with pytest.raises(FilterError) as excinfo:
        compile_filter(where)
    assert excinfo.value.args == (message,)


def test_a_malformed_filter_raises_before_any_record_is_read():
    class Exploding(dict):
        def __contains__(self, key):
            raise AssertionError("a record was read")

    store = FakeVectorStore()
    store.upsert("a", "refund", {"lang": "en"})
    store._table.metas[0] = Exploding(lang="en")
    with pytest.raises(FilterError):
        store.query("refund", where={"lang": {"$in": "en"}})


def test_integers_beyond_float_precision_compare_exactly():
    big = 2**60
    node = compile_filter({"n": {"$gt": big}})
    rows = [{"n": big + 1}, {"n": big}, {"n": float(big)}]
    assert list(node.mask(Columns(rows))) == [node.matches(r) for r in rows] == [True, False, False]


# -- differential test against a straightforward reference interpreter ----------------------


# The reference interpreter (reference(where, meta)) lives in tests/fuzz/_reference.py, shared
# with the fuzz suite's differential test of the whole store.

keys = st.sampled_from(["a", "b", "c"])
numbers = st.one_of(st.integers(-5, 5), st.sampled_from([0.5, -1.5, 2.0, 3.0]))
strings = st.sampled_from(["x", "y", "z", "1"])
scalars = st.one_of(numbers, strings, st.booleans())
metadata = st.one_of(st.none(), st.dictionaries(keys, scalars, max_size=3))
same_kind_lists = st.one_of(
    st.lists(numbers, min_size=1, max_size=3),
    st.lists(strings, min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=1, max_size=2),
)
conditions = st.one_of(
    scalars,
    st.dictionaries(st.sampled_from(["$eq", "$ne"]), scalars, min_size=1, max_size=1),
    st.dictionaries(
        st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), numbers, min_size=1, max_size=2
    ),
    st.dictionaries(st.sampled_from(["$in", "$nin"]), same_kind_lists, min_size=1, max_size=1),
)
leaf = st.dictionaries(keys, conditions, min_size=1, max_size=2)
filters = st.recursive(
    leaf,
    lambda inner: st.builds(
        lambda op, items: {op: items},
        st.sampled_from(["$and", "$or"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=6,
)


@given(where=filters, rows=st.lists(metadata, min_size=1, max_size=12))
def test_the_compiled_filter_agrees_with_the_reference_interpreter(where, rows):
    node = compile_filter(where)
    expected = [reference(where, row) for row in rows]
    assert [node.matches(row) for row in rows] == expected
    assert node.mask(Columns(rows)).tolist() == expected


bad_leaves = st.one_of(
    st.builds(
        lambda k, op: {k: {op: 1}},
        keys,
        st.sampled_from(["$regex", "$exists", "$eqq", "$IN", "eq"]),
    ),
    st.builds(
        lambda k, v: {k: {"$in": v}}, keys, st.one_of(st.just([]), strings, numbers, st.none())
    ),
    st.builds(
        lambda k, v: {k: {"$gt": v}},
        keys,
        st.one_of(strings, st.booleans(), st.none(), st.just(float("nan")), st.just([1])),
    ),
    st.builds(lambda k: {k: {}}, keys),
    st.builds(
        lambda k, v: {k: v},
        keys,
        st.one_of(
            st.none(), st.lists(scalars, max_size=2), st.just(float("nan")), st.just(object())
        ),
    ),
    st.builds(lambda op: {op: []}, st.sampled_from(["$and", "$or"])),
    st.builds(
        lambda op, v: {op: v}, st.sampled_from(["$and", "$or"]), st.one_of(scalars, st.none())
    ),
    st.just({}),
)


@given(bad=bad_leaves, good=leaf, wrap=st.sampled_from(["none", "$and", "$or"]))
def test_generated_malformed_filters_all_raise(bad, good, wrap):
    where = bad if wrap == "none" else {wrap: [good, bad]}
    with pytest.raises((TypeError, ValueError)):
        compile_filter(where)


def test_filters_run_vectorised_over_a_large_store():
    store = FakeVectorStore()
    n = 5000
    store.upsert_many(
        [f"d{i}" for i in range(n)],
        [f"note {i}" for i in range(n)],
        [{"year": 2000 + i % 30, "lang": ["en", "hu", "de"][i % 3]} for i in range(n)],
    )
    where = {"$and": [{"year": {"$gte": 2025}}, {"lang": {"$in": ["hu", "de"]}}]}
    matches = store.query("note 7", k=n, where=where)
    assert matches and all(
        m.metadata["year"] >= 2025 and m.metadata["lang"] != "en" for m in matches
    )
    assert len(matches) == sum(1 for i in range(n) if 2000 + i % 30 >= 2025 and i % 3 != 0)


def test_mask_of_a_key_absent_everywhere_is_all_false():
    assert not compile_filter({"nokey": {"$nin": ["x"]}}).mask(Columns([{"a": 1}] * 3)).any()
    assert compile_filter(None) is None
