"""The explorer's state: every view computed from a scenario, with no widget in sight.

:class:`ExplorerState` owns the caches (stores per embedder setting, traces, PCA fits, labels,
coordinates, the anchors view) and turns a :class:`Scenario` plus the two view choices (2-D or
3-D, what to colour by) into :class:`Views`: the displays the app draws and the keys that say
when a view is unchanged. The widget app (:mod:`placeborag.explore._app`) only builds controls,
observes them and draws what this returns; a test or a script can use this alone.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from placeborag import FakeVectorStore
from placeborag._threads import beside
from placeborag._validation import json_text
from placeborag.explore._access import (
    QueryTrace,
    StoreRows,
    reembedded,
    store_rows,
    trace_query,
    with_options,
)
from placeborag.explore._compute import (
    UNCLUSTERED,
    Projection,
    Projector,
    anchor_geometry,
    categories,
    fit_projector,
    hover_labels,
    one_blas_thread,
    project,
)
from placeborag.explore._controls import (
    anchor_values,
    grouped,
    plain_store_options,
    query_values,
    store_options,
)
from placeborag.explore._figures import HOVER_TEXT_UP_TO, AnchorsDisplay, FilterModesDisplay
from placeborag.explore._scenario import Scenario
from placeborag.explore._umap import check_projection, umap_coords

__all__ = ["ANCHOR_MEMBERS", "ExplorerState", "Views"]

_CACHE = 6
ANCHOR_MEMBERS = 40  # documents per cluster in the anchors view


def _frozen(values: np.ndarray) -> np.ndarray:
    """A cached labelling or layout, read-only: it is shared by every redraw that draws it,
    and the displays keep what they work out of a read-only array (its codes, its density)
    by its identity."""
    values.flags.writeable = False
    return values


class LRU(OrderedDict):  # type: ignore[type-arg]
    """A small least-recently-used cache of the last few configurations."""

    capacity = _CACHE
    evict_first = False  # make room before making a new value (large values: lower peak)

    def get_or(self, key: Any, make: Callable[[], Any]) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        while self.evict_first and self and len(self) >= self.capacity:
            self.popitem(last=False)
        value = self[key] = make()
        while len(self) > self.capacity:
            self.popitem(last=False)
        return value


# Embedded stores kept per document count: each holds every vector (100,000 x 256 float32 is
# 100 MB) and embedding them peaks at several times that, so past 50,000 documents only the
# current embedder setting's store is kept (it is also the source the next one is re-embedded
# from), and the app lets go of the views drawing it before the next is made.
_LARGE_STORE = 50_000
_LARGE_CACHE = 1


@dataclass(frozen=True)
class Views:
    """Everything the app draws for one scenario, and the keys that identify each view."""

    scenario: Scenario
    base: FakeVectorStore
    rows: StoreRows
    stores: dict[str, FakeVectorStore]  # filter mode -> store with the scenario's options
    traces: dict[str, QueryTrace]  # filter mode -> its trace
    projection: Projection
    anchors: AnchorsDisplay | None
    n_components: int
    color_by: str
    method: str = "pca"  # the projection: "pca" or "umap"

    @property
    def trace(self) -> QueryTrace:
        return self.traces[self.scenario.filter_mode]

    @property
    def tables_key(self) -> tuple[QueryTrace, QueryTrace]:
        return (self.traces["pre"], self.traces["post"])

    @property
    def choices(self) -> dict[str, Any]:
        """The view controls' values these views were drawn with, by control name."""
        return {"color_by": self.color_by, "projection": self.n_components, "method": self.method}

    def _drawn_with(self, view: str) -> tuple[Any, ...]:
        # The trace, and every view choice the table of controls says redraws ``view``.
        choices = self.choices
        return (self.trace, *(choices[c.name] for c in grouped("view") if view in c.redraws))

    @property
    def projection_key(self) -> tuple[Any, ...]:
        return self._drawn_with("projection")

    @property
    def ranking_key(self) -> tuple[Any, ...]:
        return self._drawn_with("ranking")

    @property
    def anchors_key(self) -> str:
        return anchors_key(self.scenario)


def anchors_key(s: Scenario) -> str:
    """What the anchors view of ``s`` is drawn from (:func:`anchor_values`), as a key."""
    return json.dumps(anchor_values(s), sort_keys=True, ensure_ascii=False)


class ExplorerState:
    """Computes every view of a scenario, caching what a control change does not invalidate.

    ``fixed_embedder`` is the embedder of a store over the user's own vectors (the embedder
    controls then do nothing). ``store``: the user's store the scenario was read from
    (:meth:`Scenario.from_store`); its records and vectors are then used as they are, under
    the scenario's store options (:meth:`FakeVectorStore.with_options`), not written and
    embedded again. ``phases`` holds the milliseconds of the last computation by phase (for
    the benchmarks); ``on_phase``, when set, is told each phase as it starts (on the main
    thread only: the app's busy indicator shows it).
    """

    def __init__(
        self,
        fixed_embedder: Any = None,
        coords: np.ndarray | None = None,
        *,
        store: FakeVectorStore | None = None,
    ) -> None:
        self.fixed_embedder = fixed_embedder
        self.user_coords = coords  # (n, 2) given by the user, aligned with the records
        self._given = store
        self.phases: dict[str, float] = {}
        self.on_phase: Callable[[str], None] | None = None
        self._stores = LRU()
        self._origin: tuple[FakeVectorStore, StoreRows] | None = None
        self._origin_key: str | None = None  # the embedder key of the origin's vectors
        self._hashing: dict[str, str] = {}  # model + dimension + declaration -> store key
        self._projectors = LRU()
        self._traces = LRU()
        self._labels = LRU()
        self._coords = LRU()
        self._anchors = LRU()
        self._hover: Any = None
        self._option_stores = LRU()  # (embedder key, store options) -> store over the rows

    def timed(self, phase: str, make: Callable[[], Any]) -> Any:
        """``make()``, its milliseconds added to ``self.phases[phase]`` (for the benchmarks)."""
        if self.on_phase is not None and threading.current_thread() is threading.main_thread():
            self.on_phase(phase)
        start = time.perf_counter()
        try:
            return make()
        finally:
            ms = (time.perf_counter() - start) * 1000
            self.phases[phase] = self.phases.get(phase, 0.0) + ms

    def views(
        self, s: Scenario, n_components: int = 2, color_by: str = "cluster", method: str = "pca"
    ) -> Views:
        """Every view of ``s`` (on one BLAS thread: small products only lose to threads),
        projected with ``method`` ("pca" or "umap")."""
        check_projection(method)
        with one_blas_thread():
            return self._views(s, n_components, color_by, method)

    def _views(self, s: Scenario, n_components: int, color_by: str, method: str) -> Views:
        key = self._embedder_key(s)
        # A new embedder setting embeds every document: the one cost a first visit cannot skip.
        base, rows = self.timed("embed", lambda: self._base_store(s))
        if self._hover is None or len(self._hover) != len(rows.ids):
            # Hover texts need no vectors: a lazy one must not keep this store's alive.
            bare = replace(rows, vectors=np.zeros((0, rows.vectors.shape[1]), np.float32))
            self._hover = hover_labels(bare, lazy_from=HOVER_TEXT_UP_TO + 1)
        stores = {m: self._store_with(key, base, s, m) for m in ("pre", "post")}
        # A trace is that of a store (the embedding and the store controls' options) and a
        # query (the query controls'): keyed by both, as the table of controls lists them.
        asked = json_text(query_values(s), sort_keys=True)

        def traced(m: str) -> QueryTrace:
            found: QueryTrace = self._traces.get_or(
                (key, json_text(store_options(s, m), sort_keys=True), asked),
                lambda: trace_query(stores[m], s.query, s.k, s.where, rows=rows),
            )
            return found

        # One three-component fit serves both views: PCA components are nested. A new fit
        # (BLAS, on one thread, without the GIL) runs on a second thread beside the traces.
        def both_traces() -> dict[str, QueryTrace]:
            return {m: self.timed("trace", partial(traced, m)) for m in ("pre", "post")}

        fitted: Projector | None = None
        placed: np.ndarray | None = None  # the layout, projected beside the traces
        coords_key = (key, n_components, method)
        own_layout = self.user_coords is None or n_components != 2

        def fit_and_place() -> tuple[Projector, np.ndarray | None]:
            # The documents' coordinates too (one more pass over the vectors, also BLAS
            # without the GIL), when this layout is not cached: the same product as
            # layout() below would take on this thread after the traces.
            fit = fit_projector(rows.vectors, 3)
            if own_layout and coords_key not in self._coords:
                return fit, fit.head(n_components).transform(rows.vectors)
            return fit, None

        if method == "pca" and key not in self._projectors:
            (fitted, placed), traces = beside(fit_and_place, both_traces)
        else:
            traces = both_traces()
        trace = traces[s.filter_mode]
        projector: Projector | None = (
            self.timed(
                "pca",
                lambda: self._projectors.get_or(
                    key, lambda: fitted if fitted is not None else fit_projector(rows.vectors, 3)
                ),
            ).head(n_components)
            if method == "pca"
            else None
        )

        def layout() -> np.ndarray:
            if self.user_coords is not None and n_components == 2:
                # The user's layout replaces this one (_user_projection): fit nothing for it.
                return np.asarray(self.user_coords, dtype=np.float64)
            # Read-only: every view of this layout shares it (and what is kept for it).
            if placed is not None:
                return _frozen(placed)
            if projector is not None:
                return _frozen(projector.transform(rows.vectors))
            coords: np.ndarray = self.timed("umap", lambda: umap_coords(rows.vectors, n_components))
            return _frozen(coords)

        projection = self.timed(
            "project",
            lambda: project(
                stores[s.filter_mode],
                s.query,
                s.k,
                s.where,
                rows=rows,
                projector=projector,
                hover=self._hover,
                trace=trace,
                n_components=n_components,
                color_by=color_by,
                projection=method,
                # Cluster membership and metadata do not change with the model, the dimension
                # or the spread: one labelling serves every embedder setting.
                labels=None
                if color_by == "stage"
                else self._labels.get_or(
                    self._labels_key(s, color_by), lambda: _frozen(categories(base, rows, color_by))
                ),
                coords=self._coords.get_or(coords_key, layout),
            ),
        )
        if self.user_coords is not None and n_components == 2:
            projection = self._user_projection(projection)
        anchors = None
        if s.clusters and self.fixed_embedder is None:
            anchors = self.timed(
                "anchors",
                lambda: self._anchors.get_or(
                    anchors_key(s),
                    lambda: AnchorsDisplay(
                        anchor_geometry(
                            s.clusters,
                            texts=self._anchor_texts(s, rows),
                            model_name=s.model_name,
                            cluster_spread=s.cluster_spread,
                            cluster_match=s.cluster_match,
                            max_members=ANCHOR_MEMBERS,
                        )
                    ),
                ),
            )
        return Views(
            s, base, rows, stores, traces, projection, anchors, n_components, color_by, method
        )

    def _store_with(self, key: str, base: FakeVectorStore, s: Scenario, mode: str) -> Any:
        """``base`` under ``s``'s store options and filter ``mode``, kept while it is recent:
        a store caches its records view, which a trace reads (a k, query or where change
        then pays for no new one)."""
        options = store_options(s, mode)
        return self._option_stores.get_or(
            (key, json.dumps(options, sort_keys=True)), lambda: with_options(base, **options)
        )

    def _user_projection(self, p: Projection) -> Projection:
        """``p`` drawn on the user's own 2-D coordinates: they place no query and no anchor,
        so the query is drawn at the centroid of its top-k (of the k best scores when
        nothing is returned) and the anchors are left out."""
        coords = np.asarray(self.user_coords, dtype=np.float64)
        t = p.trace
        top = np.flatnonzero(t.rank)
        if not top.size:
            finite = np.flatnonzero(np.isfinite(t.score))
            order = np.argsort(-t.score[finite] if t.higher_is_better else t.score[finite])
            top = finite[order[: t.k]]
        query = coords[top].mean(axis=0) if top.size else np.zeros(2)
        return replace(
            p,
            coords=coords,
            query=query,
            anchor_names=[],
            anchors=np.zeros((0, 2)),
            explained=np.zeros(2),
            method="your coordinates",
        )

    def filter_modes(self, views: Views) -> FilterModesDisplay:
        """The pre- versus post-filter tables of ``views``."""
        s = views.scenario
        out: FilterModesDisplay = self.timed(
            "tables",
            lambda: FilterModesDisplay.from_stores(
                views.stores, s.query, s.k, s.where, rows=views.rows, traces=views.traces
            ),
        )
        return out

    def _embedder_key(self, s: Scenario) -> str:
        if self.fixed_embedder is not None:
            return "fixed"
        return json.dumps(s.embedder_options, sort_keys=True, ensure_ascii=False)

    def _base_store(self, s: Scenario) -> tuple[FakeVectorStore, StoreRows]:
        """The scenario's documents in a store (and its rows) under ``s``'s embedder options.

        The first store is written record by record; a later embedder setting re-embeds the
        same records (:func:`reembedded`): the documents do not change with the embedder.
        A setting that differs from one already built only in ``cluster_spread`` re-embeds
        just the cluster members: every other text keeps its hashed vector.
        """

        def build() -> tuple[FakeVectorStore, StoreRows]:
            if self._stores.evict_first:
                self._option_stores.clear()  # they hold the vectors of a store let go of
            embedder = self.fixed_embedder or s.embedder()
            plain = plain_store_options()  # twinned under the controls' options
            if self._origin is None:
                if self._given is not None:
                    # The user's records as they are: no second copy, no re-embedding.
                    store = with_options(self._given, **plain)
                    self._given = None
                else:
                    store = s.store(embedder=embedder, **plain)
                self._origin, self._origin_key = (store, store_rows(store)), key
                return self._origin
            if key == self._origin_key:  # let go of by the cache, kept as the origin
                return self._origin
            origin, rows = self._origin
            latest = self._hashing.get(self._hashing_key(s))
            hashing = self._stores.get(latest)
            if hashing is None and latest is not None and latest == self._origin_key:
                hashing = self._origin  # a large store keeps only its newest: that one
            if hashing is not None:
                keep = self._membership(s, rows) == UNCLUSTERED
                same = [rows.ids[i] for i in np.flatnonzero(keep).tolist()]
                built = reembedded(origin, embedder, reuse=(hashing[0], same))
            else:
                built = reembedded(origin, embedder)
            if self._stores.evict_first:
                # A large store: the newest one is the source of the next (the same
                # records), so the first one's vectors are not kept beside it.
                self._origin, self._origin_key = built, key
            return built

        key = self._embedder_key(s)
        if len(s.documents) >= _LARGE_STORE:
            self._stores.capacity = self._projectors.capacity = _LARGE_CACHE
            self._option_stores.capacity = 2 * _LARGE_CACHE  # pre and post of each
            self._stores.evict_first = True
        built: tuple[FakeVectorStore, StoreRows] = self._stores.get_or(key, build)
        if self.fixed_embedder is None:
            # The latest setting of this model, dimension and declaration (spreads aside),
            # by key: a store the cache has let go of is not kept alive from here.
            self._hashing[self._hashing_key(s)] = key
            while len(self._hashing) > _CACHE:
                del self._hashing[next(iter(self._hashing))]
        return built

    def embeds_anew(self, s: Scenario) -> bool:
        """Whether ``s`` needs a new embedding of a large store (one not cached): the caller
        should then let go of the views it holds first, so that the store they draw is not
        kept alive beside the one being embedded (at 100,000 x 256 each is 100 MB)."""
        return len(s.documents) >= _LARGE_STORE and self.embeds(s)

    def embeds(self, s: Scenario) -> bool:
        """Whether drawing ``s`` embeds its documents (no store is cached for its embedder
        settings): what the app's busy note says before it starts."""
        key = self._embedder_key(s)
        return self.fixed_embedder is None and key not in self._stores and key != self._origin_key

    def _hashing_key(self, s: Scenario) -> str:
        return json.dumps(
            [s.model_name, s.dimensions, s.clusters, s.cluster_match], ensure_ascii=False
        )

    def _membership(self, s: Scenario, rows: StoreRows) -> np.ndarray:
        """Each document's cluster (or UNCLUSTERED) under ``s``'s declaration: the colour-by-
        cluster labels, which do not depend on the model, dimension or spread."""
        labels: np.ndarray = self._labels.get_or(
            self._labels_key(s, "cluster"),
            lambda: _frozen(categories(self._origin[0], rows, "cluster")),  # type: ignore[index]
        )
        return labels

    def _labels_key(self, s: Scenario, color_by: str) -> tuple[str, str]:
        if self.fixed_embedder is not None:
            return ("fixed", color_by)
        return (json.dumps([s.clusters, s.cluster_match], ensure_ascii=False), color_by)

    def _anchor_texts(self, s: Scenario, rows: StoreRows) -> list[str]:
        """The documents the anchors view shows: the first members of each cluster (worked
        out once per declaration, as the labels are)."""

        def pick() -> list[str]:
            labels = self._membership(s, rows)
            names = set(labels.tolist()) - {UNCLUSTERED}
            first = [np.flatnonzero(labels == name)[:ANCHOR_MEMBERS] for name in names]
            chosen = np.sort(np.concatenate(first)) if first else np.zeros(0, dtype=np.intp)
            return [rows.texts[i] for i in chosen.tolist()]  # in the documents' order

        texts: list[str] = self._labels.get_or(
            (*self._labels_key(s, "cluster"), "anchor texts"), pick
        )
        return texts
