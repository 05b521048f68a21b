"""The explorer's export: a module a reviewer would accept, proved before it is handed over."""

from __future__ import annotations

import ast
import datetime
import re

import numpy as np
import pytest
from _exported import decimals, parse, ruff_check, run_in_process, run_pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import placeborag
from placeborag import (
    FakeEmbedder,
    FakeVectorStore,
    PlaceboragTypeError,
    PlaceboragValueError,
    get_profile,
)
from placeborag.explore import Document, build_export, export_pytest
from placeborag.explore._literals import layout, literal, plain, read_literal, same
from placeborag.explore._vectors import store_from_vectors

NOTEBOOK_06 = [
    "hu-refund-1",
    "hu-refund-2",
    "hu-refund-4",
    "en-refund-1",
    "en-refund-4",
    "en-refund-5",
    "en-refund-10",
]

HOSTILE = [
    '"""',
    "'''",
    '""" + __import__("os").system("x") + """',
    "\\",
    "\\n",
    "\n",
    "\r\n",
    "# comment",
    "{name}",
    "'",
    '"',
    "\x00",
    "\u2028",
    "\ud800",
    "\udfff",
    "\ud83c\udf89",  # a surrogate pair as two code points: two characters, kept as two
    "é",
    "日本",
    "🎉",
    "\u202e",
    "</script>",
    "# fmt: on",
]


def _hostile_text(min_size: int = 0) -> st.SearchStrategy[str]:
    pieces = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=4))
    return (
        st.lists(pieces, min_size=1, max_size=4).map("".join).filter(lambda s: len(s) >= min_size)
    )


def _public(source: str) -> None:
    """The module imports pytest, pathlib, datetime and public names of placeborag only."""
    for name in parse(source)["imports"]:
        if name.startswith("placeborag."):
            assert name.split(".", 1)[1] in placeborag.__all__, name
        else:
            assert name in ("pytest", "pathlib.Path", "datetime"), name


def _reviewable(export, store, tmp_path) -> dict:
    """Everything "What it must show" item 1 asks of one module, but running it."""
    source = export.source
    module = parse(source)
    records = store.records()
    # Every document whole in one string literal, with its id, in the store's order.
    assert [d[0] for d in module["DOCUMENTS"]] == list(export.ids)
    for doc_id, text, _ in module["DOCUMENTS"]:
        assert text == records.texts[records.position(doc_id)]
    # The previewed ids asserted as a list literal, by every test.
    previewed = [m.id for m in export.preview]
    assert module["tests"] and all(v == previewed for v in module["expected"].values())
    # No float of more than 6 decimals outside the user's own data; no score at all.
    assert all(decimals(f) <= 6 for f in module["floats"]), module["floats"]
    assert ".score" not in source
    _public(source)
    (tmp_path / "test_exported.py").write_text(source, encoding="utf-8")
    result = ruff_check(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    return module


# -- the demo, as notebook 06 designs it ------------------------------------------------------


def test_notebook_06_s_selection_exports_a_test_of_post_filter_starvation(demo, tmp_path):
    scenario = demo.replace(filter_mode="post")
    store = scenario.store()
    export = build_export(
        store, scenario.query, 5, scenario.where, selection=NOTEBOOK_06, name=scenario.name
    )
    module = _reviewable(export, store, tmp_path)
    assert module["QUERY"] == "refund policy" and module["K"] == 5
    assert module["WHERE"] == {"lang": "hu"}
    assert module["tests"] == ["test_post_filtering_starves_the_top_k"]
    assert module["expected"]["test_post_filtering_starves_the_top_k"] == [
        "hu-refund-1",
        "hu-refund-4",
    ]
    # Metadata reduced to what the filter reads: no tier, no year.
    assert {key for _, _, meta in module["DOCUMENTS"] for key in meta} == {"lang"}
    assert module["store_kwargs"]["filter_mode"] == "post"
    assert module["store_kwargs"]["embedder"]["cluster_match"] == "substring"
    # Hungarian stays readable.
    assert "pénzvisszatérítési szabályzat" in export.source
    assert "\\u" not in export.source
    # Proved: it passes, and fails with pre-filtering (read from the mutant's run).
    assert export.proof.outcomes == {"as exported": "passed", "filter_mode='pre'": "failed"}
    assert export.verdict == "this test fails if filter_mode is 'pre' (post-filter starvation)"
    assert "hu-refund-2" in export.proof.messages["filter_mode='pre'"]
    # The same state, the same bytes.
    again = build_export(
        scenario.store(),
        scenario.query,
        5,
        scenario.where,
        selection=NOTEBOOK_06,
        name=scenario.name,
        prove=False,
    )
    assert again.source == export.source and again.conftest == export.conftest
    assert len(export.source.splitlines()) < 90


def test_the_saved_module_passes_under_pytest_and_its_mutant_fails(demo, tmp_path):
    scenario = demo.replace(filter_mode="post")
    export = build_export(
        scenario.store(), scenario.query, 5, scenario.where, selection=NOTEBOOK_06, prove=False
    )
    written = export.save(tmp_path / "test_designed.py")
    assert written == [tmp_path / "test_designed.py"]
    assert run_pytest(tmp_path).returncode == 0
    mutant = export.source.replace('filter_mode="post"', 'filter_mode="pre"')
    assert mutant != export.source
    (tmp_path / "test_designed.py").write_text(mutant, encoding="utf-8")
    result = run_pytest(tmp_path)
    assert result.returncode == 1 and "1 failed" in result.stdout


def test_saving_never_replaces_a_file_unasked(demo, tmp_path):
    export = build_export(demo.store(), demo.query, demo.k, demo.where, prove=False)
    path = tmp_path / "test_x.py"
    path.write_text("# mine\n", encoding="utf-8")
    with pytest.raises(PlaceboragValueError) as excinfo:
        export.save(path)
    assert excinfo.value.args == (
        f"{path} already exists; pass overwrite=True (tick 'overwrite' in the app) to replace it",
    )
    assert path.read_text(encoding="utf-8") == "# mine\n"
    export.save(path, overwrite=True)
    assert path.read_text(encoding="utf-8") == export.source
    with pytest.raises(PlaceboragValueError, match=r"must name a \.py file"):
        export.save(tmp_path / "test_x.txt")


def test_the_conftest_export_is_the_fixture_alone_and_an_application_test_can_use_it(
    demo, tmp_path
):
    scenario = demo.replace(filter_mode="post")
    export = build_export(
        scenario.store(),
        scenario.query,
        5,
        scenario.where,
        selection=NOTEBOOK_06,
        name=scenario.name,
        prove=False,
    )
    conftest = parse(export.conftest)
    assert conftest["tests"] == [] and conftest["fixtures"] == ["demo_help_desk_store"]
    export.save_conftest(tmp_path / "conftest.py")
    (tmp_path / "test_app.py").write_text(
        "def test_my_retriever_sees_two_hungarian_answers(demo_help_desk_store):\n"
        "    hits = demo_help_desk_store.query('refund policy', k=5, where={'lang': 'hu'})\n"
        "    assert [h.id for h in hits] == ['hu-refund-1', 'hu-refund-4']\n",
        encoding="utf-8",
    )
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("keep", "keys"),
    [(None, {"lang"}), (True, {"lang", "tier", "year"}), (["year"], {"lang", "year"})],
)
def test_metadata_keeps_the_keys_the_filter_reads_unless_told(demo, keep, keys):
    export = build_export(
        demo.store(), demo.query, 2, {"lang": {"$in": ["hu"]}}, keep_metadata=keep, prove=False
    )
    assert {key for _, _, meta in parse(export.source)["DOCUMENTS"] for key in meta} == keys


class _Zone(datetime.tzinfo):
    """A time zone that is not a fixed offset (a ``datetime.timezone``): it has no literal."""

    def utcoffset(self, when):
        return datetime.timedelta(hours=1)

    def dst(self, when):
        return datetime.timedelta(0)

    def tzname(self, when):
        return "Zone"

    def __repr__(self):
        return "_Zone()"


def test_a_value_without_a_literal_is_refused_by_name_only_when_it_is_kept(demo):
    store = demo.store()
    when = datetime.datetime(2024, 1, 1, tzinfo=_Zone())
    store.upsert("odd", "refund policy", {"lang": "hu", "when": when})
    export = build_export(store, demo.query, 2, demo.where, selection=["odd"], prove=False)
    assert parse(export.source)["DOCUMENTS"] == [("odd", "refund policy", {"lang": "hu"})]
    with pytest.raises(PlaceboragTypeError) as excinfo:
        build_export(store, demo.query, 2, demo.where, selection=["odd"], keep_metadata=True)
    assert excinfo.value.args == (
        "the metadata of id 'odd'['when']=datetime.datetime(2024, 1, 1, 0, 0, tzinfo=_Zone()) "
        "cannot be exported: its tzinfo _Zone() is not a fixed offset (a datetime.timezone); "
        "store it as value.astimezone(datetime.timezone.utc) or with the offset it has, "
        "datetime.timezone(offset)",
    )
    with pytest.raises(PlaceboragValueError, match=r"\['price'\]=inf cannot be exported"):
        plain({"price": np.float64("inf")}, "the metadata of id 'a'")
    with pytest.raises(PlaceboragTypeError, match=r"=\{1, 2\} cannot be exported: a set is not"):
        plain({1, 2}, "m")


def test_dates_and_datetimes_are_written_as_the_calls_that_make_them():
    # issue 27: a datetime or date the filter reads could not be exported.
    utc, plus2 = datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=2))
    cases = {
        datetime.date(2024, 5, 1): "datetime.date(2024, 5, 1)",
        datetime.datetime(2024, 5, 1): "datetime.datetime(2024, 5, 1, 0, 0)",
        datetime.datetime(2024, 5, 1, 9, 30, 5, 7, utc): (
            "datetime.datetime(2024, 5, 1, 9, 30, 5, 7, tzinfo=datetime.timezone.utc)"
        ),
        datetime.datetime(2024, 5, 1, 9, 30, tzinfo=plus2, fold=1): (
            "datetime.datetime(2024, 5, 1, 9, 30, "
            "tzinfo=datetime.timezone(datetime.timedelta(hours=2)), fold=1)"
        ),
        datetime.datetime(
            2024, 5, 1, tzinfo=datetime.timezone(datetime.timedelta(minutes=-330), "IST")
        ): (
            "datetime.datetime(2024, 5, 1, 0, 0, "
            'tzinfo=datetime.timezone(datetime.timedelta(minutes=-330), "IST"))'
        ),
    }
    for value, text in cases.items():
        assert literal(plain(value, "m")) == text
        assert same(read_literal(text), value)
    import pandas as pd

    assert type(plain(pd.Timestamp("2026-01-01 10:00"), "m")) is datetime.datetime
    with pytest.raises(PlaceboragTypeError, match="a Timestamp is not exactly a datetime"):
        plain(pd.Timestamp("2026-01-01 10:00:00.000000001"), "m")
    # The reader calls the datetime constructors and nothing else.
    for text in ("__import__('os')", "datetime.datetime.now()", "os.system('x')", "f(1)"):
        with pytest.raises(ValueError, match="malformed literal"):
            read_literal(text)


def test_numpy_scalars_become_plain_literals():
    value = plain(
        {"n": np.int64(3), "b": np.bool_(True), "v": np.arange(2), "s": np.str_("x\x00")}, "m"
    )
    assert value == {"n": 3, "b": True, "v": [0, 1], "s": "x\x00"}
    assert type(value["n"]) is int and type(value["b"]) is bool
    assert ast.literal_eval(literal(value)) == value


# -- behaviours -------------------------------------------------------------------------------


def test_a_tie_names_its_group_and_rule_and_fails_under_another_rule(tmp_path):
    store = FakeVectorStore(profile="chroma")
    store.upsert_many(["b", "a", "c", "d"], ["same text"] * 3 + ["other words"])
    export = build_export(store, "same text", 2)
    module = _reviewable(export, store, tmp_path)
    assert module["tests"] == ["test_a_tie_is_decided_by_insertion_order"]
    assert '[["b", "a", "c"], ["b", "a"]]' in export.source
    assert 'assert scenario_store.profile.tie_order == "insertion"' in export.source
    assert export.proof.outcomes == {"as exported": "passed", "tie_order='reverse'": "failed"}
    assert export.verdict == (
        "this test fails if tie_order is 'reverse' (a tie decided by the profile's rule)"
    )


def test_recall_names_the_ids_the_index_lost_and_fails_with_a_perfect_index(tmp_path):
    texts = [f"refund policy note {i}" for i in range(12)]
    store = FakeVectorStore(recall=0.5)
    store.upsert_many([f"d{i:02d}" for i in range(12)], texts)
    export = build_export(store, "refund policy", 4)
    module = _reviewable(export, store, tmp_path)
    assert "test_recall_loses_documents_a_perfect_index_returns" in module["tests"]
    (recall,) = [b for b in export.behaviours if b.setting == "recall"]
    perfect = [m.id for m in store.with_options(recall=1.0).query("refund policy", 4)]
    assert set(recall.ids) <= set(perfect)
    assert export.proof.outcomes["recall=1.0"] == "failed"
    assert "this test fails if recall is 1.0 (documents lost to recall)" in export.verdict


def test_a_ranking_without_a_quirk_says_so(demo, tmp_path):
    export = build_export(demo.store(), "delivery times", 3, None)
    module = _reviewable(export, demo.store(), tmp_path)
    assert module["tests"] == ["test_ranking_for_delivery_times"]
    assert export.behaviours == () and export.proof.outcomes == {"as exported": "passed"}
    assert export.verdict.startswith("the test pins a ranking (ids and order) but no quirk")


# -- size -------------------------------------------------------------------------------------


def test_a_large_selection_warns_and_names_the_smallest_corpus(demo):
    big = demo.scaled(600)
    store = big.store(filter_mode="post")
    with pytest.raises(PlaceboragValueError) as excinfo:
        build_export(store, big.query, 5, big.where, selection=list(store.ids))
    small = build_export(store, big.query, 5, big.where, prove=False)
    assert str(len(small.ids)) in str(excinfo.value)
    assert "the selection holds 600 documents, more than max_documents=200" in str(excinfo.value)
    assert len(small.ids) < 30
    assert {b.name for b in small.behaviours} == {"post-filter starvation"}


def test_twenty_documents_make_a_module_of_under_150_lines(demo):
    export = build_export(
        demo.store(),
        demo.query,
        5,
        demo.where,
        selection=[d.id for d in demo.documents[:20]],
        prove=False,
    )
    assert len(export.ids) == 20 and len(export.source.splitlines()) < 150


# -- own vectors and every profile ------------------------------------------------------------


def _vector_store(**options):
    rng = np.random.default_rng(20261201)
    vectors = rng.normal(size=(20, 384))
    ids = [f"chunk-{i:02d}" for i in range(20)]
    texts = [f"chunk text {i % 6}" for i in range(20)]  # texts repeat; vectors do not
    metas = [
        {"lang": "hu" if i % 3 else "en", "path": f"/tmp/upload-{i}/a.pdf", "run": f"u{i}"}
        for i in range(20)
    ]
    queries = {"the query": rng.normal(size=384)}
    return store_from_vectors(vectors, ids, texts, metas, queries=queries, **options)


@pytest.mark.parametrize("profile", sorted(placeborag.PROFILES))
def test_an_export_over_own_vectors_keeps_them_beside_the_module(profile, tmp_path):
    store = _vector_store(profile=profile, filter_mode="post")
    export = build_export(store, "the query", 4, {"lang": "hu"}, selection=list(store.ids))
    module = _reviewable(export, store, tmp_path)
    assert len(export.source.splitlines()) < 150  # 20 documents of 384 dimensions
    assert set(export.vectors) == {"manifest.json", "vectors.bin"}
    assert module["RECORDING_SHA256"] in export.vectors["manifest.json"].decode()
    # No upload path or run id: only the key the filter reads.
    assert "/tmp/upload" not in export.source and '"run"' not in export.source
    assert [m.id for m in export.preview] == [
        m.id for m in store.query("the query", 4, {"lang": "hu"})
    ]
    assert export.proof.outcomes["as exported"] == "passed"
    for key, outcome in export.proof.outcomes.items():
        if key != "as exported":
            assert outcome == "failed", export.verdict
    export.save(tmp_path / "test_saved.py")
    assert run_pytest(tmp_path, "test_saved.py").returncode == 0
    # The side file is verified: a changed byte fails the test, naming the hash.
    raw = bytearray((tmp_path / "test_saved.vectors" / "vectors.bin").read_bytes())
    raw[0] ^= 1
    (tmp_path / "test_saved.vectors" / "vectors.bin").write_bytes(bytes(raw))
    result = run_pytest(tmp_path, "test_saved.py")
    assert result.returncode == 1 and "sha256" in result.stdout


@pytest.mark.parametrize("profile", sorted(placeborag.PROFILES))
def test_every_profile_exports_a_reviewable_proved_module(demo, profile, tmp_path):
    scenario = demo.replace(profile=profile, filter_mode="post")
    store = scenario.store()
    export = build_export(store, scenario.query, 5, scenario.where, selection=NOTEBOOK_06)
    module = _reviewable(export, store, tmp_path)
    assert module["store_kwargs"]["profile"] == profile
    assert export.proof.outcomes["as exported"] == "passed"
    assert export.proof.ok, export.verdict


# -- hostile data -----------------------------------------------------------------------------


@st.composite
def _cases(draw):
    ids = draw(st.lists(_hostile_text(1), min_size=1, max_size=5, unique=True))
    texts = [draw(_hostile_text()) for _ in ids]
    key = st.one_of(st.sampled_from(["lang", "k\n'\"", "</script>"]), _hostile_text(1)).filter(
        lambda s: not s.startswith("$")
    )
    value = st.one_of(
        _hostile_text(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.booleans(),
        st.none(),
        st.lists(_hostile_text(), max_size=2),
    )
    metas = [draw(st.dictionaries(key, value, max_size=3)) for _ in ids]
    options = {
        "profile": draw(st.sampled_from(sorted(placeborag.PROFILES))),
        "filter_mode": draw(st.sampled_from(["pre", "post"])),
        "recall": draw(st.sampled_from([1.0, 0.5])),
    }
    if draw(st.booleans()):
        store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8), **options)
        store.upsert_many(ids, texts, metas)
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        store = FakeVectorStore.from_vectors(
            ids, rng.normal(size=(len(ids), 8)), texts, metas, **options
        )
    query = draw(_hostile_text())
    if not isinstance(store.embedder, FakeEmbedder):
        store = store_from_vectors(
            store.records().vectors,
            ids,
            texts,
            metas,
            queries={query: np.random.default_rng(1).normal(size=8)},
            **options,
        )
    where = None
    keyed = [m for m in metas if m]
    if keyed and draw(st.booleans()):
        where = dict([next(iter(keyed[0].items()))])
    return store, query, draw(st.integers(1, 4)), where, draw(_hostile_text()), draw(st.booleans())


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(case=_cases())
def test_hostile_data_is_held_verbatim_formatted_and_runs(case, tmp_path_factory):
    store, query, k, where, name, keep = case
    try:
        export = build_export(
            store, query, k, where, name=name, keep_metadata=keep or None, prove=False
        )
    except placeborag.FilterError:
        return  # a filter the store itself refuses
    except PlaceboragValueError as error:  # the one refusal: a recording is UTF-8 JSON
        assert "cannot be recorded beside the module" in str(error)
        assert not isinstance(store.embedder, FakeEmbedder)
        return
    folder = tmp_path_factory.mktemp("hostile")
    module = _reviewable(export, store, folder)
    records = store.records()
    for doc_id, _, meta in module["DOCUMENTS"]:
        full = dict(records.metadata[records.position(doc_id)])
        assert meta == (full if keep else {k: v for k, v in full.items() if where and k in where})
    assert module["QUERY"] == query and module["WHERE"] == where
    # Nothing the user typed outside the data literals but the ids the tests assert.
    user = {*records.ids, *records.texts, query, name}
    outside = set(module["strings_outside_data"]) & user
    assert outside <= set(records.ids) | {query} & {"pre", "post"}, outside
    assert re.fullmatch(r"[a-z0-9_]+_store", parse(export.source)["fixtures"][0])
    source = export.source
    source.encode("utf-8")  # lone surrogates are escapes, so the file is UTF-8
    run_in_process(source, export.vectors, folder)
    again = build_export(store, query, k, where, name=name, keep_metadata=keep or None, prove=False)
    assert again.source == source


def test_a_megabyte_of_hostile_text_is_held_verbatim(tmp_path):
    text = ('"""\\</script>\ud800' * 100_000)[:1_000_000]
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=8))
    store.upsert("big", text, {"lang": "x"})
    store.upsert("small", "refund", {"lang": "x"})
    export = build_export(store, "refund", 2, {"lang": "x"})
    module = _reviewable(export, store, tmp_path)
    assert module["DOCUMENTS"][0][1] == text
    assert export.proof.outcomes["as exported"] == "passed"


def _fixed_offsets() -> st.SearchStrategy[datetime.timezone]:
    """Every kind of fixed offset: whole hours, minutes, seconds, microseconds, named or not."""
    day = datetime.timedelta(hours=24) - datetime.timedelta(microseconds=1)
    offsets = st.timedeltas(min_value=-day, max_value=day) | st.sampled_from(
        [
            datetime.timedelta(hours=2),
            datetime.timedelta(minutes=-330),
            datetime.timedelta(seconds=61),
        ]
    )
    return st.builds(datetime.timezone, offsets) | st.builds(
        datetime.timezone, offsets, _hostile_text(1)
    )


_PLAIN = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=False, allow_infinity=False),
        _hostile_text(),
        st.text(alphabet="abcdefgh \"'", max_size=60),
        st.dates(),
        st.datetimes(timezones=st.none() | st.just(datetime.timezone.utc) | _fixed_offsets()),
    ),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_hostile_text(), inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=st.lists(_PLAIN, min_size=1, max_size=6), depth=st.sampled_from([0, 1, 2]))
def test_layout_is_what_ruff_format_leaves_and_reads_back(values, depth, tmp_path_factory):
    # As the exporter uses it: a module-level assignment, or a keyword argument of a call
    # (depth 1) or of a call inside a call (depth 2, the embedder's options).
    lines = []
    for n, value in enumerate(values):
        if depth == 0:
            lines += layout(f"x{n} = ", value)
        else:
            opening = ["f(", "    g("][:depth]
            closing = ["    ),", ")"][-depth:]
            lines += [*opening, *layout(f"x{n}=", value, ",", 4 * depth), *closing]
        assert same(read_literal("\n".join(layout("", value))), value)
    folder = tmp_path_factory.mktemp("layout")
    (folder / "m.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = ruff_check(folder)
    assert result.returncode == 0, result.stdout


def test_layout_matches_ruff_for_nested_values(tmp_path):
    value = {
        "refund": ["refund policy", "money back" * 5, "pénzvisszatérítés"],
        "x": {"y": [1, 2.5, None]},
    }
    lines = ["X = 1", *layout("CLUSTERS = ", value), *layout("SHORT = ", ["a"]), ""]
    (tmp_path / "m.py").write_text("\n".join(lines), encoding="utf-8")
    result = ruff_check(tmp_path)
    assert result.returncode == 0, result.stdout


# -- arguments --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selection", "error", "message"),
    [
        ("hu-refund-1", PlaceboragTypeError, "must be a list of ids, not str"),
        (["hu-refund-1", "hu-refnd-2"], PlaceboragValueError, "did you mean 'hu-refund-2'"),
        ([], PlaceboragValueError, "at least one id"),
        (["hu-refund-1", 3], PlaceboragTypeError, r"selection\[1\]=3 must be a str"),
        ({"hu-refund-1": 1}, PlaceboragTypeError, "must be a list of ids"),
    ],
)
def test_a_bad_selection_raises(demo, selection, error, message):
    with pytest.raises(error, match=message):
        export_pytest(demo, selection=selection)


def test_a_profile_object_is_refused_with_a_clear_error(demo):
    store = FakeVectorStore(embedder=demo.embedder(), profile=get_profile("qdrant"))
    store.upsert("a", "refund policy")
    with pytest.raises(PlaceboragTypeError, match=r"Profile object.*profile=.<name>."):
        build_export(store, "refund", 1)


def test_keep_metadata_must_be_none_true_or_key_names(demo):
    with pytest.raises(PlaceboragTypeError, match="keep_metadata='lang' must be None"):
        build_export(demo.store(), demo.query, 1, keep_metadata="lang")


def test_export_pytest_takes_a_scenario(demo):
    source = export_pytest(
        demo.replace(documents=(Document("a", "alpha"),), where=None), selection=["a"]
    )
    assert parse(source)["expected"] == {"test_ranking_for_refund_policy": ["a"]}


_PROBE = """
import hashlib, numpy as np
from placeborag.explore import build_export, demo_scenario, store_from_vectors
s = demo_scenario().replace(filter_mode="post")
e = build_export(s.store(), s.query, 5, s.where, selection=%r, name=s.name, prove=False)
rng = np.random.default_rng(7)
v = store_from_vectors(rng.normal(size=(9, 16)), [f"d{i}" for i in range(9)], ["t"] * 9,
                       [{"lang": "hu", "run": str(i)} for i in range(9)],
                       queries={"q": rng.normal(size=16)}, filter_mode="post")
w = build_export(v, "q", 3, {"lang": "hu"}, prove=False)
parts = [e.source, e.conftest, w.source, *sorted(w.vectors.items())]
print(hashlib.sha256(repr(parts).encode("utf-8", "surrogatepass")).hexdigest())
"""


def test_the_same_state_exports_the_same_bytes_in_every_process():
    import os
    import subprocess
    import sys

    digests = set()
    for seed in ("0", "1", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", _PROBE % (NOTEBOOK_06,)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=300,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1
