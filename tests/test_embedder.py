"""FakeEmbedder and cosine_similarity: configuration, clusters, and every error message."""

import math
import warnings

import numpy as np
import pytest

from placeborag import (
    FakeEmbedder,
    PlaceboragTypeError,
    PlaceboragValueError,
    PlaceboragWarning,
    _embedder,
    cosine_similarity,
)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"model_name": ""}, ValueError, "model_name='' must be a non-empty str"),
        ({"model_name": 3}, TypeError, "model_name=3 must be a str, not int"),
        ({"dimensions": 1}, ValueError, "dimensions=1 must be between 2 and 65536"),
        ({"dimensions": 256.0}, TypeError, "dimensions=256.0 must be an int, not float"),
        ({"dimensions": True}, TypeError, "dimensions=True must be an int, not bool"),
        (
            {"cluster_spread": -0.1},
            ValueError,
            "cluster_spread=-0.1 must be a finite number between 0 and 50",
        ),
        (
            {"cluster_spread": float("nan")},
            ValueError,
            "cluster_spread=nan must be a finite number between 0 and 50",
        ),
        ({"cluster_spread": "wide"}, TypeError, "cluster_spread='wide' must be a number, not str"),
        (
            {"cluster_match": "prefix"},
            ValueError,
            "cluster_match='prefix' must be one of 'exact', 'substring'",
        ),
        (
            {"clusters": ["refund policy"]},
            TypeError,
            "clusters=['refund policy'] must be a mapping of cluster name to a list of texts, not list",
        ),
        (
            {"clusters": {"refund": "refund policy"}},
            TypeError,
            "clusters['refund']='refund policy' must be a list of texts, not str",
        ),
        (
            {"clusters": {"refund": []}},
            ValueError,
            "clusters['refund'] is empty; declare at least one text",
        ),
        (
            {"clusters": {"refund": ["a", 7]}},
            TypeError,
            "clusters['refund'] holds 7, which must be a str, not int",
        ),
        (
            {"clusters": {"refund": [""]}},
            ValueError,
            "clusters['refund'] holds the empty string; declare non-empty texts",
        ),
        (
            {"clusters": {"refund": ["a", "a"]}},
            ValueError,
            "'a' is declared twice in cluster 'refund'",
        ),
        ({"clusters": {"": ["a"]}}, ValueError, "cluster name '' must be a non-empty str"),
        ({"clusters": {1: ["a"]}}, TypeError, "cluster name 1 must be a str, not int"),
    ],
)
def test_bad_configuration_is_rejected_with_a_message_naming_the_value(options, error, message):
    with pytest.raises(error) as excinfo:
        FakeEmbedder(**options)
    assert excinfo.value.args == (message,)


def test_an_impossible_declaration_names_the_offending_texts_and_similarities():
    clusters = {name: [f"{name}1", f"{name}2"] for name in "abcde"}
    with pytest.raises(ValueError) as excinfo:
        FakeEmbedder(dimensions=2, clusters=clusters)
    message = excinfo.value.args[0]
    assert message.startswith(
        "clusters cannot be satisfied at dimensions=2 with cluster_spread=0.5: "
    )
    assert "(cosine " in message and "cluster 'a'" in message
    assert message.endswith("raise dimensions, lower cluster_spread or declare fewer clusters")


def test_the_same_declaration_satisfied_at_a_higher_dimension():
    clusters = {name: [f"{name}1", f"{name}2"] for name in "abcde"}
    assert FakeEmbedder(dimensions=64, clusters=clusters).cluster_names == list("abcde")


README_CLUSTERS = {
    "refund": ["refund policy", "money back", "hogyan kérek vissza pénzt"],
    "shipping": ["delivery times", "szállítási idő"],
}


def test_a_small_declaration_is_checked_pair_by_pair_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning here would fail the test
        embedder = FakeEmbedder(clusters=README_CLUSTERS)
    assert embedder.verify_clusters() is None
    assert embedder.verify_clusters(pairs=False) is None


def test_a_declaration_too_large_for_every_pair_is_checked_against_the_anchors_and_says_so():
    # 8,400 members at 64 dimensions: 8,400**2 * 64 > 2**32 comparisons, so the constructor
    # checks each member against the anchors only. Pairs do not hold at this spread: checking
    # every pair (as it does for smaller declarations) would have refused the declaration.
    clusters = {c: [f"{c} member {j}" for j in range(4200)] for c in ("a", "b")}
    with pytest.warns(PlaceboragWarning) as record:
        embedder = FakeEmbedder(dimensions=64, clusters=clusters, cluster_spread=0.8)
    assert [str(w.message) for w in record] == [
        "clusters: 8,400 declared members in 2 clusters at dimensions=64 were checked against "
        "the cluster anchors only (each member nearer its own anchor than any other), not pair "
        "by pair: that would take 8,400**2 x 64 > 2**32 operations; call verify_clusters() to "
        "check every pair"
    ]
    assert record[0].filename == __file__  # it points at the caller's line
    embedder.verify_clusters(pairs=False)  # what the constructor checked holds
    with pytest.raises(PlaceboragValueError) as excinfo:
        embedder.verify_clusters()
    message = excinfo.value.args[0]
    assert message.startswith("clusters do not hold at dimensions=64 with cluster_spread=0.8: ")
    assert "as close to 'b member" in message and "as to its cluster-mate 'a member" in message
    assert message.endswith("raise dimensions, lower cluster_spread or declare fewer clusters")


def test_a_declaration_too_large_for_the_anchors_is_not_checked_and_says_so(monkeypatch):
    # The budget is lowered so that a declaration the constructor would refuse (five clusters
    # in two dimensions) is over it: the constructor must then neither check nor refuse it.
    monkeypatch.setattr(_embedder, "_CHECK_BUDGET", 10 * 5 * 2 - 1)
    clusters = {name: [f"{name}1", f"{name}2"] for name in "abcde"}
    with pytest.warns(PlaceboragWarning) as record:
        embedder = FakeEmbedder(dimensions=2, clusters=clusters)
    assert [str(w.message) for w in record] == [
        "clusters: 10 declared members in 5 clusters at dimensions=2 were not checked beyond "
        "their own anchors: comparing every member with every anchor would take 10 x 5 x 2 > "
        "2**32 operations; call verify_clusters(pairs=False) to check them against the "
        "anchors, verify_clusters() to check every pair"
    ]
    for text in ("a1", "e2"):  # what holds by construction still holds
        m = embedder.jitter_of(text)
        own = cosine_similarity(embedder.cluster_anchor(text[0]), embedder.embed(text))
        assert own == pytest.approx(1 / math.sqrt(1 + m * m), abs=1e-12)
    with pytest.raises(PlaceboragValueError, match=r"as close to the anchor of cluster"):
        embedder.verify_clusters(pairs=False)


def test_the_constructor_check_is_bounded_at_the_budget(monkeypatch):
    calls = []
    original = FakeEmbedder._worst_violation

    def spy(self, scope):
        calls.append(scope)
        return original(self, scope)

    monkeypatch.setattr(FakeEmbedder, "_worst_violation", spy)
    budget = _embedder._CHECK_BUDGET
    assert budget == 2**32
    per_cluster = 2048  # 4,096 members at 256 dimensions: exactly the budget, every pair
    clusters = {c: [f"{c} {j}" for j in range(per_cluster)] for c in ("a", "b")}
    FakeEmbedder(dimensions=256, clusters=clusters, cluster_spread=0.3)
    assert calls == ["pairs"]
    clusters["a"].append("a one more")
    with pytest.warns(PlaceboragWarning):
        FakeEmbedder(dimensions=256, clusters=clusters, cluster_spread=0.3)
    assert calls == ["pairs", "anchors"]


@pytest.mark.parametrize("pairs", [1, None, "yes"])
def test_verify_clusters_refuses_a_pairs_flag_that_is_not_a_bool(pairs):
    with pytest.raises(PlaceboragTypeError) as excinfo:
        FakeEmbedder(clusters=README_CLUSTERS).verify_clusters(pairs=pairs)
    assert excinfo.value.args == (
        f"pairs={pairs!r} must be True or False, not {type(pairs).__name__}",
    )


def test_verify_clusters_without_clusters_has_nothing_to_check():
    assert FakeEmbedder().verify_clusters() is None


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda e: e.embed(None), TypeError, "text=None must be a str, not NoneType"),
        (lambda e: e.embed(b"x"), TypeError, "text=b'x' must be a str, not bytes"),
        (
            lambda e: e.embed_batch("refund"),
            TypeError,
            "texts='refund' must be a sequence of str, not a single str; wrap it in a list",
        ),
        (lambda e: e.embed_batch(["a", 3]), TypeError, "texts[1]=3 must be a str, not int"),
        (lambda e: e.embed_batch(7), TypeError, "texts=7 must be a sequence of str, not int"),
        (lambda e: e.cluster_anchor(1), TypeError, "name=1 must be a str, not int"),
        (lambda e: e.cluster_of(None), TypeError, "text=None must be a str, not NoneType"),
    ],
)
def test_bad_calls_raise(call, error, message):
    embedder = FakeEmbedder(clusters={"refund": ["refund policy"]})
    with pytest.raises(error) as excinfo:
        call(embedder)
    assert excinfo.value.args == (message,)


def test_an_empty_batch_is_an_empty_list_or_an_empty_matrix_of_the_right_width():
    assert FakeEmbedder(dimensions=32).embed_batch([]) == []
    assert FakeEmbedder(dimensions=32).embed_array([]).shape == (0, 32)


def test_an_undeclared_cluster_has_no_anchor():
    embedder = FakeEmbedder(clusters={"refund": ["refund policy"]})
    assert embedder.cluster_anchor("shipping") is None
    assert FakeEmbedder().cluster_anchor("refund") is None


def test_configuration_is_readable_and_the_repr_says_it():
    embedder = FakeEmbedder(
        model_name="m",
        dimensions=64,
        clusters={"r": ["a"]},
        cluster_spread=0.2,
        cluster_match="substring",
    )
    assert embedder.clusters == {"r": ("a",)}
    assert embedder.cluster_names == ["r"]
    assert repr(embedder) == (
        "FakeEmbedder(model_name='m', dimensions=64, clusters={'r': ('a',)}, "
        "cluster_spread=0.2, cluster_match='substring')"
    )
    assert repr(FakeEmbedder()) == "FakeEmbedder(model_name='placebo-embed-v1', dimensions=256)"


def test_jitter_magnitudes_lie_in_half_to_one_and_a_half_spreads():
    texts = [f"member {i}" for i in range(60)]
    embedder = FakeEmbedder(clusters={"c": texts}, cluster_spread=0.4, dimensions=512)
    magnitudes = [embedder.jitter_of(t) for t in texts]
    assert all(0.2 <= m < 0.6 for m in magnitudes)
    assert embedder.jitter_of("not declared") is None


def test_spread_zero_puts_every_member_on_its_anchor():
    embedder = FakeEmbedder(clusters={"c": ["a", "b"]}, cluster_spread=0)
    anchor = embedder.cluster_anchor("c")
    assert cosine_similarity(anchor, embedder.embed("a")) == pytest.approx(1.0, abs=1e-15)


def test_equal_length_substring_declarations_go_to_the_first_declared():
    embedder = FakeEmbedder(
        clusters={"first": ["money back"], "second": ["lost order"]}, cluster_match="substring"
    )
    assert embedder.cluster_of("lost order, money back please") == "first"


def test_a_substring_member_gets_its_own_vector_at_the_exact_anchor_cosine():
    embedder = FakeEmbedder(clusters={"r": ["refund policy"]}, cluster_match="substring")
    chunk = "the refund policy, in full"
    m = embedder.jitter_of(chunk)
    assert cosine_similarity(embedder.cluster_anchor("r"), embedder.embed(chunk)) == pytest.approx(
        1 / math.sqrt(1 + m * m), abs=1e-12
    )


def test_words_shared_make_texts_near_and_case_does_not_matter_to_the_hashing_layer():
    e = FakeEmbedder()
    assert e.embed("Refund Policy") == e.embed("refund policy")
    assert cosine_similarity(e.embed("refund policy"), e.embed("refund rules")) > 0.2


def test_the_exact_integer_form_normalises_to_the_float_vector():
    embedder = FakeEmbedder(dimensions=64, clusters={"r": ["refund policy"]})
    floats, exact = embedder._engine.embed_exact(["refund policy", "parcel"])
    for f, row in zip(floats, exact):
        norm = math.sqrt(sum(int(v) * int(v) for v in row))
        assert np.array_equal(f, row.astype(np.float64) / norm)


@pytest.mark.parametrize(
    ("a", "b", "error", "message"),
    [
        (
            [1, 0],
            [1, 0, 0],
            ValueError,
            "a has 2 values and b has 3; both must have the same length",
        ),
        ([0, 0], [1, 0], ValueError, "a is a zero vector; cosine similarity is undefined for it"),
        (
            [1, 0],
            [0.0, 0.0],
            ValueError,
            "b is a zero vector; cosine similarity is undefined for it",
        ),
        ([], [], ValueError, "a is empty; a vector needs at least one value"),
        (
            [1, float("nan")],
            [1, 0],
            ValueError,
            "a holds a non-finite value; all values must be finite",
        ),
        ("ab", [1, 0], TypeError, "a='ab' must be a sequence of numbers, not str"),
        ([1, 0], None, TypeError, "b=None must be a sequence of numbers, not NoneType"),
        ([[1, 0]], [1, 0], ValueError, "a must be one-dimensional, not of shape (1, 2)"),
    ],
)
def test_cosine_similarity_rejects_what_has_no_angle(a, b, error, message):
    with pytest.raises(error) as excinfo:
        cosine_similarity(a, b)
    assert excinfo.value.args == (message,)


def test_cosine_similarity_values():
    assert cosine_similarity([1, 0], [0, 1]) == 0.0
    assert cosine_similarity([1, 1], [2, 2]) == pytest.approx(1.0)
    assert cosine_similarity((1.0, 0.0), np.array([-3.0, 0.0])) == -1.0


@pytest.mark.parametrize(
    "batch",
    [
        ["refund policy", "refund policy"],
        ["refund policy", "parcel", "refund policy", "money back"],
    ],
)
def test_repeated_cluster_members_in_one_batch_get_one_vector(batch):
    clusters = {"refund": ["refund policy", "money back"], "parcel": ["parcel"]}
    fresh = FakeEmbedder(clusters=clusters)
    fresh._engine._member_cache.clear()  # nothing cached: the batch computes every member itself
    floats, exact = fresh._engine.embed_exact(batch)
    alone = FakeEmbedder(clusters=clusters)
    for i, text in enumerate(batch):
        np.testing.assert_array_equal(floats[i], alone.embed_batch([text])[0])
        np.testing.assert_array_equal(exact[i], alone._engine.embed_exact([text])[1][0])


@pytest.mark.parametrize("dimensions", [2, 3, 5, 17])
def test_members_at_tiny_dimensions_redraw_until_they_have_a_jitter_direction(dimensions):
    # At d=2 half the sign draws equal ±anchor and must be drawn again; every member still
    # sits at exactly 1/sqrt(1 + m**2) from its anchor, in a batch as on its own.
    texts = [f"member {i}" for i in range(60)]
    clusters = {"a": ["member 1"], "b": ["member 3"]}
    options = {
        "dimensions": dimensions,
        "clusters": clusters,
        "cluster_match": "substring",
        "cluster_spread": 0.8,
    }
    embedder = FakeEmbedder(**options)
    batch = embedder.embed_batch(texts)
    for i, text in enumerate(texts):
        alone = FakeEmbedder(**options)
        np.testing.assert_array_equal(batch[i], alone.embed_batch([text])[0])
        name = embedder.cluster_of(text)
        if name is not None:
            m = embedder.jitter_of(text)
            cosine = float(batch[i] @ np.asarray(embedder.cluster_anchor(name)))
            assert cosine == pytest.approx(1 / math.sqrt(1 + m * m), abs=1e-12)


def test_a_large_batch_embedded_again_is_the_same_and_matches_one_text_at_a_time():
    """Large batches reuse their model-independent hashing work (a plan kept per batch):
    a second embedding, under the same or another model and dimension, must not differ."""
    texts = [f"order {i} refund {i * 7 % 13} parcel héllo {'x' * (i % 5)}" for i in range(300)]
    texts += ["", "ab", "\x00", "🙂 漢字"]
    for options in ({"dimensions": 64}, {"dimensions": 256, "model_name": "other"}):
        embedder = FakeEmbedder(**options)
        first = embedder.embed_batch(texts)
        again = embedder.embed_batch(list(texts))
        one_by_one = np.array([embedder.embed(t) for t in texts])
        assert np.array_equal(first, again)
        assert np.array_equal(first, one_by_one)


def test_the_kept_hashing_plans_stay_within_their_memory_budget():
    from placeborag import _hashing

    embedder = FakeEmbedder(dimensions=8)
    made = 0
    batch = 0
    while made <= 2 * _hashing._PLANS.max_bytes:  # more than the budget holds
        texts = [f"batch {batch} text {i} and a few more words" for i in range(4000)]
        embedder.embed_batch(texts)
        assert tuple(texts) in _hashing._PLANS  # the latest is kept
        made += _hashing._plan(texts).nbytes
        batch += 1
    assert _hashing._PLANS.max_bytes // 2 < _hashing._PLANS.nbytes <= _hashing._PLANS.max_bytes


def test_a_new_spread_reuses_the_draws_of_a_large_batch_and_gives_fresh_vectors():
    """Sign rows and jitter draws do not depend on the spread, and a large batch keeps them:
    an embedder at another spread must still give exactly what a cold one gives."""
    from placeborag import _embedder_engine

    members = [f"refund case {i}" for i in range(300)]
    texts = members + ["unrelated text"]
    clusters = {"refund": members[:2], "other": ["shipping"]}
    options = {"dimensions": 64, "clusters": clusters, "cluster_match": "substring"}
    before = FakeEmbedder(cluster_spread=0.3, **options).embed_batch(texts)
    warm = FakeEmbedder(cluster_spread=0.9, **options).embed_batch(texts)
    _embedder_engine._MEMBER_DRAWS._items.clear()
    cold = FakeEmbedder(cluster_spread=0.9, **options).embed_batch(texts)
    assert np.array_equal(warm, cold)
    assert not np.array_equal(before[:300], warm[:300])
    np.testing.assert_array_equal(before[300], warm[300])  # not a member: the spread is moot


# -- 0.4.0's batch form, and the array form beside it -------------------------------------------


def test_embed_batch_is_the_list_of_each_texts_vector_and_embed_array_the_same_values():
    embedder = FakeEmbedder(clusters={"refund": ["refund policy"]}, dimensions=32)
    texts = ["refund policy", "delivery times", "", "hogyan kérek vissza pénzt"]
    batch = embedder.embed_batch(texts)
    assert batch == [embedder.embed(t) for t in texts]
    assert isinstance(batch, list) and all(type(v) is float for v in batch[0])
    array = embedder.embed_array(texts)
    assert array.dtype == np.float64 and array.shape == (4, 32)
    assert array.tolist() == batch


# -- issue 13 item 4: cosine_similarity at the edges of float range -----------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ([1e200], [-1e200], -1.0),
        ([1e200, 1e200], [1e200, 1e200], 1.0),
        ([1e-200], [1e-200], 1.0),
        ([1e-300, 0.0], [0.0, 5e-310], 0.0),
        ([3.0, 4.0], [6e300, 8e300], 1.0),
    ],
)
def test_cosine_similarity_is_right_for_huge_and_tiny_vectors(a, b, expected):
    assert cosine_similarity(a, b) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([float("nan"), 1.0], [1.0, 1.0], "a holds a non-finite value"),
        ([1.0, 1.0], [float("inf"), 1.0], "b holds a non-finite value"),
        ([[1.0, 2.0], [3.0]], [1.0, 1.0], "a must be a one-dimensional sequence"),
        ([1.0, 2.0], [1.0], "a has 2 values and b has 1"),
        ([10**400], [1.0], "a holds a number too large for a float"),
    ],
)
def test_cosine_similarity_refuses_nan_inf_and_ragged_vectors(a, b, message):
    with pytest.raises(PlaceboragValueError, match=message.replace("[", r"\[")):
        cosine_similarity(a, b)


# -- issue 13 item 11: bounded time and memory ---------------------------------------------------


def test_a_long_text_hashed_in_chunks_gives_the_same_vector(monkeypatch):
    from placeborag import _hashing

    texts = ["refund policy " * 40, "é" * 700 + " money back", "a" * 3000, "x"]
    expected = FakeEmbedder(dimensions=64).embed_array([*texts, "pad"])[:-1]
    monkeypatch.setattr(_hashing, "_CHUNK", 7)
    monkeypatch.setattr(_hashing, "_SMALL_TEXT", 3)
    monkeypatch.setattr(_hashing, "_LARGE_TEXT", 5)
    embedder = FakeEmbedder(dimensions=64)
    assert np.array_equal(embedder.embed_array([*texts, "pad"])[:-1], expected)
    assert [embedder.embed(t) for t in texts] == expected.tolist()


def test_a_long_text_embeds_in_memory_linear_in_its_length():
    import tracemalloc

    text = ("our refund policy allows returns within thirty days " * 40_000)[:2_000_000]
    embedder = FakeEmbedder()
    tracemalloc.start()
    try:
        vector = embedder.embed(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(vector) == 256
    assert peak / len(text) < 48  # bytes per character (the batch layout took ~150)


def test_the_member_vector_cache_is_bounded_in_bytes():
    from placeborag import _embedder_engine

    d = 4096
    members = [f"member {i}" for i in range(700)]
    embedder = FakeEmbedder(dimensions=d, clusters={"c": members}, cluster_spread=0.1)
    for text in members:
        embedder.embed(text)
    kept = len(embedder._engine._member_cache)
    assert 0 < kept <= _embedder_engine._MEMBER_CACHE_BYTES // (16 * d) < len(members)


def test_checking_many_cluster_members_does_not_build_the_whole_cosine_matrix():
    import tracemalloc

    clusters = {f"c{i}": [f"member {i} {j}" for j in range(1000)] for i in range(4)}
    tracemalloc.start()
    try:
        embedder = FakeEmbedder(dimensions=128, clusters=clusters, cluster_spread=0.2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert embedder.cluster_of("member 3 999") == "c3"
    assert peak < 64 << 20  # the 4000 x 4000 matrix alone is 128 MB


def test_kept_rows_are_bounded_and_give_the_same_bits_as_fresh_ones():
    from placeborag import _embedder_engine

    d = 512
    embedder = FakeEmbedder(dimensions=d)
    texts = [f"refund note {i}" for i in range(1500)]
    fresh = FakeEmbedder(dimensions=d).embed_array(texts)
    for text in texts:  # one at a time, as single upserts are
        embedder._engine.embed_floats([text], dtype=np.float32)
    assert (
        len(embedder._engine._text_cache)
        <= _embedder_engine._TEXT_CACHE_BYTES // (16 * d)
        < len(texts)
    )
    floats, exact = embedder._engine.embed_exact(texts[-5:])
    assert np.array_equal(floats, fresh[-5:])
    assert np.array_equal(exact, FakeEmbedder(dimensions=d)._engine.embed_exact(texts[-5:])[1])
    assert embedder.embed(texts[-1]) == fresh[-1].tolist()
    floats[0, 0] = 99.0  # what a caller does to its copy does not reach the kept row
    assert embedder.embed(texts[-5]) == fresh[-5].tolist()


def test_a_batch_embedded_in_blocks_of_rows_gives_the_same_bits(monkeypatch):
    import placeborag._embedder_engine as engine_module

    clusters = {"refund": [f"refund request {i}" for i in range(40)], "ship": ["parcel"]}
    texts = [f"refund request {i}" for i in range(40)] + [f"other text {i}" for i in range(60)]
    whole = FakeEmbedder(clusters=clusters)._engine.embed_floats(texts, np.float32)
    monkeypatch.setattr(engine_module, "_ROW_BLOCK", 7)
    blocked = FakeEmbedder(clusters=clusters)._engine.embed_floats(texts, np.float32)
    assert blocked.dtype == np.float32
    assert blocked.tobytes() == whole.tobytes()


def test_a_large_mixed_batch_written_into_a_matrix_is_the_batch_itself():
    """Past a block of members and a block of other texts, the hashing runs in a second thread
    beside the member draws and both write straight into the destination rows: the same bits
    as the batch, at any destination order (a store's matrix with rows out of order)."""
    from placeborag import _embedder_engine

    n = _embedder_engine._ROW_BLOCK + 40
    texts = [f"refund case {i}" if i % 2 else f"parcel {i} is late" for i in range(2 * n)]
    embedder = FakeEmbedder(
        dimensions=16, clusters={"refund": ["refund case"]}, cluster_match="substring"
    )
    batch = embedder.embed_array(texts).astype(np.float32)
    at = np.arange(2 * n)[::-1].copy()  # reversed rows
    out = np.full((2 * n, 16), np.nan, dtype=np.float32)
    embedder._engine.embed_into(texts, out, at)
    np.testing.assert_array_equal(out[at], batch)
    one = np.array([embedder.embed(t) for t in texts[:3] + texts[-3:]], dtype=np.float32)
    np.testing.assert_array_equal(out[at][[0, 1, 2, -3, -2, -1]], one)


def test_substring_membership_of_a_large_batch_follows_each_declaration():
    """Membership of a large batch is kept by declaration and texts: another declaration over
    the same texts gets its own answer."""
    texts = [f"text {i} about refunds" for i in range(3000)] + ["nothing"]
    first = FakeEmbedder(clusters={"a": ["refunds"]}, cluster_match="substring")
    second = FakeEmbedder(clusters={"b": ["refunds"]}, cluster_match="substring")
    longer = FakeEmbedder(
        clusters={"a": ["refunds"], "c": ["about refunds"]}, cluster_match="substring"
    )
    assert first.clusters_of(texts) == ["a"] * 3000 + [None]
    assert second.clusters_of(texts) == ["b"] * 3000 + [None]
    assert longer.clusters_of(texts) == ["c"] * 3000 + [None]  # the longest declaration wins
    assert first.clusters_of(texts) == ["a"] * 3000 + [None]
    # The members alone (what a new spread re-embeds) are kept with the whole batch.
    mixed = [t if i % 3 else f"other {i}" for i, t in enumerate(texts)]
    assert first.clusters_of(mixed) == [None if i % 3 == 0 else "a" for i in range(len(mixed))]
    members = [t for i, t in enumerate(mixed) if i % 3]
    assert first.clusters_of(members) == ["a"] * len(members)
    assert second.clusters_of(members) == ["b"] * len(members)
    spread = FakeEmbedder(
        clusters={"a": ["refunds"]}, cluster_match="substring", cluster_spread=0.9
    )
    np.testing.assert_array_equal(
        spread.embed_array(members), spread.embed_array(mixed)[[i % 3 != 0 for i in range(3001)]]
    )


def test_the_batch_memos_count_the_texts_their_keys_hold():
    """A memo's key holds its batch's texts (kept alive with it), so they count against its
    byte budget: long texts are not kept past it, and the substring matches remembered per
    declaration stay within their bounds too."""
    from placeborag import _embedder_engine, _hashing

    # texts long enough that a batch of them weighs more than half of either memo's budget
    budget = max(_embedder_engine._MEMBERSHIP.max_bytes, _embedder_engine._MEMBER_DRAWS.max_bytes)
    long_texts = [f"refund case {i} " + "x" * (budget // 2000 + 100) for i in range(1100)]
    embedder = FakeEmbedder(
        dimensions=8, clusters={"refund": ["refund case"]}, cluster_match="substring"
    )
    assert embedder.clusters_of(long_texts) == ["refund"] * 1100
    memo = _embedder_engine._MEMBERSHIP
    assert memo.nbytes <= memo.max_bytes
    assert all(len(key[1]) != 1100 for key in memo._items)  # not kept: over half the budget
    embedder.embed_array(long_texts[:1000])  # 1,000 members' draws: over half the budget
    draws = _embedder_engine._MEMBER_DRAWS
    assert draws.nbytes <= draws.max_bytes
    assert all(len(key[1]) != 1000 for key in draws._items)
    for seen, chars in _embedder_engine._SEEN.values():
        assert all(len(text) <= _embedder_engine._SEEN_TEXT_CHARS for text in seen)
        assert chars[0] == sum(map(len, seen)) <= _embedder_engine._SEEN_CHARS
    assert _hashing._text_bytes(("a", ("bc", ("d", "ef")))) == 6


def test_every_large_batch_path_gives_the_bits_of_one_text_at_a_time():
    """With the size thresholds lowered, small generated batches take every path a corpus
    takes (the split kept with its membership, the remembered substring matches, the hashing
    on a second thread, member rows two blocks at a time, the in-place fill of a store's
    matrix in any row order, the draws memo): each row is still the text's own vector."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from placeborag import _embedder_engine

    pool = ["refund case", "refund case two", "parcel", "late parcel", "hours", "", "x y z"]
    texts = st.lists(
        st.one_of(st.sampled_from(pool), st.text(max_size=12)).map(lambda t: t + " tail"),
        min_size=1,
        max_size=40,
    )

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        batch=texts,
        match=st.sampled_from(["exact", "substring"]),
        order=st.randoms(use_true_random=False),
    )
    def check(batch, match, order):
        declared = {"refund": ["refund case", "refund case tail"], "parcel": ["parcel tail"]}

        def fresh():  # each path from a cold embedder: no member cached by another path
            return FakeEmbedder(dimensions=8, clusters=declared, cluster_match=match)

        _embedder_engine._MEMBER_DRAWS.clear()
        at = np.arange(len(batch))
        order.shuffle(at)
        out = np.full((len(batch), 8), np.nan, dtype=np.float32)
        fresh()._engine.embed_into(batch, out, at)
        whole = fresh().embed_array(batch)
        alone = fresh()
        one_by_one = np.array([alone.embed(t) for t in batch])
        np.testing.assert_array_equal(out[at], one_by_one.astype(np.float32))
        np.testing.assert_array_equal(whole, one_by_one)
        assert alone.clusters_of(batch) == [alone.cluster_of(t) for t in batch]

    saved = (
        _embedder_engine._ROW_BLOCK,
        _embedder_engine._CACHED_BATCH,
        _embedder_engine._MEMBERSHIP.min_batch,
        _embedder_engine._MEMBER_DRAWS.min_batch,
    )
    try:
        _embedder_engine._ROW_BLOCK, _embedder_engine._CACHED_BATCH = 3, 2
        _embedder_engine._MEMBERSHIP.min_batch = _embedder_engine._MEMBER_DRAWS.min_batch = 4
        check()
    finally:
        (
            _embedder_engine._ROW_BLOCK,
            _embedder_engine._CACHED_BATCH,
            _embedder_engine._MEMBERSHIP.min_batch,
            _embedder_engine._MEMBER_DRAWS.min_batch,
        ) = saved
        _embedder_engine._MEMBERSHIP.clear()
        _embedder_engine._MEMBER_DRAWS.clear()


@pytest.mark.parametrize("match", ["exact", "substring"])
def test_an_array_the_embedder_returned_can_be_changed_without_changing_later_vectors(match):
    # The member cache once kept views into the array embed_array returned: negating it in
    # place negated every later embed() of the text, in every thread sharing the embedder.
    clusters = {"refund": ["refund policy", "money back"]}
    text = "money back" if match == "exact" else "I want my money back now"
    embedder = FakeEmbedder(clusters=clusters, cluster_match=match)
    fresh = FakeEmbedder(clusters=clusters, cluster_match=match)
    given = embedder.embed_array([text])
    given *= -1.0
    assert embedder.embed(text) == fresh.embed(text)
    assert np.array_equal(embedder.embed_array([text]), fresh.embed_array([text]))
