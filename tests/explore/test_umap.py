"""UMAP, the optional projection: seeded from the vectors, cached by their digest, and a clear
error without the extra. umap-learn compiles with numba on its first fit in a process (seconds):
every test here works on the 38-document demo or on a few dozen rows, so that cost is paid once.
"""

import importlib.util
import sys
from collections import OrderedDict

import numpy as np
import pytest

from placeborag import PlaceboragError, PlaceboragValueError
from placeborag._cli import main
from placeborag.explore import Explorer, ProjectionDisplay, _umap, app, project, render_report
from placeborag.explore._access import store_rows
from placeborag.explore._state import ExplorerState

HINT = "pip install 'placeborag[umap]'"
needs_umap = pytest.mark.skipif(
    importlib.util.find_spec("umap") is None, reason="the umap extra is not installed"
)


@pytest.fixture
def fits(monkeypatch):
    """Every UMAP fit made while the test runs (a fresh, empty layout cache)."""
    made = []
    fit = _umap._fit

    def counting(x, params):
        made.append((x.shape, dict(params)))
        return fit(x, params)

    monkeypatch.setattr(_umap, "_CACHE", OrderedDict())
    monkeypatch.setattr(_umap, "_fit", counting)
    return made


@pytest.fixture
def no_umap(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", None)  # import umap now raises ImportError
    monkeypatch.setattr(_umap, "_CACHE", OrderedDict())


# -- choosing a projection --------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["tsne", "UMAP", "", None, 2])
def test_an_unknown_projection_names_the_allowed_ones(demo, bad):
    message = f"projection={bad!r} must be one of 'pca', 'umap'"
    with pytest.raises(PlaceboragValueError) as excinfo:
        project(demo.store(), demo.query, projection=bad)
    assert excinfo.value.args == (message,)
    with pytest.raises(PlaceboragValueError, match="must be one of 'pca', 'umap'"):
        app(demo, projection=bad)
    with pytest.raises(PlaceboragValueError, match="must be one of 'pca', 'umap'"):
        render_report(demo, projection=bad)
    with pytest.raises(PlaceboragValueError, match="must be one of 'pca', 'umap'"):
        ExplorerState().views(demo, method=bad)


def test_without_the_extra_umap_raises_naming_it(demo, no_umap):
    for call in (
        lambda: project(demo.store(), demo.query, projection="umap"),
        lambda: app(demo, projection="umap"),
        lambda: render_report(demo, projection="umap"),
        lambda: _umap.umap_coords(np.eye(5)),
    ):
        with pytest.raises(PlaceboragError, match=r"needs umap-learn.*") as excinfo:
            call()
        assert isinstance(excinfo.value, ImportError)
        assert HINT in str(excinfo.value)


def test_without_the_extra_the_app_shows_the_hint_and_keeps_the_pca(demo, no_umap):
    explorer = app(demo)
    assert explorer.shown.projection.method == "PCA"
    explorer.controls["method"].value = "umap"
    assert HINT in explorer.error
    assert explorer.shown.projection.method == "PCA"  # the last valid state stays
    explorer.controls["method"].value = "pca"
    assert explorer.error == ""


def test_without_the_extra_pca_never_imports_umap(demo, no_umap):
    assert project(demo.store(), demo.query).method == "PCA"


@pytest.mark.parametrize(("n", "n_components", "least"), [(3, 2, 4), (4, 3, 5)])
def test_too_few_documents_for_umap_say_how_many_it_needs(n, n_components, least):
    message = (
        f"projection='umap' needs {least} to 50,000 documents in {n_components}-D, got {n}; "
        "use projection='pca'"
    )
    with pytest.raises(PlaceboragValueError) as excinfo:
        _umap.umap_coords(np.eye(n, 8), n_components)
    assert excinfo.value.args == (message,)


# -- the layout -------------------------------------------------------------------------------


@needs_umap
def test_umap_gives_the_same_layout_twice(demo, fits):
    vectors = store_rows(demo.store()).vectors
    first = _umap.umap_coords(vectors)
    _umap._CACHE.clear()  # a second, independent fit
    second = _umap.umap_coords(vectors)
    assert len(fits) == 2
    np.testing.assert_array_equal(first, second)
    assert first.shape == (len(demo.documents), 2) and first.dtype == np.float64
    assert not first.flags.writeable


@needs_umap
def test_the_seed_comes_from_the_vectors_bytes(demo, fits):
    vectors = store_rows(demo.store()).vectors
    _umap.umap_coords(vectors)
    seed = fits[0][1]["random_state"]
    assert seed == _umap.umap_seed(_umap.vectors_digest(vectors))
    assert seed == _umap.umap_seed(_umap.vectors_digest(vectors.astype(np.float64)))
    moved = vectors.copy()
    moved[0, 0] += 0.5
    assert _umap.umap_seed(_umap.vectors_digest(moved)) != seed
    assert 0 <= seed < 2**32


@needs_umap
def test_the_umap_projection_draws_the_query_and_anchors_among_their_neighbours(demo):
    display = ProjectionDisplay.from_scenario(demo, projection="umap").plot()
    p = display.projection
    assert p.method == "UMAP"
    assert p.coords.shape == (len(demo.documents), 2)
    rows = store_rows(demo.store())
    unit = rows.vectors / np.linalg.norm(rows.vectors, axis=1, keepdims=True)
    nearest = np.argsort(-(unit @ p.trace.query_vector), kind="stable")[:5]
    np.testing.assert_allclose(p.query, p.coords[nearest].mean(axis=0))
    assert len(p.anchors) == len(demo.clusters)
    figure = display.figure_
    assert figure.layout.xaxis.title.text == "x (UMAP)"
    assert "Projection (UMAP)" in figure.layout.title.text
    assert not figure.layout.annotations or all(
        "variance" not in a.text for a in figure.layout.annotations
    )


@needs_umap
def test_the_umap_projection_has_three_axes_in_3d(demo):
    display = ProjectionDisplay.from_scenario(demo, projection="umap", n_components=3).plot()
    assert display.projection.coords.shape == (len(demo.documents), 3)
    assert display.figure_.layout.scene.zaxis.title.text == "z (UMAP)"


# -- caching ----------------------------------------------------------------------------------


@needs_umap
def test_controls_that_keep_the_vectors_do_not_refit_umap(demo, fits):
    explorer = app(demo, projection="umap")
    assert explorer.error == "" and len(fits) == 1
    before = explorer.shown.projection.coords
    c = explorer.controls
    for name, value in [
        ("k", 3),
        ("query", "parcel tracking"),
        ("where", '{"lang": "en"}'),
        ("color_by", "stage"),
        ("filter_mode", "post"),
        ("recall", 0.5),
        ("profile", "faiss"),
    ]:
        c[name].value = value
        assert explorer.error == "", name
    assert len(fits) == 1
    assert explorer.shown.projection.coords is before
    c["dimensions"].value = 64  # new vectors: a new layout
    assert len(fits) == 2
    c["dimensions"].value = demo.dimensions  # seen before: from the cache
    c["method"].value = "pca"
    c["method"].value = "umap"
    assert len(fits) == 2
    np.testing.assert_array_equal(explorer.shown.projection.coords, before)


@needs_umap
def test_your_own_coordinates_in_2d_need_no_umap_fit(demo, fits):
    n = len(demo.documents)
    mine = np.column_stack([np.arange(n, dtype=float), np.arange(n, dtype=float) % 5])
    explorer = app(demo, coords=mine, projection="umap")
    assert explorer.error == ""
    np.testing.assert_array_equal(explorer.shown.projection.coords, mine)
    assert fits == []  # your layout replaces UMAP's in 2-D: none is computed
    explorer.controls["projection"].value = "3-D"  # the 3-D view is UMAP's own
    assert explorer.error == "" and len(fits) == 1


@needs_umap
def test_a_new_app_over_the_same_vectors_reuses_the_layout(demo, fits):
    first = app(demo, projection="umap").shown.projection.coords
    second = app(demo.replace(query="money back"), projection="umap").shown.projection.coords
    assert len(fits) == 1
    assert second is first


@needs_umap
def test_the_layout_cache_is_bounded_in_bytes(monkeypatch, fits):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((30, 8)).astype(np.float32) for _ in range(2))
    one = _umap.umap_coords(a, n_epochs=20)
    monkeypatch.setattr(_umap, "CACHE_BYTES", one.nbytes)  # room for one layout
    _umap.umap_coords(b, n_epochs=20)
    _umap.umap_coords(b, n_epochs=20)
    assert len(fits) == 2
    again = _umap.umap_coords(a, n_epochs=20)  # evicted: fitted again, to the same layout
    assert len(fits) == 3
    np.testing.assert_array_equal(again, one)


@needs_umap
def test_the_report_draws_a_umap_projection(tmp_path, demo):
    out = tmp_path / "report.html"
    assert main(["report", "--out", str(out), "--projection", "umap"]) == 0
    page = out.read_text(encoding="utf-8")
    assert "Projection (UMAP)" in page


@needs_umap
def test_explorer_takes_the_projection_as_the_method_controls_value(demo):
    explorer = Explorer(demo, projection="umap")
    assert explorer.controls["method"].value == "umap"
    assert explorer.shown.method == "umap"


def test_threads_sharing_the_layout_cache_each_get_their_layout(monkeypatch):
    # issue 27: the cache was not thread-safe ("RuntimeError: OrderedDict mutated during
    # iteration" from its eviction loop). The fit is a stand-in: the cache is under test.
    from tests._race import race

    def fake_fit(x, params):
        return np.repeat(x[:, :1].astype(np.float64), params["n_components"], axis=1)

    monkeypatch.setattr(_umap, "_CACHE", OrderedDict())
    monkeypatch.setattr(_umap, "_fit", fake_fit)
    monkeypatch.setattr(_umap, "require_umap", lambda: None)
    monkeypatch.setattr(_umap, "CACHE_BYTES", 5 * 2 * 8 * 100)  # room for 100 layouts
    rows = [np.full((5, 4), float(i + 1), dtype=np.float32) for i in range(300)]
    errors = []

    def work(offset):
        try:
            for n in range(300):
                x = rows[(7 * n + offset) % len(rows)]
                coords = _umap.umap_coords(x)
                assert coords.shape == (5, 2) and coords[0, 0] == x[0, 0]
        except BaseException as error:
            errors.append(error)

    assert race(work, [(13 * i,) for i in range(6)], timeout=120) == []
    assert errors == []
    assert 1 <= len(_umap._CACHE) <= 100
