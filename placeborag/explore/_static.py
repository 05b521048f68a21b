"""A static picture of the projection: an inline SVG drawn with numpy, no plotly, no network.

The app's static snapshot (what nbconvert, GitHub and front ends without widgets show) carries
it, so a saved notebook shows where the documents, the query and the top-k lie even where no
widget runs. Past a few thousand documents it draws every m-th one (a fixed stride) and
every top-k document; every label is escaped.
"""

from __future__ import annotations

import html

import numpy as np

from placeborag.explore._compute import Projection
from placeborag.explore._figures import PALETTE

__all__ = ["projection_svg"]

MAX_DOTS = 3000
_W, _H, _PAD = 640, 400, 24
_QUERY, _TOP = "#111111", "#D55E00"


def projection_svg(p: Projection) -> str:
    """The 2-D projection (the first two axes of a 3-D one) as an ``<svg>`` element."""
    coords = np.asarray(p.coords, dtype=np.float64)[:, :2]
    query = np.asarray(p.query, dtype=np.float64)[:2]
    n = len(coords)
    top = np.flatnonzero(np.asarray(p.trace.rank) > 0)
    drawn = np.arange(0, n, max(1, -(-n // MAX_DOTS)))
    every = np.vstack([coords, query[None, :]]) if n else query[None, :]
    low, high = every.min(axis=0), every.max(axis=0)
    span = np.where(high > low, high - low, 1.0)
    scale = min((_W - 2 * _PAD) / span[0], (_H - 2 * _PAD) / span[1])

    def xy(points: np.ndarray) -> np.ndarray:
        out = (points - low) * scale + _PAD
        out[:, 1] = _H - out[:, 1]  # up is up
        rounded: np.ndarray = np.round(out, 1)
        return rounded

    colour = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(p.label_order)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" class="placeborag-static-projection">',
        f"<title>{html.escape(f'Projection ({p.method}) of {n} documents')}</title>",
        f'<rect width="{_W}" height="{_H}" fill="#ffffff" stroke="#dddddd"/>',
    ]
    labels = np.asarray(p.labels)
    for (x, y), label in zip(xy(coords[drawn]).tolist(), labels[drawn].tolist()):
        fill = colour.get(str(label), "#999999")
        parts.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{fill}" fill-opacity="0.5"/>')
    for (x, y), rank in zip(xy(coords[top]).tolist(), np.asarray(p.trace.rank)[top].tolist()):
        parts.append(
            f'<circle cx="{x}" cy="{y}" r="6" fill="none" stroke="{_TOP}" stroke-width="2"/>'
            f'<text x="{x + 8}" y="{y - 6}" font-size="11" fill="{_TOP}">{int(rank)}</text>'
        )
    (qx, qy) = xy(query[None, :])[0].tolist()
    parts.append(
        f'<path d="M{qx} {qy - 8}L{qx + 2.4} {qy - 2.4}L{qx + 8} {qy}L{qx + 2.4} {qy + 2.4}'
        f'L{qx} {qy + 8}L{qx - 2.4} {qy + 2.4}L{qx - 8} {qy}L{qx - 2.4} {qy - 2.4}Z" '
        f'fill="{_QUERY}"/>'
    )
    legend = "".join(
        f'<text x="{_W - _PAD}" y="{_PAD + 14 * i}" font-size="11" text-anchor="end" '
        f'fill="{c}">{html.escape(str(label))}</text>'
        for i, (label, c) in enumerate(list(colour.items())[:12])
    )
    parts.append(legend)
    parts.append("</svg>")
    return "".join(parts)
