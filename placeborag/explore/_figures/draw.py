"""Drawing a display's spec into a ``go.Figure``: a new one, or one drawn before, updated in
place with only what changed (in one ``batch_update``)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from placeborag.explore._deps import optional

_META = "placeborag"
_FONT_SIZE = 13
_FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": _FONT_SIZE}


def draw(figure: Any, traces: list[dict[str, Any]], layout: dict[str, Any]) -> Any:
    """A new ``go.Figure``, or ``figure`` updated in place to show ``traces`` and ``layout``.

    In place, only what differs from the previous ``draw`` into the same figure is sent:
    plotly validates every property it is given, and re-validating unchanged markers, hover
    templates and axes costs more than the new arrays do. The changes go in one
    ``batch_update``, so the front end redraws once.
    """
    go = optional("plotly.graph_objects")
    layout = {"font": _FONT, **layout}
    if figure is None:
        figure = go.Figure(
            data=traces, layout={"template": "plotly_white", "meta": _META, **layout}
        )
        remember_sent(figure, traces, layout)
        return figure
    if figure.layout.meta != _META:
        # Validating a template costs ~40 ms: apply it once per long-lived figure.
        figure.update_layout(template="plotly_white", meta=_META)
    sent_traces, sent_layout = sent_to(figure)
    # The traces on screen that new ones of the same type take over in place, in order: a
    # change of their number (another category to colour by) then deletes or adds only the
    # difference. Deleting every trace would also drop the WebGL scene, which the browser
    # builds again at the cost of several redraws.
    kept: list[int] = []
    if len(figure.data) == len(sent_traces):
        for i, t in enumerate(figure.data):
            if len(kept) < len(traces) and t.type == traces[len(kept)]["type"]:
                kept.append(i)
    keep = len(kept)
    changed = _changes(sent_layout, layout)
    if keep < len(figure.data):
        figure.data = [figure.data[i] for i in kept]
        sent_traces = [sent_traces[i] for i in kept]
    # The layout and the trace changes go in one batch, so the front end redraws once (a
    # second message is a second full redraw of every point in the browser).
    with figure.batch_update():
        for old, before, new in zip(figure.data, sent_traces, traces[:keep]):
            trace_changes = _changes(before, new)
            trace_changes.pop("type", None)
            if trace_changes:
                old.update({k: _sendable(v) for k, v in trace_changes.items()}, overwrite=True)
        if changed:
            figure.update_layout(changed, overwrite=True)
    if keep < len(traces):
        figure.add_traces(traces[keep:])
    remember_sent(figure, traces, layout)
    return figure


# What was last sent to each figure, kept here (not on the figure): the next draw sends only
# what differs. Entries go with their figures.
_SENT: dict[int, tuple[Sequence[dict[str, Any]], dict[str, Any]]] = {}


def remember_sent(figure: Any, traces: Sequence[dict[str, Any]], layout: dict[str, Any]) -> None:
    key = id(figure)
    if key not in _SENT:
        weakref.finalize(figure, _SENT.pop, key, None)
    _SENT[key] = (traces, layout)


def sent_to(figure: Any) -> tuple[Sequence[dict[str, Any]], dict[str, Any]]:
    """The traces and layout last drawn into ``figure`` (nothing for a new figure)."""
    return _SENT.get(id(figure), ((), {}))


def _sendable(value: Any) -> Any:
    """A value as plotly's validators would have stored it: arrays contiguous (the kernel
    sends an array as one binary buffer, and refuses a strided view such as a column of a
    matrix), int64 arrays as int32 (the widget sends 64-bit integers as lists), and nested
    containers likewise."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iu" and value.dtype.itemsize == 8:
            small = value.astype(np.int32)
            value = small if np.array_equal(small, value) else value
        return np.ascontiguousarray(value)
    if isinstance(value, dict):
        return {k: _sendable(v) for k, v in value.items()}
    return value


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``after`` whose values differ from ``before``; keys gone are set to None."""
    out = {k: v for k, v in after.items() if k not in before or not _equal(before[k], v)}
    out.update({k: None for k in before if k not in after})
    return out


def _equal(a: Any, b: Any) -> bool:
    """Deep equality over the plain values a figure spec holds (dicts, lists, arrays)."""
    if a is b:
        return True
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_equal(a[k], b[k]) for k in a)
        )
    if isinstance(a, (np.ndarray, list, tuple)) or isinstance(b, (np.ndarray, list, tuple)):
        if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)) or a is None or b is None:
            return False
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape or x.dtype.kind != y.dtype.kind:
            return False
        if x.dtype == object:
            xs: list[Any] = x.ravel().tolist()
            ys: list[Any] = y.ravel().tolist()
            try:
                return bool(xs == ys)  # C-level for the strings and numbers a figure mostly holds
            except ValueError:  # an array inside: compare element by element
                return all(_equal(i, j) for i, j in zip(xs, ys))
        return bool(np.array_equal(x, y))
    try:
        return bool(a == b) and type(a) is type(b)
    except (TypeError, ValueError):
        return False
