"""The properties placeborag sells, checked over generated inputs."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from placeborag import FakeEmbedder, FakeVectorStore, cosine_similarity

texts = st.text(max_size=80)
some_texts = st.lists(texts, min_size=1, max_size=8)
model_names = st.text(min_size=1, max_size=20)
dimensions = st.integers(min_value=2, max_value=2048)


@given(text=texts, model=model_names, dims=st.integers(2, 512))
def test_the_same_input_gives_bit_identical_vectors(text, model, dims):
    a = FakeEmbedder(model_name=model, dimensions=dims).embed(text)
    b = FakeEmbedder(model_name=model, dimensions=dims).embed(text)
    assert np.array(a).tobytes() == np.array(b).tobytes()


@given(batch=some_texts, dims=dimensions)
def test_every_vector_is_unit_length_and_has_the_declared_dimension(batch, dims):
    vectors = FakeEmbedder(dimensions=dims).embed_array(batch)
    assert vectors.shape == (len(batch), dims)
    assert np.all(np.isfinite(vectors))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-12)


@given(batch=some_texts)
def test_a_batch_embeds_each_text_as_it_would_alone(batch):
    embedder = FakeEmbedder(dimensions=64)
    alone = [embedder.embed(text) for text in batch]
    assert embedder.embed_batch(batch) == alone
    assert embedder.embed_array(batch).tolist() == alone


@given(a=model_names, b=model_names)
def test_the_model_name_changes_the_space(a, b):
    assume(a != b)
    batch = ["refund policy", "delivery times", "money back guarantee"]
    va = FakeEmbedder(model_name=a).embed_batch(batch)
    vb = FakeEmbedder(model_name=b).embed_batch(batch)
    assert not np.array_equal(va, vb)


member_text = st.text(alphabet="abcdefghijklmnop qrstuvwxyzáé", min_size=1, max_size=24)
declarations = st.dictionaries(
    st.text(alphabet="abcdefgh", min_size=1, max_size=6),
    st.lists(member_text, min_size=1, max_size=4, unique=True),
    min_size=1,
    max_size=4,
).filter(lambda d: len({t for ms in d.values() for t in ms}) == sum(len(ms) for ms in d.values()))


@given(clusters=declarations, dims=st.sampled_from([64, 256, 1024]), spread=st.floats(0.05, 1.0))
def test_satisfiable_declarations_hold(clusters, dims, spread):
    try:
        embedder = FakeEmbedder(dimensions=dims, clusters=clusters, cluster_spread=spread)
    except ValueError:
        assume(False)
    anchors = {name: embedder.cluster_anchor(name) for name in clusters}
    vectors = {t: embedder.embed(t) for ms in clusters.values() for t in ms}
    for name, members in clusters.items():
        for text in members:
            m = embedder.jitter_of(text)
            own = cosine_similarity(anchors[name], vectors[text])
            assert own == pytest.approx(1 / math.sqrt(1 + m * m), abs=1e-12)
            for other, anchor in anchors.items():
                if other != name:
                    assert cosine_similarity(anchor, vectors[text]) < own
            mates = [cosine_similarity(vectors[text], vectors[t]) for t in members if t != text]
            strangers = [
                cosine_similarity(vectors[text], vectors[t])
                for o, ms in clusters.items()
                if o != name
                for t in ms
            ]
            if mates and strangers:
                assert min(mates) > max(strangers)


@given(
    clusters=declarations,
    undeclared=st.lists(texts, min_size=1, max_size=10),
    dims=st.sampled_from([64, 256]),
    spread=st.floats(0.05, 0.5),
)
def test_an_undeclared_text_never_beats_a_declared_member_at_its_anchor(
    clusters, undeclared, dims, spread
):
    try:
        embedder = FakeEmbedder(dimensions=dims, clusters=clusters, cluster_spread=spread)
    except ValueError:
        assume(False)
    undeclared = [t for t in undeclared if embedder.cluster_of(t) is None]
    for name, members in clusters.items():
        anchor = embedder.cluster_anchor(name)
        weakest = min(cosine_similarity(anchor, embedder.embed(t)) for t in members)
        for text in undeclared:
            assert cosine_similarity(anchor, embedder.embed(text)) < weakest


store_texts = st.lists(
    st.text(alphabet="abc refundpolicyshipng", max_size=20), min_size=1, max_size=30
)


@given(
    docs=store_texts,
    query=st.text(alphabet="abc refundpolicy", max_size=12),
    k=st.integers(1, 40),
    profile=st.sampled_from(["chroma", "qdrant"]),
    recall=st.sampled_from([1.0, 0.7, 0.3]),
)
def test_the_store_returns_at_most_k_and_ranks_stably(docs, query, k, profile, recall):
    store = FakeVectorStore(embedder=FakeEmbedder(dimensions=16), profile=profile, recall=recall)
    store.upsert_many([f"d{i:02d}" for i in range(len(docs))], docs)
    matches = store.query(query, k=k)
    assert len(matches) <= k
    longer = store.query(query, k=k + 5)
    assert longer[: len(matches)] == matches  # a larger k extends, never reorders
    assert store.query(query, k=k) == matches
    scores = [m.score for m in matches]
    assert scores == sorted(scores, reverse=store.profile.higher_is_better)


@given(docs=store_texts, query=st.text(alphabet="abc refundpolicy", max_size=12))
def test_chroma_and_qdrant_rank_in_the_same_relevance_order_up_to_ties(docs, query):
    def build(profile):
        store = FakeVectorStore(embedder=FakeEmbedder(dimensions=16), profile=profile)
        store.upsert_many([f"d{i:02d}" for i in range(len(docs))], docs)
        return store.query(query, k=len(docs))

    chroma, qdrant = build("chroma"), build("qdrant")
    assert [1 - m.score for m in chroma] == pytest.approx([m.score for m in qdrant], abs=1e-15)

    # the same set at every distinct score level
    def levels(matches, to_cos):
        out = {}
        for m in matches:
            out.setdefault(to_cos(m.score), set()).add(m.id)
        return out

    assert levels(chroma, lambda s: round(1 - s, 12)) == levels(qdrant, lambda s: round(s, 12))


_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(
    st.integers(min_value=1, max_value=40).flatmap(
        lambda d: st.tuples(
            st.lists(st.lists(_INT64, min_size=d, max_size=d), min_size=1, max_size=4),
            st.lists(_INT64, min_size=d, max_size=d),
        )
    )
)
def test_exact_dot_products_equal_python_integer_sums(case):
    """The store's exact ranking rests on these sums: int64 limbs must never overflow."""
    from placeborag._ranking import exact_dot as _exact_dot

    rows, query = case
    a = np.array(rows, dtype=np.int64)
    b = np.array(query, dtype=np.int64)
    assert _exact_dot(a, b) == [sum(x * y for x, y in zip(row, query)) for row in rows]


@given(
    st.integers(-(2**200), 2**200),
    st.integers(1, 2**400),
)
def test_an_exact_score_is_the_rounded_root_of_its_reduced_rational(p, extra):
    """sqrt_score reads the unreduced fraction: the same float as the reduced one gives."""
    import math
    from fractions import Fraction

    from placeborag._ranking import sqrt_score

    norm2 = p * p + extra  # |p| <= sqrt(norm2), as a cosine's numerator is
    r = Fraction(p * p, norm2)
    expected = 0.0
    if p:
        root = math.isqrt(r.numerator * 4**64 // r.denominator)
        expected = math.copysign(min(1.0, float(Fraction(root, 2**64))), p)
    assert sqrt_score(p, norm2) == expected


@given(
    st.integers(min_value=2, max_value=65_536),
    st.lists(
        st.tuples(st.integers(0, (1 << 58) - 1), st.integers(1, (1 << 48) - 1)),
        min_size=1,
        max_size=40,
    ),
    st.sampled_from([2.0**-100, 1.0]),
)
def test_member_norms_are_the_exact_integers_rounded_once(dimensions, pairs, margin):
    """A member's squared norm ``d * 4**52 + t**2 * |J|**2`` is computed in float64 with
    error-free transformations: it must be the float Python makes of the exact integer, for any
    ``t`` and ``|J|**2`` in range (``margin=1.0`` sends every row to the integer fallback)."""
    from placeborag._embedder_engine import _rounded_norms2

    # t is the integer of a float (np.rint): below 2**53 any integer, above it a float's value
    t = np.array([float(a) for a, _ in pairs]).astype(np.int64)
    nj = np.array([b for _, b in pairs], dtype=np.int64)
    got = _rounded_norms2(dimensions, t, nj, margin=margin)
    exact = [float(dimensions * 4**52 + a * a * b) for a, b in zip(t.tolist(), nj.tolist())]
    assert got.tolist() == exact
