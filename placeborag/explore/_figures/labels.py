"""Label geometry in pixels, as pure functions of arrays (no plotly): where the projection's
rank numbers and anchor names go, and where the ranking's rank labels go so that none covers
another, a marker, a leader line, the cut or a break at any plot size the figure is drawn in.

The annotations returned are plain dicts in plotly's vocabulary, numbers and escaped text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from placeborag.explore._compute import (
    plotly_text,
)


def rank_labels(points: np.ndarray, ranks: np.ndarray) -> list[dict[str, Any]]:
    """One arrowed label per top-k point, fanned out over the upper half-circle.

    Rank 1 points up and to the right, rank k up and to the left, and every other label sits
    further out, so the labels of points that (nearly) coincide do not cover each other, nor
    the anchor names written below the anchors.
    """
    k = len(ranks)
    if not k:
        return []
    angles = np.radians(np.linspace(20.0, 160.0, k) if k > 1 else np.array([70.0]))
    out = []
    for slot, angle in enumerate(angles):
        i = slot
        radius = 38.0 + (14.0 if slot % 2 else 0.0) + 2.0 * k
        out.append(
            {
                "x": float(points[i, 0]),
                "y": float(points[i, 1]),
                "xref": "x",
                "yref": "y",
                "text": f"<b>{int(ranks[i])}</b>",
                "showarrow": True,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#555555",
                "standoff": 8,
                "ax": float(radius * np.cos(angle)),
                "ay": float(-radius * np.sin(angle)),
                "font": {"size": 12, "color": "#111111"},
                "bgcolor": "rgba(255,255,255,0.85)",
                "bordercolor": "#111111",
                "borderwidth": 1,
                "borderpad": 1,
            }
        )
    return out


# Where a 3-D rank label's box may go, nearest first: rings of these radii in pixels around
# its point, each from up-right round to up-left. Boxes are kept this many pixels apart, so
# the labels of points up to that far apart on screen do not touch either.
_FAN_RINGS = (44.0, 68.0, 92.0, 116.0, 140.0)
_FAN_ANGLES = tuple(np.radians(np.arange(15.0, 166.0, 7.5)).tolist())
_FAN_SLACK = 12.0


def fan_offsets(texts: Sequence[str]) -> list[tuple[float, float]]:
    """Leader-line offsets (ax, ay: pixels, y down) for labels of ``texts`` in order, laid out
    as if their points coincided: each label's box (bold 12 px text with its border) goes at
    the first place on :data:`_FAN_RINGS`, above its point, at least :data:`_FAN_SLACK`
    pixels clear of every box placed before it (the last ring takes what is left)."""
    placed: list[tuple[float, float, float, float]] = []
    out: list[tuple[float, float]] = []
    for text in texts:
        w = _CHAR_PX * len(text) + 8.0
        spot = None
        for radius in _FAN_RINGS:
            for angle in _FAN_ANGLES:
                x, y = radius * float(np.cos(angle)), -radius * float(np.sin(angle))
                box = (x - w / 2, y - _RANK_BOX_H / 2, x + w / 2, y + _RANK_BOX_H / 2)
                if all(_apart_by(box, other, _FAN_SLACK) for other in placed):
                    spot = (x, y, box)
                    break
            if spot is not None:
                break
        if spot is None:  # more labels than the rings hold: the outermost ring, in turn
            angle = _FAN_ANGLES[len(out) % len(_FAN_ANGLES)]
            x, y = _FAN_RINGS[-1] * float(np.cos(angle)), -_FAN_RINGS[-1] * float(np.sin(angle))
            spot = (x, y, (x - w / 2, y - _RANK_BOX_H / 2, x + w / 2, y + _RANK_BOX_H / 2))
        placed.append(spot[2])
        out.append((spot[0], spot[1]))
    return out


_RANK_BOX_H = 20.0  # a 3-D rank label's box: 12 px bold text, its border and padding


def _apart_by(a: tuple[float, ...], b: tuple[float, ...], gap: float) -> bool:
    return a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]


# The smallest plot area a 2-D projection is drawn in (a notebook-width figure beside its
# legend), in pixels: label boxes are laid out at this scale, where they are largest against
# the data (a wider figure only spaces them further apart).
_LABEL_PLOT = (400.0, 360.0)
_CHAR_PX, _LABEL_H, _LABEL_GAP = 7.5, 18.0, 4.0


def anchor_labels(
    anchors: np.ndarray,
    names: Sequence[str],
    coords: np.ndarray,
    query: np.ndarray,
    ranks: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """One label per cluster anchor, beside it and never over another label or past the plot.

    Each label goes towards the middle of the picture first (an anchor at the right edge is
    labelled on its left): below the anchor, above it, level with it, then further out; then
    on the other side. The boxes are laid out at the smallest plot the figure is drawn in,
    against the rank labels and their rings, the query star and the anchors' own markers, and
    must stay inside the points' range with plotly's 5% padding. A label placed more than
    :data:`_LABEL_NEAR` pixels from its diamond gets a leader line to it. A name with no free
    place is left out (its anchor's hover still names it).
    """
    anchors = np.asarray(anchors, dtype=np.float64)[:, :2]
    every = np.vstack([coords[:, :2], anchors, np.atleast_2d(query)[:, :2]])
    # Column by column: numpy reduces an (n, 2) array along its long axis ten times slower.
    xs, ys = every[:, 0], every[:, 1]
    finite = np.isfinite(xs) & np.isfinite(ys)
    if not finite.any():
        return []
    if not finite.all():
        xs, ys = xs[finite], ys[finite]
    low = np.array([xs.min(), ys.min()])
    high = np.array([xs.max(), ys.max()])
    span = np.maximum(high - low, 1e-12)
    scale = min(_LABEL_PLOT[0] / span[0], _LABEL_PLOT[1] / span[1])
    pad = 0.04 * span * scale  # a little less than the 5% plotly adds to each side

    def px(point: Any) -> tuple[float, float]:
        return float((point[0] - low[0]) * scale), float((point[1] - low[1]) * scale)

    # Boxes (x0, y0, x1, y1) in pixels, y up: the star, the anchor markers, the rank labels
    # and the rings of the points they label.
    taken = [_box_around(*px(q), 18.0, 18.0) for q in np.atleast_2d(query)[:, :2]]
    taken += [_box_around(*px(a), 14.0, 14.0) for a in anchors]
    for r in ranks:
        x, y = px((r["x"], r["y"]))
        taken += [_box_around(x, y, 16.0, 16.0), _box_around(x + r["ax"], y - r["ay"], 22.0, 18.0)]
    bounds = (-pad[0], -pad[1], span[0] * scale + pad[0], span[1] * scale + pad[1])
    centre = (low[0] + high[0]) / 2
    out = []
    for anchor, name in zip(anchors, names):
        if not np.isfinite(anchor).all():
            continue
        w = _CHAR_PX * len(str(name)) + 8.0
        x, y = px(anchor)
        inward = -1.0 if anchor[0] > centre else 1.0
        for side in (inward, -inward):
            for dx, dy, level in _LABEL_SPOTS:
                x0 = x + side * dx - (w if side < 0 else 0.0)
                y0 = y + dy - {"top": _LABEL_H, "middle": _LABEL_H / 2, "bottom": 0.0}[level]
                box = (x0, y0, x0 + w, y0 + _LABEL_H)
                inside = (
                    box[0] >= bounds[0]
                    and box[1] >= bounds[1]
                    and box[2] <= bounds[2]
                    and box[3] <= bounds[3]
                )
                if inside and not any(_overlap(box, other) for other in taken):
                    break
            else:
                continue
            break
        else:
            continue  # no free place: left out
        taken.append(box)
        label = {
            "x": float(anchor[0]),
            "y": float(anchor[1]),
            "xref": "x",
            "yref": "y",
            "text": plotly_text(str(name)),
            "showarrow": False,
            "xanchor": "left" if side > 0 else "right",
            "yanchor": level,
            "xshift": side * dx,
            "yshift": dy,
            "font": {"size": 12, "color": "#333333"},
            "bgcolor": "rgba(255,255,255,0.8)",
            "borderpad": 1,
        }
        if _gap_to(box, x, y) > _LABEL_NEAR:
            # Moved away from its diamond: a leader line from the label to it (plotly puts
            # the label's anchor point at the line's tail, ax/ay pixels from the diamond).
            del label["xshift"], label["yshift"]
            label |= {
                "showarrow": True,
                "ax": side * dx,
                "ay": -dy,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 6,
            }
        out.append(label)
    return out


_LABEL_NEAR = 16.0  # pixels between a label and its diamond read as beside it, no line


def _gap_to(box: tuple[float, float, float, float], x: float, y: float) -> float:
    """The distance in pixels from the point (x, y) to the nearest edge of ``box``."""
    dx = max(box[0] - x, 0.0, x - box[2])
    dy = max(box[1] - y, 0.0, y - box[3])
    return float(np.hypot(dx, dy))


# Where an anchor's label may go, nearest first: pixels towards the label's side, pixels up,
# and the edge of the label at that height (top: the label hangs below).
_LABEL_SPOTS = (
    (10.0, -9.0, "top"),
    (10.0, 9.0, "bottom"),
    (14.0, 0.0, "middle"),
    (10.0, -26.0, "top"),
    (10.0, 26.0, "bottom"),
    (32.0, 0.0, "middle"),
    (30.0, -12.0, "top"),
    (30.0, 12.0, "bottom"),
    (52.0, 0.0, "middle"),
    (10.0, -44.0, "top"),
    (10.0, 44.0, "bottom"),
    (52.0, -20.0, "top"),
    (52.0, 20.0, "bottom"),
    (76.0, 0.0, "middle"),
    (76.0, -20.0, "top"),
    (76.0, 20.0, "bottom"),
    (100.0, 0.0, "middle"),
)


def _box_around(x: float, y: float, w: float, h: float) -> tuple[float, float, float, float]:
    return (x - w / 2, y - h / 2, x + w / 2, y + h / 2)


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    g = _LABEL_GAP
    return a[0] < b[2] + g and b[0] < a[2] + g and a[1] < b[3] + g and b[1] < a[3] + g


_LABEL_ALL_UP_TO = 15  # past this many ranks, only some are written on the plot


def rank_label_mask(rank: np.ndarray, cut_rank: np.ndarray, k: int) -> np.ndarray:
    """Which ranked points get a written label: all of them up to 15 ranks; past that the
    first five, every fifth and the last (the others keep their rank in the hover text)."""
    r = np.where(rank > 0, rank, cut_rank)
    if k <= _LABEL_ALL_UP_TO:
        return r > 0
    last = int(r.max()) if r.size else 0
    out: np.ndarray = (r > 0) & ((r <= 5) | (r % 5 == 0) | (r == last))
    return out


# The plot areas the ranking is drawn in, in pixels (its height is fixed): from JupyterLab at
# 1,000 px beside its legend to a wide screen. Rank labels are laid out to be clear at each.
_RANK_PLOT_H = 290
_RANK_PLOTS = tuple((w, float(_RANK_PLOT_H)) for w in (300.0, 520.0, 900.0, 1400.0))
_MARKER_BOX, _RANK_H = 14.0, 16.0


def ranking_x_range(position: np.ndarray, higher_is_better: bool) -> list[float]:
    """The ranking's x range, set rather than left to plotly's autorange (which pads by the
    markers' size) so the rank labels can be laid out in pixels: every point with 5% to
    spare on the worse side and 12% on the better (right) one, room for the labels of the
    best documents (or of ties on the cut line), better to the right."""
    xs = np.asarray(position, dtype=np.float64)
    xs = xs[np.isfinite(xs)]
    lo, hi = (float(xs.min()), float(xs.max())) if xs.size else (0.0, 1.0)
    span = (hi - lo) or 1.0
    if higher_is_better:
        return [lo - 0.05 * span, hi + 0.12 * span]
    return [hi + 0.05 * span, lo - 0.12 * span]


def rank_box(label: dict[str, Any], to_px: Any) -> tuple[float, float, float, float]:
    """The pixel box (x0, y0, x1, y1; y up) a rank label annotation covers, at the tail of its
    leader line or shifted off its point."""
    x, y = to_px(label["x"], label["y"])
    if label.get("showarrow"):
        x, y = x + label["ax"], y - label["ay"]
    else:
        x, y = x + label["xshift"], y + label["yshift"]
    w = _CHAR_PX * len(label["text"]) + 6.0
    return _box_around(x, y, w, _RANK_H)


def ranking_labels(
    x: np.ndarray,
    y: np.ndarray,
    rank: np.ndarray,
    marked: np.ndarray,
    x_range: Sequence[float],
    y_range: Sequence[float],
    bands: Sequence[tuple[float, float]],
    notes: Sequence[dict[str, Any]] = (),
    plots: Sequence[tuple[float, float]] = _RANK_PLOTS,
) -> tuple[list[dict[str, Any]], int]:
    """The written rank numbers (``rank`` > 0 asks for one) as annotations, best rank first,
    each where its box, at every plot size the ranking is drawn in, overlaps no other rank
    label, no ranked marker (``marked``), no cut line or axis break band (``bands``, x
    ranges), no tie note, and stays inside the plot: beside its point, or further out with a
    leader line. A label beside its point (no leader line) is clearly nearer that point than
    any other ranked marker, so it cannot be read as another's; no label covers a leader
    line, and a leader line crosses no other line, label or ranked marker (checked at each
    plot size in ``plots``). A label stays on its point's side of the cut line and of every
    break, so no leader line crosses them and no label reads as the other side's (a point on
    the line itself may be labelled on either side). A rank with no free place is left out;
    the count left out is returned (every rank stays in the hover text)."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    # A label's offset from its point is in pixels, the points' spacing grows with the plot:
    # a place is taken only if it is free at every plot size in ``plots``.
    layouts = [_RankRoom(plot, x_range, y_range, xs, ys, marked, bands, notes) for plot in plots]
    out: list[dict[str, Any]] = []
    left = 0
    chosen = np.flatnonzero(rank > 0)
    for i in chosen[np.argsort(rank[chosen], kind="stable")].tolist():
        text = str(int(rank[i]))
        w = _CHAR_PX * len(text) + 6.0
        for ring, ux, uy in _RANK_SPOTS:
            dx = ux * ring * (_MARKER_BOX / 2 + w / 2 + _LABEL_GAP + 1)
            dy = uy * ring * (_MARKER_BOX / 2 + _RANK_H / 2 + _LABEL_GAP + 1)
            boxes = [room.box(xs[i], ys[i], dx, dy, w) for room in layouts]
            if (
                _free_between(layouts, boxes)
                and all(room.same_side(xs[i], box) for room, box in zip(layouts, boxes))
                and (ring > 1 or all(room.nearest_is(i, box) for room, box in zip(layouts, boxes)))
                and all(room.clear_of_lines(i, box, ring > 1) for room, box in zip(layouts, boxes))
            ):
                break
        else:
            left += 1
            continue
        for room, box in zip(layouts, boxes):
            room.taken.append(box)
            room.labels.append(box)
            if ring > 1:
                room.lines.append((room.point(i), _centre(box)))
        label: dict[str, Any] = {
            "x": float(xs[i]),
            "y": float(ys[i]),
            "xref": "x",
            "yref": "y",
            "text": text,
            "showarrow": False,
            "xanchor": "center",
            "yanchor": "middle",
            "xshift": dx,
            "yshift": dy,
            "font": {"size": 12, "color": "#111111"},
            "bgcolor": "rgba(255,255,255,0.8)",
            "borderpad": 1,
        }
        if ring > 1:  # away from its point: a leader line to it
            del label["xshift"], label["yshift"]
            label |= {
                "showarrow": True,
                "ax": dx,
                "ay": -dy,
                "arrowhead": 0,
                "arrowwidth": 1,
                "arrowcolor": "#777777",
                "standoff": 7,
            }
        out.append(label)
    return out, left


class _RankRoom:
    """The ranking's plot at one size in pixels (y up) and the boxes taken in it: ranked
    markers, the cut line and breaks (full height), tie notes, and the labels placed."""

    def __init__(
        self,
        plot: tuple[float, float],
        x_range: Sequence[float],
        y_range: Sequence[float],
        xs: np.ndarray,
        ys: np.ndarray,
        marked: np.ndarray,
        bands: Sequence[tuple[float, float]],
        notes: Sequence[dict[str, Any]],
    ) -> None:
        self.width, self.height = plot
        (self.x0, self.x1), (self.y0, self.y1) = x_range, y_range
        self.xs, self.ys = xs, ys
        self.marks = {i: self.px(xs[i], ys[i]) for i in np.flatnonzero(marked).tolist()}
        self.labels: list[tuple[float, float, float, float]] = []  # the labels placed
        self.lines: list[tuple[tuple[float, float], tuple[float, float]]] = []  # their leaders
        self.taken = [_box_around(x, y, _MARKER_BOX, _MARKER_BOX) for x, y in self.marks.values()]
        self.bands = [sorted((self.px(a, 0)[0], self.px(b, 0)[0])) for a, b in bands]
        for pa, pb in self.bands:
            self.taken.append((pa - 1.5, -1e9, pb + 1.5, 1e9))
        for note in notes:
            nx = self.px(note["x"], 0)[0] + note.get("xshift", 0)
            top = note["y"] * self.height
            self.taken.append((nx - 6.5 * len(note["text"]), top - 15, nx, top))

    def px(self, vx: float, vy: float) -> tuple[float, float]:
        return (
            (vx - self.x0) / (self.x1 - self.x0) * self.width,
            (vy - self.y0) / (self.y1 - self.y0) * self.height,
        )

    def box(
        self, vx: float, vy: float, dx: float, dy: float, w: float
    ) -> tuple[float, float, float, float]:
        px, py = self.px(vx, vy)
        return _box_around(px + dx, py + dy, w, _RANK_H)

    def same_side(self, vx: float, box: tuple[float, ...]) -> bool:
        """Whether a label ``box`` for the point at data x ``vx`` is on the point's side of
        every band (cut line, axis break): its leader line, from the point to the box, crosses
        none. A point within a marker's half-width of a band (the last document inside the
        cut sits on the cut line) may be labelled on either side: the line starts past the
        band, ``standoff`` pixels from the point."""
        x = self.px(vx, 0)[0]
        for pa, pb in self.bands:
            if pa - _MARKER_BOX / 2 <= x <= pb + _MARKER_BOX / 2:
                continue
            if (x < pa) != (box[2] < pa):
                return False
        return True

    def point(self, i: int) -> tuple[float, float]:
        """Point ``i`` in pixels."""
        return self.px(self.xs[i], self.ys[i])

    def clear_of_lines(self, i: int, box: tuple[float, ...], leader: bool) -> bool:
        """Whether a label ``box`` for ranked point ``i`` covers no leader line placed, and
        (``leader``: it has one, from the point to the box) its line crosses no other line
        and runs through no label placed and no other ranked marker."""
        if any(_segment_hits_box(p, q, box) for p, q in self.lines):
            return False
        if not leader:
            return True
        start, end = self.point(i), _centre(box)
        if any(_segments_cross(start, end, p, q) for p, q in self.lines):
            return False
        if any(_segment_hits_box(start, end, other) for other in self.labels):
            return False
        h = _MARKER_BOX / 2 - 1  # the marker itself, not the room kept around it
        return not any(
            _segment_hits_box(start, end, (x - h, y - h, x + h, y + h))
            for j, (x, y) in self.marks.items()
            if j != i and math.hypot(x - start[0], y - start[1]) >= _MARKER_BOX
        )

    def nearest_is(self, i: int, box: tuple[float, ...]) -> bool:
        """Whether a label ``box`` beside ranked point ``i`` (no leader line) reads as that
        point's: every other ranked marker is at least 1.3 times as far from the box's centre
        as point ``i`` is (a label halfway between two markers reads as either's). Markers
        drawn over point ``i``'s (tied documents on one spot) are not told apart by any
        label; the hover lists them."""
        (cx, cy), (ox, oy) = _centre(box), self.point(i)
        own = 1.3 * math.hypot(cx - ox, cy - oy)
        return all(
            math.hypot(cx - x, cy - y) >= own
            for j, (x, y) in self.marks.items()
            if j != i and math.hypot(x - ox, y - oy) >= _MARKER_BOX
        )

    def inside(self, box: tuple[float, ...]) -> bool:
        return box[0] >= 0 and box[1] >= 0 and box[2] <= self.width and box[3] <= self.height

    def free(self, box: tuple[float, ...]) -> bool:
        return self.inside(box) and not any(_overlap(box, other) for other in self.taken)


def _centre(box: tuple[float, ...]) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def _turn(a: tuple[float, float], b: tuple[float, float], c: tuple[float, float]) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _segments_cross(
    a: tuple[float, float], b: tuple[float, float], c: tuple[float, float], d: tuple[float, float]
) -> bool:
    """Whether segments ab and cd cross (touching at an end counts)."""
    d1, d2, d3, d4 = _turn(c, d, a), _turn(c, d, b), _turn(a, b, c), _turn(a, b, d)
    if ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0) and (
        (d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0
    ):
        return True

    def on(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> bool:
        return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(
            p[1], q[1]
        )

    return (
        (d1 == 0 and on(c, d, a))
        or (d2 == 0 and on(c, d, b))
        or (d3 == 0 and on(a, b, c))
        or (d4 == 0 and on(a, b, d))
    )


def _segment_hits_box(
    a: tuple[float, float], b: tuple[float, float], box: tuple[float, ...]
) -> bool:
    """Whether segment ab passes through (or ends in) ``box`` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    if any(x0 <= p[0] <= x1 and y0 <= p[1] <= y1 for p in (a, b)):
        return True
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return any(_segments_cross(a, b, corners[k], corners[(k + 1) % 4]) for k in range(4))


def _free_between(rooms: Sequence[_RankRoom], boxes: Sequence[tuple[float, ...]]) -> bool:
    """Whether a label's boxes (one per room, narrowest plot first, widest last) are free at
    every plot width in between too. The height is fixed, so a box and another one are apart
    at every width if they are apart up and down, or on the same side of each other at the
    narrowest and the widest plot (their horizontal distance changes linearly with the
    width, the label's offset in pixels does not)."""
    if not all(room.inside(box) for room, box in zip(rooms, boxes)):
        return False
    (narrow, wide), (a, b) = (rooms[0], rooms[-1]), (boxes[0], boxes[-1])
    g = _LABEL_GAP
    for p, q in zip(narrow.taken, wide.taken):
        if a[3] + g <= p[1] or p[3] + g <= a[1]:
            continue  # apart up and down, at any width
        if (a[2] + g <= p[0] and b[2] + g <= q[0]) or (p[2] + g <= a[0] and q[2] + g <= b[0]):
            continue  # on one side of it at both ends, so at every width between
        return False
    return all(room.free(box) for room, box in zip(rooms, boxes))


# Where a rank label may go, nearest first: a ring (1: beside the point, further: with a
# leader line) and a direction (right, up).
_RANK_SPOTS = tuple(
    (ring, ux, uy)
    for ring in (1, 2, 3, 4)
    for ux, uy in ((0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1))
)
