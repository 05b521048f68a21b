"""The density layer drawn under many points: a numpy 2-D histogram as a heatmap trace."""

from __future__ import annotations

from typing import Any

import numpy as np


def density_trace(
    x: np.ndarray, y: np.ndarray, bins: tuple[int, int], y_range: tuple[float, float] | None = None
) -> dict[str, Any]:
    """A heatmap of how many documents fall in each cell (a numpy 2-D histogram), drawn under
    the points: empty cells transparent, fuller ones darker (log of the count).

    x, y and z (the grid, float32, NaN for an empty cell, rounded to 3 decimals) are numpy
    arrays: binary buffers for the app's widget, and a typed array or a list as the plotly
    in use writes a ``go.Figure``. Not x, y and z as three columns: the front end then
    answers every redraw with its own gridded x and y (over 1 MB at 160 x 120 cells).
    """
    finite = np.isfinite(x) & np.isfinite(y)
    x, y = x[finite], y[finite]
    if not x.size:
        x = y = np.zeros(1)
    x_range = [float(x.min()), float(x.max()) + (0.0 if x.max() > x.min() else 1.0)]
    if y_range is None:
        y_range = (float(y.min()), float(y.max()) + (0.0 if y.max() > y.min() else 1.0))
    counts, xe, ye = histogram2d(x, y, bins, (x_range[0], x_range[1]), y_range)
    cx, cy = (xe[:-1] + xe[1:]) / 2, (ye[:-1] + ye[1:]) / 2
    z = np.round(np.log1p(counts.T), 3).astype("<f4")  # rows are y
    z[counts.T == 0] = np.nan
    return {
        "type": "heatmap",
        "name": "density",
        "x": np.ascontiguousarray(cx, dtype=np.float32),
        "y": np.ascontiguousarray(cy, dtype=np.float32),
        "z": z,
        "zmin": 0.0,
        "colorscale": [[0.0, "rgba(60,60,110,0.06)"], [1.0, "rgba(40,40,90,0.4)"]],
        "showscale": False,
        "hoverinfo": "skip",
        "showlegend": True,
    }


def histogram2d(
    x: np.ndarray,
    y: np.ndarray,
    bins: tuple[int, int],
    x_range: tuple[float, float],
    y_range: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.histogram2d(x, y, bins, range=[x_range, y_range])``, the same counts and edges,
    with each bin index computed from the uniform edges (then corrected at the edges by one
    comparison) instead of numpy's binary search over them: 1,000,000 points in ~30 ms."""
    ix, x_in, xe = _uniform_bins(x, bins[0], x_range)
    iy, y_in, ye = _uniform_bins(y, bins[1], y_range)
    inside = x_in & y_in
    flat = ix[inside] * bins[1] + iy[inside]
    counts = np.bincount(flat, minlength=bins[0] * bins[1]).reshape(bins).astype(np.float64)
    return counts, xe, ye


def _uniform_bins(
    v: np.ndarray, n: int, bounds: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's bin among ``n`` equal bins over ``bounds`` (numpy's rule: a bin holds
    its left edge, the last one its right edge too), whether it is inside, and the edges."""
    lo, hi = bounds
    edges = np.linspace(lo, hi, n + 1)
    v = np.asarray(v, dtype=np.float64)
    inside = (v >= lo) & (v <= hi)
    clipped = np.clip(v, lo, hi)
    index = np.clip(((clipped - lo) * (n / (hi - lo))).astype(np.intp), 0, n - 1)
    # The product may round across an edge: one comparison each way puts it right.
    index -= clipped < edges[index]
    index += (clipped >= edges[index + 1]) & (index < n - 1)
    return index, inside, edges
