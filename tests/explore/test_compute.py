import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
pytest.importorskip("sklearn")

from placeborag.explore import (
    anchor_geometry,
    filter_mode_table,
    fit_projector,
    funnel_counts,
    project,
    store_rows,
    trace_query,
)


def test_projection_is_deterministic_and_shaped(demo):
    a = project(demo.store(), demo.query, demo.k, demo.where)
    b = project(demo.store(), demo.query, demo.k, demo.where)
    n = len(demo.documents)
    assert a.coords.shape == (n, 2)
    assert a.query.shape == (2,)
    assert a.anchors.shape == (len(demo.clusters), 2)
    np.testing.assert_array_equal(a.coords, b.coords)
    np.testing.assert_array_equal(a.query, b.query)
    assert a.explained.shape == (2,)
    assert 0 < a.explained.sum() <= 1


def test_projection_in_three_dimensions(demo):
    p = project(demo.store(), demo.query, n_components=3)
    assert p.coords.shape == (len(demo.documents), 3)


def test_pca_sign_convention_makes_the_largest_loading_positive():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 8))
    for flipped in (x, -x):
        proj = fit_projector(flipped, 2)
        big = proj.components[np.arange(2), np.argmax(np.abs(proj.components), axis=1)]
        assert (big > 0).all()


def test_top_k_ranks_are_the_store_query(demo):
    store = demo.store()
    p = project(store, demo.query, demo.k, demo.where)
    order = np.flatnonzero(p.trace.rank)[np.argsort(p.trace.rank[np.flatnonzero(p.trace.rank)])]
    assert [p.ids[i] for i in order] == [m.id for m in store.query(demo.query, demo.k, demo.where)]


def test_colour_by_metadata_key(demo):
    p = project(demo.store(), demo.query, color_by="lang")
    assert p.label_order == ["en", "hu"]


@pytest.mark.parametrize("dimensions", [(64, 256, 1024)])
def test_anchor_cosines_equal_the_exact_curve(demo, dimensions):
    g = anchor_geometry(
        demo.clusters,
        texts=[d.text for d in demo.documents],
        dimensions=dimensions,
        cluster_spread=demo.cluster_spread,
        cluster_match=demo.cluster_match,
    )
    assert not g.errors
    assert set(g.members["dimensions"]) == set(dimensions)
    expected = 1.0 / np.sqrt(1.0 + g.members["jitter"].to_numpy() ** 2)
    np.testing.assert_allclose(g.members["cosine"], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(g.members["expected"], expected, rtol=0, atol=0)


def test_member_order_against_the_anchor_does_not_depend_on_dimension(demo):
    g = anchor_geometry(demo.clusters, cluster_match="substring")
    orders = g.members.pivot_table(index=["cluster", "text"], columns="dimensions", values="order")
    assert (orders.nunique(axis=1) == 1).all()
    pairs = g.pairs.pivot_table(index="pair", columns="dimensions", values="cosine")
    assert (pairs.nunique(axis=1) > 1).any()  # member-to-member cosines move


def test_unsatisfiable_dimension_is_reported_not_raised():
    g = anchor_geometry(
        {"a": ["x one", "x two"], "b": ["y one"]}, dimensions=(2, 64), cluster_spread=50.0
    )
    assert 2 in g.errors or 64 in g.errors
    assert math.isfinite(len(g.members))


@pytest.mark.parametrize("mode", ["pre", "post"])
@pytest.mark.parametrize("recall", [1.0, 0.5])
def test_filter_tables_return_what_query_returns(demo, mode, recall):
    store = demo.store(filter_mode=mode, recall=recall)
    rows = store_rows(store)
    table = filter_mode_table(trace_query(store, demo.query, 5, demo.where), rows)
    returned = table[table["stage"] == "returned"].sort_values("rank")
    matches = store.query(demo.query, 5, demo.where)
    assert list(returned["id"]) == [m.id for m in matches]
    assert list(returned["score"]) == [m.score for m in matches]
    assert list(returned["rank"]) == list(range(1, len(matches) + 1))


def test_post_filter_table_marks_what_the_filter_dropped(demo):
    store = demo.store(filter_mode="post")
    table = filter_mode_table(trace_query(store, demo.query, 5, demo.where), store_rows(store))
    explained = store.explain(demo.query, 5, demo.where)
    dropped = table.loc[table["stage"] == "dropped by post-filter", "id"]
    assert sorted(dropped) == sorted(explained.post_filter_dropped)
    assert len(dropped) > 0


def test_recall_losses_listed_are_the_ones_a_perfect_index_returns(demo):
    store = demo.store(recall=0.5)
    table = filter_mode_table(trace_query(store, demo.query, 5, demo.where), store_rows(store))
    perfect = [m.id for m in demo.store().query(demo.query, 5, demo.where)]
    lost = set(table.loc[table["stage"] == "lost to recall", "id"])
    returned = set(table.loc[table["stage"] == "returned", "id"])
    assert lost == set(perfect) - returned


@pytest.mark.parametrize(
    ("mode", "stages"),
    [
        ("pre", ["candidates", "pass the filter", "survive recall", "top-k cut"]),
        ("post", ["candidates", "survive recall", "top-k cut", "pass the filter"]),
    ],
)
def test_funnel_counts_follow_the_store_path(demo, mode, stages):
    store = demo.store(filter_mode=mode)
    funnel = funnel_counts(trace_query(store, demo.query, 5, demo.where))
    assert list(funnel["stage"]) == stages
    explained = store.explain(demo.query, 5, demo.where)
    assert funnel["documents"].iloc[0] == len(explained.candidates)
    assert funnel["documents"].iloc[-1] == len(explained.matches)


@pytest.mark.parametrize(("dimensions", "solver"), [(64, "covariance_eigh"), (1024, "arpack")])
def test_projection_axes_match_the_exact_eigenvectors_of_the_covariance(demo, dimensions, solver):
    from placeborag.explore._compute import _solver

    vectors = store_rows(demo.scaled(400).replace(dimensions=dimensions).store()).vectors
    assert _solver(vectors.shape) == solver  # both ways of fitting are held to the same axes
    projector = fit_projector(vectors, 3)
    x = vectors.astype(np.float64)
    values, vecs = np.linalg.eigh(np.cov(x, rowvar=False))
    exact = vecs[:, ::-1][:, :3].T
    np.testing.assert_allclose(np.abs(projector.components @ exact.T), np.eye(3), atol=1e-5)
    np.testing.assert_allclose(projector.explained, values[::-1][:3] / values.sum(), rtol=1e-4)
    again = fit_projector(vectors.copy(), 3)
    np.testing.assert_array_equal(projector.components, again.components)


@pytest.mark.parametrize(
    ("rows", "dims", "dtype"),
    [(400, 64, np.float32), (20_000, 256, np.float32), (3_000, 128, np.float64)],
)
def test_the_covariance_pca_has_the_bits_of_scikit_learns_covariance_eigh(rows, dims, dtype):
    """The projection of many rows is fitted with numpy alone (no scikit-learn import in the
    first picture): it must be scikit-learn's covariance_eigh, bit for bit, on the stride
    sample the explorer fits (a strided view)."""
    sklearn = pytest.importorskip("sklearn")
    if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 5):
        pytest.skip("scikit-learn before 1.5 has no covariance_eigh")
    from sklearn.decomposition import PCA

    from placeborag.explore._compute import covariance_pca, one_blas_thread

    x = np.random.default_rng(rows).standard_normal((2 * rows, dims)).astype(dtype)[::2]
    with one_blas_thread():
        mean, components, explained = covariance_pca(x, 3)
        pca = PCA(n_components=3, svd_solver="covariance_eigh").fit(x)
    np.testing.assert_array_equal(mean, pca.mean_.astype(np.float64))
    np.testing.assert_array_equal(components, pca.components_.astype(np.float64))
    np.testing.assert_array_equal(explained, pca.explained_variance_ratio_.astype(np.float64))


def test_the_app_over_many_documents_does_not_import_scikit_learn():
    """scikit-learn and scipy cost a second or more of a fresh kernel's first picture; the
    PCA of many rows needs neither (the small demo's ARPACK fit still does)."""
    code = (
        "import sys\n"
        "from placeborag.explore import app, demo_scenario\n"
        "explorer = app(demo_scenario(2000))\n"
        "assert explorer.error == '', explorer.error\n"
        "print(sorted(m for m in ('sklearn', 'scipy') if m in sys.modules))\n"
    )
    root = Path(__file__).resolve().parent.parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_projection_of_fewer_documents_than_components_pads_with_zero_axes():
    projector = fit_projector(np.eye(2, 8), 3)
    assert projector.components.shape == (3, 8)
    assert not projector.components[2].any()
    assert projector.explained[2] == 0


def test_a_query_equal_to_a_documents_text_sits_on_that_document_over_unnormalised_vectors():
    """The store keeps every vector unit-normalised; the query must be projected the same
    way, or over the user's own vectors (any lengths) it lands far out from its top-k."""
    from placeborag.explore import store_from_vectors

    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(60, 16)) * rng.uniform(1.0, 20.0, size=(60, 1))
    ids = [f"d{i}" for i in range(60)]
    store = store_from_vectors(vectors, ids, [f"text {i}" for i in range(60)])
    p = project(store, "text 7", 5)
    assert p.trace.rank[7] == 1
    spread = np.ptp(p.coords, axis=0).max()
    assert np.linalg.norm(p.query - p.coords[7]) < 1e-3 * spread
