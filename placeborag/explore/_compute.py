"""Compute, no drawing: every number a view shows, as numpy arrays and pandas frames.

Nothing here imports plotly. scikit-learn (the PCA of few rows or many dimensions), umap-learn
(the optional UMAP, in :mod:`._umap`) and pandas (tables) are imported inside the functions
that need them.
"""

from __future__ import annotations

import contextlib
import html
import itertools
import numbers
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from placeborag import MAX_DIMENSIONS as _MAX_DIMENSIONS
from placeborag import FakeEmbedder, FakeVectorStore, PlaceboragTypeError, PlaceboragValueError
from placeborag._documents import document_metadata, document_text
from placeborag._hashing import splitmix64
from placeborag._validation import json_text
from placeborag.explore._access import (
    BELOW,
    DROPPED,
    LOST,
    RETURNED,
    STAGES,
    TIED,
    QueryTrace,
    StoreRows,
    check_instance,
    store_rows,
    trace_query,
)
from placeborag.explore._deps import optional
from placeborag.explore._scenario import checked_clusters
from placeborag.explore._umap import check_projection, place, umap_coords
from placeborag.toolkit import check_int, check_real, check_str, check_texts, shown

__all__ = [
    "AnchorGeometry",
    "Projection",
    "Projector",
    "anchor_geometry",
    "categories",
    "checked_dimensions",
    "filter_mode_table",
    "fit_projector",
    "funnel_counts",
    "hover_labels",
    "project",
]

UNCLUSTERED = "(no cluster)"
# From this many documents the hover texts of a projection are made on demand (a view draws
# per-point strings only up to 5,000 documents; past that, those of the top-k alone).
LAZY_HOVER_FROM = 5001
MISSING = "(missing)"
_HOVER_TEXT_CHARS = 80


# -- projection -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Projector:
    """A fitted PCA as plain arrays; signs fixed so each component's largest loading is > 0."""

    mean: np.ndarray  # (d,)
    components: np.ndarray  # (c, d)
    explained: np.ndarray  # (c,) explained variance ratio

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        """Coordinates (float64) of ``vectors`` on the axes.

        float32 rows (the store's own) are projected in float32, without an (n, d) float64
        copy: the coordinates keep ~7 significant digits, far finer than any picture.
        ``(x - mean) @ C.T`` is computed as ``x @ C.T - mean @ C.T``, without the centred rows.
        """
        x = np.asarray(vectors)
        if x.dtype != np.float32:
            x = x.astype(np.float64, copy=False)
        projected = x @ self.components.T.astype(x.dtype)
        out: np.ndarray = projected.astype(np.float64) - self.mean @ self.components.T
        return out

    def head(self, n_components: int) -> Projector:
        """The projector onto the first ``n_components`` axes (PCA axes are nested)."""
        have = self.components.shape[0]
        if check_int(n_components, "n_components", minimum=1) > have:
            raise PlaceboragValueError(
                f"n_components={shown(n_components)} must be between 1 and {have}, the axes"
                " of this projector"
            )
        if n_components == self.components.shape[0]:
            return self
        return Projector(self.mean, self.components[:n_components], self.explained[:n_components])


PCA_FIT_ROWS = 20_000  # past this many rows the PCA is fitted on a stride sample of them
MAX_COMPONENTS = 1024  # fit_projector's bound on n_components (the explorer draws 2 or 3)


def _checked_vectors(vectors: object, name: str = "vectors") -> np.ndarray:
    """``vectors`` as a 2-D array of finite float32 or float64 numbers (no copy when it is
    one already), else a PlaceboragError naming ``name``."""
    try:
        x = np.asarray(vectors)
        if x.dtype not in (np.float32, np.float64):
            if x.dtype.kind not in "biuf":
                raise TypeError(x.dtype)
            x = x.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise PlaceboragTypeError(
            f"{name}={shown(vectors)} must be a 2-D array of numbers (one row per document)"
        ) from None
    if x.ndim != 2:
        raise PlaceboragValueError(
            f"{name} of shape {x.shape} must be 2-D: one row of numbers per document"
        )
    if not np.isfinite(x).all():
        raise PlaceboragValueError(f"{name} holds a value that is not finite; every value must be")
    return x


def fit_projector(vectors: np.ndarray, n_components: int = 2) -> Projector:
    """PCA of ``vectors`` (rows) to ``n_components``, deterministic for a given input.

    ARPACK (Lanczos) with a fixed start vector (``random_state=0``) finds the few leading
    components from a few dozen products with the rows, in single precision like the store's
    own vectors: at 2,000 x 1,024 that is ~20 ms where the exact eigendecomposition of the
    covariance takes ~450 ms, and the axes agree with it to ~1e-7. Where the covariance is
    small (at most 384 dimensions) and the rows many (at least four per dimension), its
    exact eigendecomposition (:func:`covariance_pca`: scikit-learn 1.5's ``covariance_eigh``
    done in numpy, with the same bits) is the faster of the two: one product of the rows with
    themselves, all in BLAS (20,000 x 256: ~33 ms against ~47 ms, axes within 1e-6 of
    ARPACK's), which also holds the GIL less while the app's traces run beside it, and it
    needs no scikit-learn import (a second or more in a fresh kernel). Tiny inputs (no more
    rows or dimensions than components) and the rare input on which ARPACK does not converge
    take the exact full SVD. BLAS runs on one thread:
    a multi-threaded call on a busy machine can take seconds, and one thread also keeps the
    reduction order, and so the picture, the same everywhere.
    """
    check_int(n_components, "n_components", minimum=1)
    if n_components > MAX_COMPONENTS:
        raise PlaceboragValueError(
            f"n_components={shown(n_components)} must be between 1 and {MAX_COMPONENTS}"
        )
    x = _checked_vectors(vectors)
    if x.shape[0] > PCA_FIT_ROWS:
        # The axes of a large store from a fixed stride of its rows (deterministic): the
        # leading components of 20,000 rows agree with the whole store's to the picture.
        x = x[:: -(-x.shape[0] // PCA_FIT_ROWS)]
    c = min(n_components, x.shape[0], x.shape[1])
    if c < 1:
        raise PlaceboragValueError("a projection needs at least one document")
    if _solver(x.shape) == "covariance_eigh" and c < min(x.shape):
        # numpy alone: scikit-learn (and the scipy it loads, a second or more of a fresh
        # kernel's first picture) is imported only for the solvers that need it.
        with one_blas_thread():
            mean, components, explained = covariance_pca(x, c)
    else:
        mean, components, explained = _sklearn_pca(x, c)
    signs = np.sign(components[np.arange(c), np.argmax(np.abs(components), axis=1)])
    components *= np.where(signs == 0, 1.0, signs)[:, None]
    explained = np.nan_to_num(explained)
    if c < n_components:  # fewer documents than components: pad with zero axes
        components = np.vstack([components, np.zeros((n_components - c, x.shape[1]))])
        explained = np.concatenate([explained, np.zeros(n_components - c)])
    return Projector(mean=mean, components=components, explained=explained)


def covariance_pca(x: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The PCA of ``x`` by the exact eigendecomposition of its covariance, step for step as
    scikit-learn's ``svd_solver="covariance_eigh"`` computes it (1.5 and later, on numpy
    arrays), in ``x``'s dtype: the same bits (a test compares them). Returns the mean, the
    first ``c`` components and their explained variance ratios, as float64."""
    n = x.shape[0]
    x = np.ascontiguousarray(x)
    mean = np.mean(x, axis=0)
    cov = x.T @ x
    cov -= n * np.reshape(mean, (-1, 1)) * np.reshape(mean, (1, -1))
    cov /= n - 1
    values, vectors = np.linalg.eigh(cov)
    values = np.flip(values, axis=0)
    vectors = np.flip(vectors, axis=1)
    values[values < 0.0] = 0.0
    vt = vectors.T
    # scikit-learn's svd_flip (v-based): each component's largest loading made positive
    biggest = np.argmax(np.abs(vt), axis=1)
    vt = vt * np.sign(vt[np.arange(vt.shape[0]), biggest])[:, None]
    ratio = values / np.sum(values)
    return mean.astype(np.float64), vt[:c].astype(np.float64), ratio[:c].astype(np.float64)


def _sklearn_pca(x: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    decomposition = optional("sklearn.decomposition")
    with one_blas_thread():
        try:
            if c >= min(x.shape):
                raise ValueError("ARPACK needs fewer components than rows and dimensions")
            pca = decomposition.PCA(n_components=c, svd_solver="arpack", random_state=0).fit(x)
        except (ValueError, RuntimeError):  # too small, or ARPACK did not converge (ArpackError)
            pca = decomposition.PCA(n_components=c, svd_solver="full").fit(x)
    return (
        pca.mean_.astype(np.float64),
        pca.components_.astype(np.float64),
        pca.explained_variance_ratio_.astype(np.float64),
    )


_BLAS: list[tuple[tuple[bool, ...], Any]] = []  # (packages loaded, controller)


def _solver(shape: tuple[int, ...]) -> str:
    """``covariance_eigh`` (:func:`covariance_pca`, numpy only) for many rows of few
    dimensions, else scikit-learn's ``arpack``."""
    rows, dims = shape
    if dims <= 384 and rows >= 4 * dims:
        return "covariance_eigh"
    return "arpack"


def one_blas_thread() -> Any:
    """A context in which BLAS, LAPACK and OpenMP use one thread (threadpoolctl comes with
    sklearn).

    scikit-learn brings scipy's own OpenBLAS (ARPACK's) and an OpenMP runtime beside numpy's
    OpenBLAS, and UMAP numba's. A controller only knows the libraries loaded when it is made,
    so a new one is made once one of those packages has been imported since (scikit-learn
    itself is not imported for it: the first picture needs numpy's BLAS only); otherwise a
    fit runs on two threads, whose workers then spin on the second core for a while after it.
    """
    loaded = tuple(name in sys.modules for name in _BLAS_BRINGERS)
    if not _BLAS or _BLAS[0][0] != loaded:
        _BLAS[:] = [(loaded, optional("threadpoolctl").ThreadpoolController())]
    return _BLAS[0][1].limit(limits=1)


# Packages that load a BLAS or OpenMP runtime of their own beside numpy's.
_BLAS_BRINGERS = ("scipy", "sklearn", "numba")


def categories(store: FakeVectorStore, rows: StoreRows, color_by: str) -> np.ndarray:
    """One label per document: its cluster (``color_by="cluster"``) or a metadata value."""
    if color_by == "cluster":
        embedder = store.embedder
        if isinstance(embedder, FakeEmbedder):
            names = embedder.clusters_of(rows.texts)
        elif callable(getattr(embedder, "cluster_of", None)):
            names = [embedder.cluster_of(t) for t in rows.texts]
        else:
            return np.full(len(rows.ids), UNCLUSTERED, dtype=object)
        return np.array([n or UNCLUSTERED for n in names], dtype=object)
    return np.array(
        [str(m[color_by]) if color_by in m else MISSING for m in rows.metadatas], dtype=object
    )


def category_order(store: FakeVectorStore, labels: np.ndarray) -> list[str]:
    """Categories in a stable order: declared clusters first, then sorted values, then blanks."""
    present = distinct_labels(labels)
    declared = [n for n in getattr(store.embedder, "cluster_names", ()) if n in present]
    rest = sorted(present - set(declared) - {UNCLUSTERED, MISSING})
    return declared + rest + [b for b in (UNCLUSTERED, MISSING) if b in present]


# What a pass over a read-only label array found, by the array's identity (the arrays are
# kept here, so an identity is never a later array's): the app's labels outlive many redraws
# (one labelling serves every embedder setting), a trace's stages serve every view of it.
_SEEN_LABELS: list[tuple[np.ndarray, Any, Any]] = []
_SEEN_LABELS_AT_MOST = 8


def kept_for(labels: np.ndarray, key: Any, make: Any) -> Any:
    """``make()``, kept for a read-only ``labels`` array (its values cannot change under it)
    and ``key``; a writable array gets ``make()`` every time."""
    if not isinstance(labels, np.ndarray) or labels.flags.writeable:
        return make()
    for i, (array, k, value) in enumerate(_SEEN_LABELS):
        if array is labels and k == key:
            if i:
                _SEEN_LABELS.insert(0, _SEEN_LABELS.pop(i))
            return value
    value = make()
    _SEEN_LABELS.insert(0, (labels, key, value))
    del _SEEN_LABELS[_SEEN_LABELS_AT_MOST:]
    return value


def distinct_labels(labels: np.ndarray) -> frozenset[Any]:
    """The set of values in ``labels`` (one pass, kept for a read-only array)."""
    found: frozenset[Any] = kept_for(labels, None, lambda: frozenset(np.asarray(labels).tolist()))
    return found


def label_codes(labels: np.ndarray, order: Sequence[Any]) -> np.ndarray:
    """Each label's index in ``order``, -1 for one not in it (int32, read-only): what
    ``labels == order[j]`` says for every j at once, in one pass over the labels instead of
    one comparison of every (Python object) label per category. Kept for a read-only array
    (a trace's stages, the app's cached labels)."""

    def make() -> np.ndarray:
        values = np.asarray(labels).ravel()
        codes: np.ndarray = np.full(values.shape, -1, dtype=np.int32)
        missed = np.arange(values.size)
        if all(type(name) is str for name in order):
            # A str is found by its hash exactly when == finds it (a str subclass too).
            lookup: dict[str, int] = {}
            for j, name in enumerate(order):
                lookup.setdefault(name, j)
            # First by identity: a label that *is* one of the names (a trace's stages are
            # the very strings of STAGES, a labelling repeats a few objects) is that name's;
            # an object array's bytes are its elements' addresses, compared here as numbers
            # (only for being the same object, never to order anything).
            if values.dtype == object and len(order) <= _BY_IDENTITY_AT_MOST:
                addresses = _addresses(values)
                if addresses is not None:
                    for name in reversed(order):
                        codes[addresses == id(name)] = lookup[name]
                    missed = np.flatnonzero(codes < 0)
            if missed.size:
                with contextlib.suppress(TypeError):  # an unhashable label: compared below
                    codes[missed] = np.fromiter(
                        map(lookup.get, values[missed].tolist(), itertools.repeat(-1)),
                        dtype=np.int32,
                        count=missed.size,
                    )
                missed = missed[codes[missed] < 0]
        if missed.size:  # not found by hash (or not looked up): compared as numpy does
            rest = values[missed]
            for j in range(len(order) - 1, -1, -1):
                codes[missed[rest == order[j]]] = j
        codes = codes.reshape(np.shape(labels))
        codes.flags.writeable = False
        return codes

    found: np.ndarray = kept_for(labels, tuple(order), make)
    return found


def split_rows(rows: np.ndarray, codes: np.ndarray, m: int) -> list[np.ndarray]:
    """``[rows[codes == j] for j in range(m)]`` from one stable sort of the codes (each part
    keeps the order of ``rows``)."""
    codes = np.asarray(codes)
    by_code = np.argsort(codes, kind="stable")
    counts = np.bincount(codes[codes >= 0], minlength=m)[:m]
    start = int(np.count_nonzero(codes < 0))
    ends = start + np.cumsum(counts)
    sorted_rows = rows[by_code]
    return [sorted_rows[a:b] for a, b in zip([start, *ends[:-1].tolist()], ends.tolist())]


def rows_by_label(rows: np.ndarray, labels: np.ndarray, order: Sequence[Any]) -> list[np.ndarray]:
    """``[rows[labels[rows] == name] for name in order]``: the rows of each label, in the
    order of ``rows``, from the labels' codes (:func:`label_codes`)."""
    try:
        unique = len(set(order)) == len(order)
    except TypeError:
        unique = False
    if not unique:  # a name twice (each gets its rows), or an unhashable one: as == says
        picked = np.asarray(labels)[rows]
        return [rows[picked == name] for name in order]
    return split_rows(rows, label_codes(labels, order)[rows], len(order))


_BY_IDENTITY_AT_MOST = 64  # names compared by identity, one pass over the addresses each


def _addresses(values: np.ndarray) -> np.ndarray | None:
    """The addresses of an object array's elements (its raw bytes), or None when numpy does
    not give them so."""
    try:
        raw = np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype=np.uintp)
    except (TypeError, ValueError):
        return None
    return raw if raw.size == values.size else None


def label_rows(labels: np.ndarray, order: Sequence[Any]) -> list[np.ndarray]:
    """``rows_by_label(np.arange(len(labels)), labels, order)``, read-only, kept for a
    read-only ``labels`` array: every redraw of one labelling groups its rows alike."""

    def make() -> list[np.ndarray]:
        out = rows_by_label(np.arange(len(labels)), labels, order)
        for a in out:
            a.flags.writeable = False
        return out

    found: list[np.ndarray] = kept_for(labels, ("rows", tuple(order)), make)
    return list(found)


class LazyHover:
    """The hover texts of :func:`hover_labels`, made only for the rows asked for (``hover[rows]``
    with an index array or a mask): a large store draws none per point, only the top-k's."""

    def __init__(self, rows: StoreRows) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows.ids)

    def __getitem__(self, index: Any) -> np.ndarray:
        picked = np.arange(len(self))[index]
        r = self.rows
        return np.array(
            [_hover_one(r.ids[i], r.texts[i], r.metadatas[i]) for i in picked.tolist()],
            dtype=object,
        )


def _hover_one(i: str, t: str, m: Mapping[str, Any]) -> str:
    # The document as the application wrote it (a LlamaIndex node's text and metadata, not
    # what LlamaIndex embedded and the node the adapter keeps beside it).
    t, m = document_text(t, m), document_metadata(m)
    text = t if len(t) <= _HOVER_TEXT_CHARS else t[: _HOVER_TEXT_CHARS - 1] + "…"
    meta = ", ".join(f"{k}={v}" for k, v in m.items())
    return f"<b>{plotly_text(i)}</b><br>{plotly_text(text)}<br>{plotly_text(meta)}"


def hover_labels(rows: StoreRows, lazy_from: int | None = None) -> Any:
    """The static part of each point's hover text: id, text (cut at 80 characters), metadata.

    With ``lazy_from`` documents or more, a :class:`LazyHover` that makes them on demand.
    """
    if lazy_from is not None and len(rows.ids) >= lazy_from:
        return LazyHover(rows)

    return np.array(
        [_hover_one(i, t, m) for i, t, m in zip(rows.ids, rows.texts, rows.metadatas)],
        dtype=object,
    )


def plotly_text(s: str) -> str:
    """User text for plotly (titles, hover): the characters plotly reads as markup, escaped
    (plotly decodes &amp;, &lt; and &gt;, but shows &quot; as it is)."""
    return html.escape(s, quote=False)


@dataclass(frozen=True)
class Projection:
    """A store and one query, projected: everything the projection view draws."""

    coords: np.ndarray  # (n, c)
    query: np.ndarray  # (c,)
    anchor_names: list[str]
    anchors: np.ndarray  # (a, c)
    explained: np.ndarray  # (c,)
    labels: np.ndarray  # (n,) category of each document
    label_order: list[str]
    color_by: str
    hover: np.ndarray  # (n,) static hover text
    trace: QueryTrace
    score_label: str
    higher_is_better: bool
    method: str = "PCA"  # or "UMAP", or "your coordinates" (given to the app): no variance

    @property
    def ids(self) -> tuple[str, ...]:
        return self.trace.ids


def _unit(vector: np.ndarray) -> np.ndarray:
    """``vector`` in float64 scaled to unit length, as the store stores a record's vector."""
    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def project(
    store: FakeVectorStore,
    query: str,
    k: int = 5,
    where: Mapping[str, Any] | None = None,
    *,
    n_components: int = 2,
    color_by: str = "cluster",
    projection: str = "pca",
    rows: StoreRows | None = None,
    projector: Projector | None = None,
    hover: np.ndarray | None = None,
    trace: QueryTrace | None = None,
    labels: np.ndarray | None = None,
    coords: np.ndarray | None = None,
) -> Projection:
    """Project a store's documents, its query and its cluster anchors with PCA (the default)
    or, with ``projection="umap"`` and the ``umap`` extra, UMAP (see :mod:`._umap`).

    The keyword-only caches (``rows``, ``projector``, ``hover``, ``trace``, ``labels``,
    ``coords``) let an app reuse what a control change did not invalidate; left out,
    everything is computed.
    """
    check_instance(store, "store", FakeVectorStore, "a FakeVectorStore")
    check_str(query, "query")
    check_projection(projection)
    check_str(color_by, "color_by")
    check_instance(rows, "rows", StoreRows, "StoreRows (store_rows(store)) or None", none=True)
    check_instance(projector, "projector", Projector, "a Projector or None", none=True)
    check_instance(trace, "trace", QueryTrace, "a QueryTrace (trace_query()) or None", none=True)
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral):
        raise PlaceboragTypeError(f"n_components={shown(n_components)} must be an int, 2 or 3")
    if n_components not in (2, 3):
        raise PlaceboragValueError(f"n_components={shown(n_components)} must be 2 or 3")
    rows = rows if rows is not None else store_rows(store)
    n = len(rows.ids)
    for given, what in ((hover, "hover"), (labels, "labels"), (coords, "coords")):
        if given is not None and (not hasattr(given, "__len__") or len(given) != n):
            raise PlaceboragValueError(
                f"{what}={shown(given)} must be None or hold one entry per document ({n})"
            )
    if coords is not None:
        coords = _checked_vectors(coords, "coords")
    if trace is not None and len(trace.ids) != n:
        raise PlaceboragValueError(
            f"trace of {len(trace.ids)} documents must be a trace of the store's {n} rows"
        )
    if projector is not None and projector.components.shape[1:] != rows.vectors.shape[1:]:
        raise PlaceboragValueError(
            f"projector of {projector.components.shape[1]} dimensions must project the"
            f" store's {rows.vectors.shape[1]}-dimensional vectors"
        )
    if projection == "umap":
        coords = coords if coords is not None else umap_coords(rows.vectors, n_components)
    else:
        projector = projector or fit_projector(rows.vectors, n_components)
    trace = trace or trace_query(store, query, k, where, rows=rows)
    names = list(getattr(store.embedder, "cluster_names", ()))
    anchor_vectors = (
        np.array([store.embedder.cluster_anchor(n) for n in names])
        if names
        else np.zeros((0, rows.vectors.shape[1]))
    )
    # The store holds every vector unit-normalised: the query is projected as it would be
    # stored, or over vectors of other lengths it lands far from its own top-k.
    unit_query = _unit(trace.query_vector)
    if projection == "umap":
        assert coords is not None
        query_at = place(unit_query, rows.vectors, coords)[0]
        anchors = place(anchor_vectors, rows.vectors, coords)
        explained = np.zeros(n_components)
    else:
        assert projector is not None
        anchors = (
            projector.transform(anchor_vectors)
            if names
            else np.zeros((0, projector.components.shape[0]))
        )
        query_at = projector.transform(unit_query[None, :])[0]
        coords = coords if coords is not None else projector.transform(rows.vectors)
        explained = projector.explained
    if color_by == "stage":  # where this query left each document: changes with the query
        labels = np.asarray(trace.stage, dtype=object)
        present = distinct_labels(labels)
        order = [name for name in STAGES if name in present]
    else:
        if labels is None:
            labels = categories(store, rows, color_by)
        order = category_order(store, labels)
    return Projection(
        coords=coords,
        query=query_at,
        anchor_names=names,
        anchors=anchors,
        explained=explained,
        labels=labels,
        label_order=order,
        color_by=color_by,
        hover=hover if hover is not None else hover_labels(rows, lazy_from=LAZY_HOVER_FROM),
        trace=trace,
        score_label=store.profile.score_label,
        higher_is_better=store.profile.higher_is_better,
        method="UMAP" if projection == "umap" else "PCA",
    )


def spread_offsets(ids: Sequence[str], width: float = 0.7) -> np.ndarray:
    """A deterministic offset in [-width/2, width/2) per document of ``ids``, to spread points
    within a row: a hash of its position (SplitMix64, vectorised: no Python loop over a
    million ids), the same for every view of one store's records."""
    cached = _OFFSETS[0]
    if cached is not None and cached[0] is ids and (cached[1], cached[2].size) == (width, len(ids)):
        same: np.ndarray = cached[2]  # the same snapshot of ids as the last redraw
        return same
    h = splitmix64(np.arange(len(ids), dtype=np.uint64) ^ np.uint64(_SPREAD_SALT))
    out: np.ndarray = ((h >> np.uint64(32)).astype(np.float64) / 2.0**32 - 0.5) * width
    out.flags.writeable = False
    _OFFSETS[0] = (ids, width, out)  # holding ``ids`` keeps its identity meaningful
    return out


_OFFSETS: list[Any] = [None]
_SPREAD_SALT = 0x7370726561642121


# -- anchors against jitter -------------------------------------------------------------------


@dataclass(frozen=True)
class AnchorGeometry:
    """Members against their anchors, and against each other, at several dimensions.

    ``members`` has one row per (dimensions, cluster, text): ``jitter`` (m), ``cosine`` to the
    anchor, ``expected`` = 1/sqrt(1+m**2) and ``order`` (1 = nearest its anchor). ``pairs`` has
    one row per (dimensions, cluster, pair of declared members) with their ``cosine``.
    ``errors`` names the dimensions at which the declaration cannot be satisfied.
    """

    members: Any  # pandas.DataFrame
    pairs: Any  # pandas.DataFrame
    dimensions: tuple[int, ...]
    errors: dict[int, str]


def anchor_geometry(
    clusters: Mapping[str, Sequence[str]],
    *,
    texts: Sequence[str] = (),
    dimensions: int | Sequence[int] = (64, 256, 1024),
    model_name: str = "placebo-embed-v1",
    cluster_spread: float = 0.5,
    cluster_match: str = "exact",
    max_pairs: int = 6,
    max_members: int = 40,
) -> AnchorGeometry:
    """Cosines of every cluster member to its anchor and of member pairs, per dimension.

    The members are the declared texts plus any of ``texts`` (a store's documents) that fall
    into a cluster under ``cluster_match`` (at most ``max_members`` per cluster, declared
    texts first). ``dimensions`` is a sequence of ints, or one int for a single dimension
    (each between 2 and 65,536, as for a FakeEmbedder); ``max_pairs`` (>= 0) pairs of declared
    members are compared per cluster.
    """
    clusters = checked_clusters(clusters)
    texts = check_texts(texts, "texts")
    dimensions = checked_dimensions(dimensions)
    check_str(model_name, "model_name")
    check_real(cluster_spread, "cluster_spread")
    max_pairs = min(check_int(max_pairs, "max_pairs", minimum=0), sys.maxsize)  # more: all
    check_int(max_members, "max_members", minimum=1)
    # The options that do not depend on the dimension: refused here, not per dimension below.
    FakeEmbedder(
        model_name=model_name,
        dimensions=dimensions[0] if dimensions else 2,
        cluster_spread=cluster_spread,
        cluster_match=cluster_match,  # type: ignore[arg-type]  # checked by FakeEmbedder
    )
    pd = optional("pandas")
    errors: dict[int, str] = {}
    declared = [t for ts in clusters.values() for t in ts]
    candidates = list(dict.fromkeys([*declared, *texts]))
    selected: list[str] = []
    member_of: list[str] = []
    parts: list[dict[str, Any]] = []
    pairs: dict[str, list[Any]] = {c: [] for c in _PAIR_COLUMNS}
    for d in dimensions:
        try:
            emb = FakeEmbedder(
                model_name=model_name,
                dimensions=d,
                clusters=clusters,
                cluster_spread=cluster_spread,
                cluster_match=cluster_match,  # type: ignore[arg-type]  # checked by Scenario
            )
        except ValueError as exc:
            errors[d] = str(exc)
            continue
        if not parts:
            # Membership and jitter do not depend on the dimension: work them out once,
            # members grouped by cluster (declaration order), in the order given within one.
            picked, names = _pick_members(emb, candidates, max_members)
            order = sorted(range(len(picked)), key=lambda i: (emb.cluster_names.index(names[i]), i))
            selected = [picked[i] for i in order]
            member_of = [names[i] for i in order]
            jitter = emb.jitters_of(selected)
            label = np.array([emb.cluster_names.index(n) for n in member_of], dtype=np.intp)
            own = [set(clusters[n]) for n in emb.cluster_names]
            is_declared = np.array([t in own[c] for t, c in zip(selected, label.tolist())])
            expected = 1.0 / np.sqrt(1.0 + jitter * jitter)
            starts = np.searchsorted(label, np.arange(len(emb.cluster_names)))
        vectors = emb.embed_array(selected)
        anchors = emb.cluster_anchors()
        cos = np.einsum("ij,ij->i", vectors, anchors[label])
        # 1 = nearest its anchor, within each cluster (ties keep the members' order).
        by_cos = np.lexsort((-cos, label))
        rank = np.empty(len(selected), dtype=np.int64)
        rank[by_cos] = np.arange(len(selected)) - starts[label[by_cos]] + 1
        parts.append({"dimensions": d, "cosine": cos, "order": rank})
        for c, name in enumerate(emb.cluster_names):
            mine = np.flatnonzero((label == c) & is_declared).tolist()
            for a, b in itertools.islice(itertools.combinations(mine, 2), max_pairs):
                pairs["dimensions"].append(d)
                pairs["cluster"].append(name)
                pairs["pair"].append(f"{selected[a]} ↔ {selected[b]}")
                pairs["cosine"].append(float(vectors[a] @ vectors[b]))
    members: dict[str, Any] = {c: [] for c in _MEMBER_COLUMNS}
    if parts:  # else no dimension could satisfy the declaration
        count = len(parts)
        members = {
            "dimensions": np.repeat([p["dimensions"] for p in parts], len(selected)),
            "cluster": member_of * count,
            "text": selected * count,
            "declared": np.tile(is_declared, count),
            "jitter": np.tile(jitter, count),
            "cosine": np.concatenate([p["cosine"] for p in parts]),
            "expected": np.tile(expected, count),
            "order": np.concatenate([p["order"] for p in parts]),
        }
    return AnchorGeometry(
        pd.DataFrame(members, columns=list(_MEMBER_COLUMNS)),
        pd.DataFrame(pairs, columns=list(_PAIR_COLUMNS)),
        dimensions,
        errors,
    )


def checked_dimensions(dimensions: object, name: str = "dimensions") -> tuple[int, ...]:
    """A tuple of dimensions from a sequence of ints or one int."""
    if isinstance(dimensions, numbers.Integral) and not isinstance(dimensions, bool):
        dimensions = (dimensions,)
    if isinstance(dimensions, (str, bytes, Mapping)) or not isinstance(dimensions, Iterable):
        raise PlaceboragTypeError(
            f"{name}={shown(dimensions)} must be an int or a sequence of ints"
        )
    out = []
    for i, d in enumerate(dimensions):
        value = check_int(d, f"{name}[{i}]")
        if not 2 <= value <= _MAX_DIMENSIONS:
            raise PlaceboragValueError(
                f"{name}[{i}]={shown(d)} must be between 2 and {_MAX_DIMENSIONS}"
            )
        out.append(value)
    return tuple(out)


_MEMBER_COLUMNS = (
    "dimensions",
    "cluster",
    "text",
    "declared",
    "jitter",
    "cosine",
    "expected",
    "order",
)
_PAIR_COLUMNS = ("dimensions", "cluster", "pair", "cosine")


def _pick_members(
    emb: FakeEmbedder, texts: list[str], max_members: int
) -> tuple[list[str], list[str]]:
    """At most ``max_members`` members per cluster, in the order given, and their clusters."""
    taken: dict[str, int] = {}
    out: list[str] = []
    names: list[str] = []
    for text, name in zip(texts, emb.clusters_of(texts)):
        if name is not None and taken.get(name, 0) < max_members:
            taken[name] = taken.get(name, 0) + 1
            out.append(text)
            names.append(name)
    return out, names


# -- pre- versus post-filter -----------------------------------------------------------------

TABLE_COLUMNS = ("rank", "id", "occurrence", "text", "metadata", "score", "stage", "tie")
#: The column after "text" when a framework embedded another text than the document's own.
EMBEDDED_COLUMN = "embedded"
BELOW_ROWS = 3  # rows shown just below the cut: what nearly made it


def filter_mode_table(trace: QueryTrace, rows: StoreRows) -> Any:
    """The documents a user asks about for one filter mode, best first.

    Returned matches (ranked 1..n), what a post-filter dropped, every document tied with one of
    them, what recall lost that a perfect index would have returned, and the few documents just
    below the cut. ``score`` is in the profile's convention; ``stage`` is the trace's (one of
    :data:`placeborag.STAGES`); ``tie`` names the exact tie a document is in and the rule that
    decided it; ``occurrence`` tells apart the records of an id stored more than once (0 for
    its first record, as ``store.records().occurrence`` numbers them). ``text`` and
    ``metadata`` are the document's own (a LlamaIndex node's text and metadata); where a
    framework embedded another text, an ``embedded`` column after ``text`` holds it.
    """
    check_instance(trace, "trace", QueryTrace, "a QueryTrace (trace_query())")
    check_instance(rows, "rows", StoreRows, "StoreRows (store_rows(store))")
    if trace.ids is not rows.ids and tuple(trace.ids) != tuple(rows.ids):
        raise PlaceboragValueError(
            f"rows of {len(rows.ids)} documents must be the rows of the store the trace was"
            f" taken from ({len(trace.ids)} documents): pass store_rows(store) of that store"
        )
    pd = optional("pandas")
    stage = label_codes(trace.stage, STAGES)  # each record's stage, as its index in STAGES
    below = np.flatnonzero(stage == STAGES.index(BELOW))
    better = -trace.score if trace.higher_is_better else trace.score
    nearest_below = below[_first_sorted(better[below], BELOW_ROWS)]
    shown = (
        (trace.rank > 0)
        | (stage == STAGES.index(DROPPED))
        | (stage == STAGES.index(TIED))
        | ((stage == STAGES.index(LOST)) & (trace.ideal_rank > 0))
    )
    shown[nearest_below] = True
    idx = np.flatnonzero(shown)
    # Best first; among exact ties, the store's own order (returned, then cut, then ideal).
    # (of the rows shown only: a few dozen of them, not every document)
    rank, cut, ideal = trace.rank[idx], trace.cut_rank[idx], trace.ideal_rank[idx]
    tie = np.where(rank > 0, rank, np.where(cut > 0, cut, ideal))
    idx = idx[np.lexsort((np.where(tie > 0, tie, np.iinfo(np.int64).max), better[idx]))]
    ties = {}
    for group in trace.ties:
        for doc_id in group.ids:
            verdict = "kept" if doc_id in group.kept else "left out"
            ties[doc_id] = f"{len(group.ids)} tied, {group.rule} order: {verdict}"
    at = idx.tolist()
    texts = [document_text(rows.texts[i], rows.metadatas[i]) for i in at]
    columns = {
        "rank": pd.array([int(trace.rank[i]) or None for i in at], dtype="Int64"),
        "id": [rows.ids[i] for i in at],
        "occurrence": [int(rows.occurrence[i]) for i in at],
        "text": texts,
        "metadata": [json_text(document_metadata(rows.metadatas[i])) for i in at],
        "score": trace.score[idx],
        "stage": [str(trace.stage[i]) for i in at],
        "tie": [ties.get(rows.ids[i], "") for i in at],
    }
    names = list(TABLE_COLUMNS)
    embedded = [rows.texts[i] if rows.texts[i] != t else "" for i, t in zip(at, texts)]
    if any(embedded):  # what a framework embedded, beside the text, where they differ
        columns[EMBEDDED_COLUMN] = embedded
        names.insert(names.index("text") + 1, EMBEDDED_COLUMN)
    return pd.DataFrame(columns, columns=names)


def _first_sorted(values: np.ndarray, m: int) -> np.ndarray:
    """``np.argsort(values, kind="stable")[:m]`` without sorting them all: the candidates up
    to the m-th smallest value (every tie with it included), sorted stably."""
    if values.size <= m:
        return np.argsort(values, kind="stable")
    edge = np.partition(values, m - 1)[m - 1]
    if not np.isfinite(edge):  # NaN or infinity among the first m: the plain sort
        return np.argsort(values, kind="stable")[:m]
    near = np.flatnonzero(values <= edge)
    out: np.ndarray = near[np.argsort(values[near], kind="stable")][:m]
    return out


def funnel_counts(trace: QueryTrace) -> Any:
    """The stages of one query in the order the store takes them, with document counts."""
    check_instance(trace, "trace", QueryTrace, "a QueryTrace (trace_query())")
    pd = optional("pandas")
    c = trace.counts
    filtered = trace.where is not None
    if trace.filter_mode == "pre":
        stages = [("candidates", c["candidates"])]
        if filtered:
            stages.append(("pass the filter", c["pass filter"]))
        stages += [("survive recall", c["survive recall"]), ("top-k cut", c["top-k cut"])]
    else:
        stages = [
            ("candidates", c["candidates"]),
            ("survive recall", c["survive recall"]),
            ("top-k cut", c["top-k cut"]),
        ]
        if filtered:
            stages.append(("pass the filter", c["returned"]))
    return pd.DataFrame(stages, columns=["stage", "documents"])


def returned_ids(frame: Any) -> list[str]:
    return list(frame.loc[frame["stage"] == RETURNED, "id"])
