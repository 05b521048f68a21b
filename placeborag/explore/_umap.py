"""UMAP, the explorer's optional projection: seeded from the vectors, cached by their digest.

PCA (:func:`placeborag.explore.fit_projector`) stays the default and is exact arithmetic on
one thread. UMAP needs the ``umap`` extra (umap-learn, which brings numba and pynndescent),
imported only when a UMAP layout is asked for. Its ``random_state`` comes from a SHA-256 of
the vectors, so the same vectors give the same picture on one machine; a layout is kept in a
cache bounded in bytes, keyed by that digest and the parameters, so a control that does not
change the vectors (the query, ``k``, the filter, the colours) never refits it. The cache is
shared by every thread (two apps, a report rendered beside a notebook) and takes a lock; a fit
runs outside it, so one thread's fit never holds up another's cached layout.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
import warnings
from collections import OrderedDict
from types import ModuleType
from typing import Any

import numpy as np

from placeborag import MissingExtra, PlaceboragValueError
from placeborag.toolkit import shown

__all__ = [
    "PROJECTIONS",
    "UMAP_HINT",
    "check_projection",
    "place",
    "require_umap",
    "umap_coords",
    "umap_seed",
    "vectors_digest",
]

PROJECTIONS = ("pca", "umap")
UMAP_HINT = "pip install 'placeborag[umap]'"
N_NEIGHBORS = 15
MIN_DIST = 0.1
METRIC = "cosine"
MIN_DOCUMENTS = 4  # in 2-D (one more in 3-D): fewer leave UMAP's spectral start no room
MAX_DOCUMENTS = 50_000  # UMAP fits every row: past this, minutes per embedder setting
PLACE_NEIGHBOURS = 5  # the query and the anchors sit at the mean of this many nearest rows
CACHE_BYTES = 64 * 2**20  # layouts kept across stores and apps, by the bytes of their coords

_CACHE: OrderedDict[bytes, np.ndarray] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def check_projection(projection: object) -> str:
    """``projection`` if it names a projection, else a PlaceboragValueError naming the choices."""
    if not isinstance(projection, str) or projection not in PROJECTIONS:
        raise PlaceboragValueError(
            f"projection={shown(projection)} must be one of {', '.join(map(repr, PROJECTIONS))}"
        )
    return projection


def vectors_digest(vectors: np.ndarray) -> bytes:
    """SHA-256 of the rows as float32 (the precision UMAP works in), their shape included."""
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    h = hashlib.sha256(f"float32 {x.shape}".encode())
    h.update(x.data)
    return h.digest()


def umap_seed(digest: bytes) -> int:
    """The ``random_state`` for vectors of this digest: 32 bits of a SHA-256, never ``hash()``."""
    return int.from_bytes(hashlib.sha256(b"placeborag umap seed\0" + digest).digest()[:4], "big")


def require_umap() -> ModuleType:
    """umap-learn, or a :class:`MissingExtra` that names the extra to install."""
    try:
        return importlib.import_module("umap")
    except ImportError as exc:
        raise MissingExtra(
            f"projection='umap' needs umap-learn, which is not installed; {UMAP_HINT}"
        ) from exc


def umap_coords(
    vectors: np.ndarray,
    n_components: int = 2,
    *,
    n_neighbors: int = N_NEIGHBORS,
    min_dist: float = MIN_DIST,
    n_epochs: int | None = None,
) -> np.ndarray:
    """UMAP coordinates (read-only float64, ``(n, n_components)``) of ``vectors`` (rows).

    Seeded by :func:`umap_seed` of the vectors' digest; a layout already made for the same
    bytes and parameters comes from the cache, not from a new fit.
    """
    if n_components not in (2, 3):
        raise PlaceboragValueError(f"n_components={shown(n_components)} must be 2 or 3")
    x = np.asarray(vectors)
    if x.ndim != 2:
        raise PlaceboragValueError(f"vectors of shape {x.shape} must be one row per document")
    n = x.shape[0]
    least = MIN_DOCUMENTS + n_components - 2
    if not least <= n <= MAX_DOCUMENTS:
        raise PlaceboragValueError(
            f"projection='umap' needs {least} to {MAX_DOCUMENTS:,} documents in "
            f"{n_components}-D, got {n:,}; use projection='pca'"
        )
    require_umap()  # a missing extra says so before any work
    digest = vectors_digest(x)
    params = {
        "n_components": n_components,
        "n_neighbors": min(n_neighbors, n - 1),
        "min_dist": min_dist,
        "n_epochs": n_epochs,
        "metric": METRIC,
        "random_state": umap_seed(digest),
    }
    key = hashlib.sha256(digest + json.dumps(params, sort_keys=True).encode()).digest()
    with _CACHE_LOCK:
        cached = _CACHE.get(key)
        if cached is not None:
            _CACHE.move_to_end(key)
            return cached
    coords = np.array(_fit(np.asarray(x, dtype=np.float32), params), dtype=np.float64)
    coords.flags.writeable = False
    with _CACHE_LOCK:
        # Two threads fitting the same vectors get the same bits (the seed is the digest's);
        # the first layout stored is the one every later call gets.
        coords = _CACHE.setdefault(key, coords)
        _CACHE.move_to_end(key)
        while _CACHE and sum(c.nbytes for c in _CACHE.values()) > CACHE_BYTES:
            _CACHE.popitem(last=False)  # a layout larger than the whole budget is not kept
    return coords


def _fit(x: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """One UMAP fit. ``n_jobs=1``: with a ``random_state`` umap-learn runs its layout on one
    thread in a fixed order; saying so keeps it from warning that it overrides the count."""
    reducer = require_umap().UMAP(**params, n_jobs=1, low_memory=True, verbose=False)
    with warnings.catch_warnings():
        # Tiny inputs: the spectral start falls back to a random one (seeded, still), and
        # says so through scipy and umap-learn.
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        out: np.ndarray = reducer.fit_transform(x)
    return out


def place(points: np.ndarray, vectors: np.ndarray, coords: np.ndarray) -> np.ndarray:
    """Where vectors that are not rows (the query, the cluster anchors) go in a layout of the
    rows: at the mean position of their :data:`PLACE_NEIGHBOURS` nearest rows by cosine
    (equal cosines by row order), as UMAP starts a new point before it moves it."""
    p = np.atleast_2d(np.asarray(points, dtype=np.float64))
    if not p.shape[0]:
        return np.zeros((0, coords.shape[1]))
    norms = np.linalg.norm(vectors, axis=1).astype(np.float64)
    norms[norms == 0] = 1.0
    m = min(PLACE_NEIGHBOURS, len(vectors))
    out = np.empty((p.shape[0], coords.shape[1]))
    for i, v in enumerate(p):
        cos = (vectors @ v.astype(vectors.dtype)).astype(np.float64) / norms
        near = np.lexsort((np.arange(len(cos)), -cos))[:m]
        out[i] = coords[near].mean(axis=0)
    return out
