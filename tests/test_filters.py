"""The metadata filter language: a table of cases, a differential test against a plain reference
interpreter, and generated malformed filters that must all raise."""

import datetime
import math

import pytest
from fuzz._reference import Clash, reference
from hypothesis import given
from hypothesis import strategies as st

from placeborag import PROFILES, FakeVectorStore, FilterError, get_profile
from placeborag._errors import FilterTypeError
from placeborag._filters import OPERATORS, Columns, compile_filter, copy_filter
from placeborag.toolkit import STRICT, FilterRules, filter_rules

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


def matching(where, semantics="engine"):
    node = compile_filter(where, semantics=semantics)
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
        ({"n": {"$gt": 4}}, ["f2", "f3", "f4", "f8"]),  # engine: the string "7" is skipped
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
    "where",
    [
        {"n": {"$gt": 4}},
        {"n": {"$gte": 5, "$lt": 10}},
        {"$or": [{"color": "green"}, {"n": {"$gte": 10}}]},
        {"$and": [{"color": "blue"}, {"n": {"$lte": 1}}]},  # every clause is evaluated
    ],
)
def test_strict_semantics_refuse_a_numeric_bound_against_a_stored_string(where):
    """The seed README's rule: a numeric bound against a string is a bug in the filter."""
    node = compile_filter(where)
    with pytest.raises(FilterTypeError, match=r"cannot compare .* with the stored value '7'"):
        node.mask(Columns(list(RECORDS.values())))
    with pytest.raises(FilterTypeError, match="cannot compare"):
        for meta in RECORDS.values():
            node.matches(meta)


def test_strict_semantics_refuse_a_numeric_bound_against_a_stored_bool():
    with pytest.raises(
        FilterTypeError, match=r"cannot compare \$gt 0 \(int\) with the stored value True"
    ):
        compile_filter({"flag": {"$gt": 0}}).mask(Columns(list(RECORDS.values())))


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
            "$gt needs a number, a datetime or a date, got '4' of type str in clause {'n': {'$gt': '4'}}",
        ),
        (
            {"n": {"$gt": True}},
            "$gt needs a number, a datetime or a date, got True of type bool in clause {'n': {'$gt': True}}",
        ),
        (
            {"n": {"$lt": math.inf}},
            "$lt needs a finite number, got inf in clause {'n': {'$lt': inf}}",
        ),
        (
            {"n": {"$in": [1, "7"]}},
            "$in needs values of one kind (all str, all numbers, all bool or all datetimes) in clause {'n': {'$in': [1, '7']}}",
        ),
        (
            {"n": [1, 2]},
            "a list is not a value; to match any of them use {'$in': [1, 2]}, to compare a list "
            "value use {'$eq': [1, 2]} in clause {'n': [1, 2]}",
        ),
        (
            {"n": None},
            "equality needs a value, got None; a key holding None counts as absent and never "
            "matches in clause {'n': None}",
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
            {"meta": {"lang": "en", "$eq": 1}},
            "the condition on 'meta' mixes operators and the plain key 'lang'; give operators "
            "only (one of $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $contains), or a dict "
            "without operators to compare a dict value in clause {'meta': {'lang': 'en', '$eq': 1}}",
        ),
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
    store._storage.table.metas[0] = Exploding(lang="en")
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
    node = compile_filter(where, semantics="engine")
    expected = [reference(where, row) for row in rows]
    assert [node.matches(row) for row in rows] == expected
    assert node.mask(Columns(rows)).tolist() == expected
    strict = compile_filter(where)
    try:
        expected = [reference(where, row, strict=True) for row in rows]
    except Clash:
        with pytest.raises(FilterTypeError, match="cannot compare"):
            strict.mask(Columns(rows))
        with pytest.raises(FilterTypeError, match="cannot compare"):
            [strict.matches(row) for row in rows]
    else:
        assert [strict.matches(row) for row in rows] == expected
        assert strict.mask(Columns(rows)).tolist() == expected


bad_leaves = st.one_of(
    st.builds(
        lambda k, op: {k: {op: 1}},
        keys,
        st.sampled_from(["$regex", "$exists", "$eqq", "$IN"]),
    ),
    st.builds(
        lambda k, v: {k: {"$in": v}}, keys, st.one_of(st.just([]), strings, numbers, st.none())
    ),
    st.builds(
        lambda k, v: {k: {"$gt": v}},
        keys,
        st.one_of(strings, st.booleans(), st.none(), st.just(float("nan")), st.just([1])),
    ),
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


# -- issue 15: what 0.4.0 accepted ----------------------------------------------------------


def test_an_empty_filter_matches_every_record():
    assert compile_filter({}) is None
    store = FakeVectorStore()
    store.upsert("a", "refund", {"lang": "en"})
    store.upsert("b", "refund policy")
    assert sorted(m.id for m in store.query("refund", k=5, where={})) == ["a", "b"]
    # inside $or, {} is a clause that always holds
    assert matching({"$or": [{}, {"color": "nothing"}]}) == sorted(RECORDS)


def test_a_dict_without_operators_is_compared_as_a_literal():
    rows = [{"meta": {"nested": 1}}, {"meta": {"nested": 2}}, {"meta": {"nested": True}}, {}]
    node = compile_filter({"meta": {"nested": 1}})
    assert [node.matches(r) for r in rows] == node.mask(Columns(rows)).tolist()
    assert node.mask(Columns(rows)).tolist() == [True, False, False, False]


@pytest.mark.parametrize(
    "where",
    [
        {"lang": {"$in": "hu"}},
        {"lang": {"$nin": 3}},
        {"$and": {"lang": "hu"}},
        {"$or": "lang"},
        {"$or": ["lang"]},
        ["lang"],
        "lang",
    ],
)
def test_a_filter_of_the_wrong_type_is_both_a_type_error_and_a_value_error(where):
    with pytest.raises(TypeError):
        compile_filter(where)
    with pytest.raises(ValueError):
        compile_filter(where)
    with pytest.raises(FilterError):
        compile_filter(where)


@pytest.mark.parametrize("where", [{"$and": []}, {"$or": []}])
def test_an_empty_and_or_is_a_value_error(where):
    with pytest.raises(ValueError, match="needs a non-empty list of filters"):
        compile_filter(where)


# -- issue 13 item 2: integers beyond float range ---------------------------------------------


def test_integers_beyond_float_range_compare_exactly_and_never_overflow():
    huge = 10**400
    rows = [{"n": huge}, {"n": 5}, {"n": huge + 1}, {"n": 1e300}, {}]
    cases = {
        "eq 5": ({"n": 5}, [False, True, False, False, False]),
        "eq huge": ({"n": huge}, [True, False, False, False, False]),
        "gt 2**1024": ({"n": {"$gt": 2**1024}}, [True, False, True, False, False]),
        "lte huge": ({"n": {"$lte": huge}}, [True, True, False, True, False]),
        "in": ({"n": {"$in": [huge + 1, 5]}}, [False, True, True, False, False]),
        "nin": ({"n": {"$nin": [huge]}}, [False, True, True, True, False]),
    }
    for name, (where, expected) in cases.items():
        node = compile_filter(where)
        assert [node.matches(r) for r in rows] == expected, name
        assert node.mask(Columns(rows)).tolist() == expected, name
    store = FakeVectorStore()
    store.upsert("a", "x", {"n": huge})
    store.upsert("b", "x", {"n": 5})
    assert [m.id for m in store.query("x", k=2, where={"n": 5})] == ["b"]


# -- issue 13 item 3: deep filters --------------------------------------------------------------


def _deep(depth, op="$and"):
    where = {"n": 1}
    for _ in range(depth):
        where = {op: [where]}
    return where


@pytest.mark.parametrize("depth", [249, 496, 5000, 50_000])
def test_filters_nested_to_any_depth_compile_evaluate_and_copy(depth):
    where = _deep(depth)
    node = compile_filter(where)
    rows = [{"n": 1}, {"n": 2}, None]
    assert [node.matches(r) for r in rows] == [True, False, False]
    assert node.mask(Columns(rows)).tolist() == [True, False, False]
    assert node.keys() == frozenset({"n"})
    copied = copy_filter(where)
    assert copied is not where
    # walk both to the bottom without recursion: equal, and no container shared
    a, b = copied, where
    while "$and" in a:
        assert a is not b and a["$and"] is not b["$and"]
        a, b = a["$and"][0], b["$and"][0]
    assert a == b == {"n": 1} and a is not b


def test_a_builder_folding_300_conditions_pairwise_works():
    where = {"k0": 0}
    for i in range(1, 300):
        where = {"$or": [where, {f"k{i}": i}]}
    node = compile_filter(where)
    assert node.matches({"k299": 299}) and node.matches({"k0": 0}) and not node.matches({"k1": 0})


def test_copy_filter_keeps_tuples_and_shares_no_container():
    where = {"$or": [{"lang": {"$in": ("hu", "de")}}, {"tags": {"$eq": ["a", ["b"]]}}]}
    copied = copy_filter(where)
    assert copied == where
    assert isinstance(copied["$or"][0]["lang"]["$in"], tuple)
    copied["$or"][1]["tags"]["$eq"][1].append("c")
    assert where["$or"][1]["tags"]["$eq"] == ["a", ["b"]]


def test_a_filter_that_holds_itself_is_refused_not_looped_over():
    where = {"$and": []}
    where["$and"].append(where)
    with pytest.raises(FilterError, match="more than 100000 clauses"):
        compile_filter(where)


# -- issue 13 item 11: a large numeric $in --------------------------------------------------


def test_a_large_numeric_in_over_many_records_is_exact():
    rows = [{"n": i} for i in range(5000)] + [{"n": 2**60 + 1}, {"n": "7"}, {"n": 7.5}]
    values = list(range(0, 400_000, 2)) + [2**60 + 1]
    node = compile_filter({"n": {"$in": values}})
    expected = [i % 2 == 0 for i in range(5000)] + [True, False, False]
    assert node.mask(Columns(rows)).tolist() == expected
    assert [node.matches(r) for r in rows] == expected


# -- issue 14: the metadata values engines store -----------------------------------------------


def test_none_lists_dicts_and_datetimes_are_filterable():
    t0 = datetime.datetime(2026, 1, 1, 12, 0)
    rows = [
        {"tags": ["refund", "policy"], "when": t0, "page": None, "src": {"file": "a.pdf"}},
        {"tags": ["shipping"], "when": t0 + datetime.timedelta(days=3), "page": 2},
        {"tags": [], "day": datetime.date(2026, 1, 2)},
        None,
    ]
    cases = [
        ({"tags": {"$contains": "refund"}}, [True, False, False, False]),
        ({"tags": {"$in": ["shipping", "policy"]}}, [True, True, False, False]),
        ({"tags": {"$nin": ["shipping"]}}, [True, False, True, False]),
        ({"tags": {"$eq": ["shipping"]}}, [False, True, False, False]),
        ({"when": {"$gt": t0}}, [False, True, False, False]),
        (
            {"when": {"$gte": t0, "$lt": t0 + datetime.timedelta(days=1)}},
            [True, False, False, False],
        ),
        ({"when": t0}, [True, False, False, False]),
        ({"day": {"$lte": datetime.date(2026, 1, 2)}}, [False, False, True, False]),
        ({"page": {"$ne": 3}}, [False, True, False, False]),  # None counts as absent
        ({"src": {"file": "a.pdf"}}, [True, False, False, False]),
    ]
    for where, expected in cases:
        node = compile_filter(where)
        assert [node.matches(r) for r in rows] == expected, where
        assert node.mask(Columns(rows)).tolist() == expected, where
    engine = compile_filter({"page": {"$ne": 3}}, negations_match_missing=True)
    assert engine.mask(Columns(rows)).tolist() == [True, True, True, True]


def test_a_datetime_bound_against_a_number_cannot_compare_under_strict_semantics():
    rows = [{"when": 5}, {"when": datetime.datetime(2026, 1, 1)}]
    bound = {"when": {"$gt": datetime.datetime(2025, 1, 1)}}
    with pytest.raises(FilterTypeError, match="cannot compare"):
        compile_filter(bound).mask(Columns(rows))
    assert compile_filter(bound, semantics="engine").mask(Columns(rows)).tolist() == [False, True]
    aware = {"when": {"$gt": datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)}}
    with pytest.raises(FilterTypeError, match="cannot compare"):
        compile_filter(aware).mask(Columns(rows[1:]))


def test_the_store_keeps_and_filters_engine_metadata():
    store = FakeVectorStore()
    when = datetime.datetime(2026, 3, 1)
    meta = {"tags": ["a", "b"], "when": when, "page": None, "src": {"file": "x.pdf", "p": [1]}}
    store.upsert("d", "refund policy", meta)
    meta["tags"].append("c")  # the caller's dict is not the record
    found = store.query("refund", k=1, where={"tags": {"$contains": "a"}})
    assert [m.id for m in found] == ["d"]
    assert found[0].metadata["tags"] == ["a", "b"]
    assert found[0].metadata["src"] == {"file": "x.pdf", "p": [1]}
    assert store.query("refund", k=1, where={"tags": {"$contains": "c"}}) == []
    assert [
        m.id for m in store.query("refund", k=1, where={"when": {"$lt": when.replace(year=2027)}})
    ] == ["d"]


def test_check_metadata_copies_deeply_keeps_tuples_and_converts_numpy_scalars():
    import numpy as np

    from placeborag._metadata import MAX_DEPTH, check_metadata, copy_metadata

    given = {"tags": ("a", ["b"]), "n": np.int64(3), "x": np.float32(0.5), "ok": np.bool_(True)}
    kept = check_metadata(given)
    assert kept == {"tags": ("a", ["b"]), "n": 3, "x": 0.5, "ok": True}
    assert type(kept["n"]) is int and type(kept["ok"]) is bool
    given["tags"][1].append("c")
    assert kept["tags"] == ("a", ["b"])
    out = copy_metadata(kept)
    out["tags"][1].append("d")
    assert kept["tags"] == ("a", ["b"])
    deep = leaf = {}
    for _ in range(MAX_DEPTH + 5):
        leaf["k"] = {}
        leaf = leaf["k"]
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_DEPTH} levels"):
        check_metadata(deep)
    with pytest.raises(ValueError, match="must be finite"):
        check_metadata({"a": [1.0, float("nan")]})
    with pytest.raises(TypeError, match=r"metadata\['a'\]\[0\]=\{1\} must be None, a str"):
        check_metadata({"a": [{1}]})


def test_a_store_with_engine_semantics_on_chroma_skips_a_string_against_a_numeric_bound():
    store = FakeVectorStore(profile="chroma", filter_semantics="engine")
    store.upsert("old", "refund policy", {"year": 2024})
    store.upsert("new", "refund policy", {"year": "recent"})
    assert [m.id for m in store.query("refund policy", where={"year": {"$gt": 2020}})] == ["old"]


def test_a_large_in_is_checked_and_matched_without_a_step_per_value(monkeypatch):
    """200k values over 5k records took 2.3 s: every value was checked, then tested against
    the whole column, one by one. Now the values are checked by type in one pass and matched
    with one sorted-array test (no per-value Python step; timing is the benchmark's job)."""
    from placeborag import _filters

    calls = 0
    kind = _filters._kind

    def counting(value):
        nonlocal calls
        calls += 1
        return kind(value)

    monkeypatch.setattr(_filters, "_kind", counting)
    rows = [{"n": i} for i in range(5000)]
    mask = compile_filter({"n": {"$in": list(range(0, 400_000, 2))}}).mask(Columns(rows))
    assert mask.sum() == 2500
    assert calls < 10_000  # the column's 5,000 values, not the filter's 200,000


@pytest.mark.parametrize("profile", ["chroma", "qdrant"])
@pytest.mark.parametrize("filter_mode", ["pre", "post"])
def test_in_and_nin_pass_over_a_stored_dict_or_a_list_inside_a_list(profile, filter_mode):
    # Both once raised TypeError (unhashable) on every $in/$nin query over the key.
    store = FakeVectorStore(profile=profile, filter_mode=filter_mode)
    store.upsert("dict", "refund policy", {"source": {"file": "a.pdf"}, "tags": "y"})
    store.upsert("nested", "refund policy", {"source": "a.pdf", "tags": [["y"], "z"]})
    store.upsert("flat", "refund policy", {"source": "b.pdf", "tags": ["y"]})

    def ids(where):
        return sorted(m.id for m in store.query("refund policy", k=3, where=where))

    assert ids({"source": {"$in": ["a.pdf"]}}) == ["nested"]  # a dict equals no scalar
    assert ids({"source": {"$nin": ["a.pdf"]}}) == ["dict", "flat"]
    assert ids({"tags": {"$in": ["y"]}}) == ["dict", "flat"]  # ["y"] inside a list is not "y"
    assert ids({"tags": {"$nin": ["y"]}}) == ["nested"]


# -- issue 23: an empty $in/$nin list, per engine -------------------------------------------

EMPTY_SET_PROFILES = sorted(n for n, p in PROFILES.items() if p.empty_in == "empty_set")
REFUSING_PROFILES = sorted(n for n, p in PROFILES.items() if p.empty_in == "error")
ROWS = list(RECORDS.values())


def both_paths(where, rules):
    """Which records match, by the plain and the vectorised path (asserted to agree)."""
    node = compile_filter(where, rules)
    plain = [node.matches(m) for m in ROWS]
    assert node.mask(Columns(ROWS)).tolist() == plain
    return sorted(i for i, hit in zip(RECORDS, plain) if hit)


def test_the_engines_that_read_an_empty_list_as_the_empty_set():
    # Measured by tests/conformance (test_an_empty_in_or_nin_list): Qdrant's MatchAny([]),
    # SQLAlchemy's in_([]) as langchain-postgres builds it, a LangChain filter callable.
    assert EMPTY_SET_PROFILES == ["langchain", "pgvector", "qdrant"]
    assert REFUSING_PROFILES == ["chroma", "faiss", "lancedb", "weaviate"]


@pytest.mark.parametrize("name", EMPTY_SET_PROFILES)
def test_under_engine_semantics_an_empty_in_matches_nothing_and_an_empty_nin_everything(name):
    rules = filter_rules(get_profile(name), "engine")
    assert both_paths({"color": {"$in": []}}, rules) == []
    # every record, those without the key or without metadata (f4, f5, f7) included
    assert both_paths({"color": {"$nin": []}}, rules) == sorted(RECORDS)
    assert both_paths({"$or": [{"color": {"$in": []}}, {"n": 1}]}, rules) == ["f1"]
    assert both_paths({"color": {"$nin": []}, "n": {"$gt": 4}}, rules) == ["f2", "f3", "f4", "f8"]


@pytest.mark.parametrize("name", REFUSING_PROFILES)
@pytest.mark.parametrize("op", ["$in", "$nin"])
def test_under_engine_semantics_a_refusing_engine_refuses_an_empty_list(name, op):
    with pytest.raises(FilterError) as excinfo:
        compile_filter({"color": {op: []}}, filter_rules(get_profile(name), "engine"))
    assert excinfo.value.args == (
        f"{op} needs a non-empty list, got an empty one in clause {{'color': {{{op!r}: []}}}}",
    )


@pytest.mark.parametrize("name", sorted(PROFILES))
@pytest.mark.parametrize("op", ["$in", "$nin"])
def test_strict_semantics_refuse_an_empty_list_under_every_profile(name, op):
    rules = filter_rules(get_profile(name), "strict")
    assert rules is STRICT
    with pytest.raises(FilterError, match="needs a non-empty list, got an empty one"):
        compile_filter({"color": {op: []}}, rules)


def test_the_missing_key_rule_of_ne_and_nin_comes_from_filter_rules_alone():
    for name, profile in PROFILES.items():
        engine = filter_rules(profile, "engine")
        assert engine == FilterRules("engine", profile.negation_matches_missing, profile.empty_in)
        lacking = {"color": {"$nin": ["red"]}}
        expected = (
            ["f2", "f4", "f5", "f7", "f8"] if engine.negations_match_missing else ["f2", "f5"]
        )
        assert both_paths(lacking, engine) == expected, name
        assert both_paths(lacking, filter_rules(profile, "strict")) == ["f2", "f5"], name


def test_filter_rules_refuses_unknown_semantics():
    with pytest.raises(FilterError) as excinfo:
        filter_rules(get_profile("qdrant"), "loose")
    assert excinfo.value.args == ("filter_semantics='loose' must be one of 'strict', 'engine'",)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"semantics": "loose"}, "semantics='loose' must be one of 'strict', 'engine'"),
        ({"empty_in": "none"}, "empty_in='none' must be one of 'error', 'empty_set'"),
        ({"negations_match_missing": 1}, "negations_match_missing=1 must be a bool"),
    ],
)
def test_filter_rules_are_checked_when_made(fields, message):
    with pytest.raises(FilterError) as excinfo:
        FilterRules(**fields)
    assert excinfo.value.args == (message,)


def test_rules_and_the_older_keywords_cannot_be_combined():
    with pytest.raises(FilterTypeError, match="not both"):
        compile_filter({"a": 1}, STRICT, semantics="engine")
    with pytest.raises(FilterTypeError) as excinfo:
        compile_filter({"a": 1}, "engine")
    assert excinfo.value.args == ("rules='engine' must be a FilterRules, such as STRICT",)


def test_the_older_keywords_spell_the_same_rules():
    assert FilterRules.of() == STRICT
    assert FilterRules.of(True) == FilterRules("engine", True)
    assert FilterRules.of(False, "engine") == FilterRules("engine", False)
    older = compile_filter({"color": {"$ne": "red"}}, negations_match_missing=True)
    assert [older.matches(m) for m in ROWS] == [
        i in ("f2", "f4", "f5", "f7", "f8") for i in RECORDS
    ]


@given(
    rows=st.lists(
        st.one_of(
            st.none(),
            st.dictionaries(
                st.sampled_from(["color", "n"]),
                st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["red", "blue"])),
            ),
        ),
        max_size=20,
    ),
    op=st.sampled_from(["$in", "$nin"]),
    negations=st.booleans(),
)
def test_an_empty_list_read_as_the_empty_set_is_all_or_nothing_on_both_paths(rows, op, negations):
    node = compile_filter({"color": {op: []}}, FilterRules("engine", negations, "empty_set"))
    expected = [op == "$nin"] * len(rows)
    assert [node.matches(m) for m in rows] == expected
    assert node.mask(Columns(rows)).tolist() == expected
    assert node.keys() == {"color"}


@pytest.mark.parametrize("name", EMPTY_SET_PROFILES)
def test_a_store_with_engine_semantics_answers_an_empty_in_as_its_engine(name):
    # Issue 23: an app's "no tenant may see anything" filter became a 500 in tests.
    store = FakeVectorStore(profile=name, filter_semantics="engine")
    store.upsert("a", "refund policy", {"tenant": "acme"})
    store.upsert("b", "refund window")
    assert store.query("refund", k=5, where={"tenant": {"$in": []}}) == []
    assert sorted(m.id for m in store.query("refund", k=5, where={"tenant": {"$nin": []}})) == [
        "a",
        "b",
    ]


@pytest.mark.parametrize("semantics", ["strict", "engine"])
def test_a_store_whose_engine_refuses_an_empty_in_refuses_it(semantics):
    store = FakeVectorStore(profile="chroma", filter_semantics=semantics)
    store.upsert("a", "refund policy", {"tenant": "acme"})
    with pytest.raises(FilterError, match=r"\$in needs a non-empty list, got an empty one"):
        store.query("refund", k=5, where={"tenant": {"$in": []}})


def _reference_column(rows, key):
    """A filter column built row by row (what Columns.column did before its whole-column
    paths for columns of strs and of numbers)."""
    import numpy as np

    from placeborag._filters import _BOOL, _EXACT_INT, _MISSING, _NUMBER, _STR, _kind

    n = len(rows)
    kind, number = np.zeros(n, dtype=np.int8), np.zeros(n)
    codes, table, simple = np.full(n, -1, dtype=np.int64), {}, True
    for i, meta in enumerate(rows):
        if not meta or key not in meta:
            continue
        value = meta[key]
        k = kind[i] = _kind(value)
        if k == _STR:
            codes[i] = table.setdefault(value, len(table))
        elif k in (_NUMBER, _BOOL):
            if isinstance(value, int) and abs(value) > _EXACT_INT:
                simple = False
            else:
                number[i] = float(value)
        elif k != _MISSING:
            simple = False
    return kind, number, table, codes, simple


def test_filter_columns_of_strs_or_numbers_are_the_row_by_row_columns():
    import random

    import numpy as np

    rng = random.Random(5)
    pools = [
        ["a", "b", "c"],
        [1, 2, 3.5, -0.0, float("nan"), 2**60],
        [True, False, 1],
        [None, "x"],
        ["x", datetime.date(2020, 1, 1)],
        [[1], {"a": 1}, "s"],
    ]
    for _ in range(2000):
        pool = rng.choice(pools)
        rows = [
            rng.choice([None, {}, {"other": 1}, {"k": rng.choice(pool)}, {"k": rng.choice(pool)}])
            for _ in range(rng.randint(0, 10))
        ]
        got = Columns(rows).column("k")
        want = _reference_column(rows, "k")
        for a, b in zip(got[:5], want):
            if isinstance(b, np.ndarray):
                assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), rows
            else:
                assert a == b, rows
