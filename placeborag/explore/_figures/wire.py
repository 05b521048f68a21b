"""The figure JSON on the wire, as data: no widget, no anywidget.

A figure spec (dicts, lists, numpy arrays) becomes JSON with its numeric arrays as binary
buffers (:func:`wire`, :func:`buffered`); a revision of a figure is a :class:`Wire`, with the
print of each trace's top-level properties and of each layout key; :func:`patch` says what a
page holding one revision needs to draw the next, or that the next goes whole. Messages from
the page are read by :func:`read_message`, which refuses anything malformed with a reason.
The widget (:mod:`.widgets`) only sends what these return.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import importlib.resources
import json
import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "NO_PATCH",
    "Message",
    "Wire",
    "buffered",
    "patch",
    "plotly_bundle",
    "plotly_key",
    "prepare_bundle",
    "read_message",
    "wire",
]

FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 13}
MAX_POINTS_IN_MESSAGE = 2_000_000  # more pairs than any figure draws: refused as malformed


_BUNDLE: list[tuple[bytes, str]] = []
_BUNDLE_LOCK = threading.Lock()


def plotly_bundle() -> tuple[bytes, str]:
    """plotly.js as the plotly package ships it (``package_data/plotly.min.js``), gzipped (a
    third of its size; the page inflates it with ``DecompressionStream``), and its digest.
    Made once per kernel (a second caller waits for the first)."""
    with _BUNDLE_LOCK:
        if not _BUNDLE:
            files = importlib.resources.files("plotly")
            source = files.joinpath("package_data/plotly.min.js").read_bytes()
            digest = hashlib.sha256(source).hexdigest()[:16]
            _BUNDLE.append((gzip.compress(source, compresslevel=3, mtime=0), digest))
        return _BUNDLE[0]


def prepare_bundle() -> None:
    """Start making :func:`plotly_bundle` on a second thread, once per kernel: zlib lets go
    of the GIL, so the ~0.1 s of gzip runs beside the app's first build instead of in it."""
    if _BUNDLE:
        return
    # No thread can start here (RuntimeError): the bundle is made when first needed.
    with contextlib.suppress(RuntimeError):
        threading.Thread(target=plotly_bundle, name="placeborag-plotly-bundle", daemon=True).start()


@functools.cache
def _template() -> dict[str, Any]:
    """plotly's ``plotly_white`` template as the plotly package ships it (a JSON file): what
    ``go.Figure(layout={"template": "plotly_white"})`` would send, without validating it."""
    path = importlib.resources.files("plotly").joinpath("package_data/templates/plotly_white.json")
    template: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return template


def plotly_key() -> str:
    """The key of the page's promise of plotly.js (``js/slot.js``): it names the bundle's
    digest, so figures never draw with another plotly version's bundle."""
    return f"placeborag.plotly-bundle.{plotly_bundle()[1]}"


# -- the figure JSON on the wire ------------------------------------------------------------


def wire(value: Any) -> Any:
    """A figure spec (dicts, lists, numpy arrays and scalars) as the widget sends it: numeric
    arrays become ``{"dtype", "bdata", "shape"}`` with their bytes as a binary buffer
    (ipywidgets sends those out of band), everything else plain JSON values."""
    if isinstance(value, dict):
        return {str(k): wire(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire(v) for v in value]
    if isinstance(value, np.ndarray):
        return _wire_array(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _wire_array(a: np.ndarray) -> Any:
    kind, size = a.dtype.kind, a.dtype.itemsize
    if kind == "b":
        a = a.astype(np.uint8)
    elif kind == "f" and size != 4:
        a = a.astype(np.float32 if size < 4 else np.float64)
    elif kind in "iu" and size == 8:
        small = a.astype(np.int32)
        if not np.array_equal(small, a):
            return a.tolist()  # beyond int32: plotly.js has no 64-bit integer arrays
        a = small
    elif kind == "u" and size == 4:
        a = a.astype(np.float64)
    elif kind not in "iuf":
        return [wire(v) for v in a.tolist()]
    a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
    spec: dict[str, Any] = {
        "dtype": f"{a.dtype.kind}{a.dtype.itemsize}",
        "bdata": memoryview(a.reshape(-1)).cast("B"),  # type: ignore[arg-type]
    }
    if a.ndim > 1:
        spec["shape"] = ", ".join(str(n) for n in a.shape)
    return spec


PATCH_AT_MOST = 0.5  # of the whole figure's size: a larger patch goes as the whole figure
NO_PATCH: dict[str, Any] = {"buffers": []}


def buffered(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` with its arrays' bytes moved to its own ``buffers`` list, each array naming
    its index there (``{"dtype", "buffer", "shape"}``).

    ipywidgets sends every buffer with its path in the state, and nbclient, saving a
    notebook's widget state, keeps the buffers of earlier messages by path: a path deep in a
    figure (``figure.data.7.x.bdata``) outlives the trace it led to, and the page cannot
    restore a state with a path to nothing. A path ``figure.buffers.7`` always leads into a
    list, where a stale buffer is harmless."""
    buffers: list[memoryview] = []

    def move(v: Any) -> Any:
        if isinstance(v, dict):
            if isinstance(v.get("bdata"), memoryview) and "dtype" in v:
                buffers.append(v["bdata"])
                return {**{k: x for k, x in v.items() if k != "bdata"}, "buffer": len(buffers) - 1}
            return {k: move(x) for k, x in v.items()}
        if isinstance(v, list):
            return [move(x) for x in v]
        return v

    out: dict[str, Any] = {k: move(x) for k, x in value.items()}
    out["buffers"] = buffers
    return out


class Print:
    """A wire value as a patch compares it: its JSON (arrays as placeholders), its binary
    buffers, and its size in bytes. Two are equal when their JSON and the bytes of every
    buffer are: the buffers are compared (memcmp speed), not hashed, so an array that did
    not change costs one comparison with its earlier self and one that did (another
    length) none."""

    __slots__ = ("buffers", "size", "text")

    def __init__(self, value: Any) -> None:
        buffers: list[memoryview] = []

        def buffer(v: Any) -> int:
            if isinstance(v, memoryview):
                buffers.append(v)
                return len(buffers)
            raise TypeError(f"{type(v).__name__} is not a wire value")

        self.text = json.dumps(value, default=buffer, separators=(",", ":"))  # ASCII only
        self.buffers = buffers
        self.size = len(self.text) + sum(b.nbytes for b in buffers)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Print) or self.text != other.text:
            return False
        if len(self.buffers) != len(other.buffers):
            return False
        return all(same_bytes(a, b) for a, b in zip(self.buffers, other.buffers))

    __hash__ = None  # type: ignore[assignment]


def same_bytes(a: memoryview, b: memoryview) -> bool:
    if a.nbytes != b.nbytes:
        return False
    if not a.nbytes:
        return True
    return bool(np.array_equal(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)))


class Wire:
    """One revision of a figure as it goes on the wire, with the print (:class:`Print`) of
    each trace's top-level properties and of each top-level layout key (what a patch
    compares)."""

    def __init__(self, revision: int, data: list[Any], layout: dict[str, Any], config: Any) -> None:
        self.revision = revision
        self.data = data
        self.layout = layout
        self.config = config
        self.trace_prints = [{k: Print(v) for k, v in t.items()} for t in data]
        self.layout_prints = {k: layout_print(k, v) for k, v in layout.items()}
        self.config_print = None if config is None else Print(config)
        self.size = sum(p.size for t in self.trace_prints for p in t.values())
        self.size += sum(p.size for p in self.layout_prints.values())

    def layout_print(self, key: str) -> Print | None:
        return self.layout_prints.get(key)


def layout_print(key: str, value: Any) -> Print:
    if key == "template" and (value is wired_template()[0] or value == wired_template()[0]):
        return wired_template()[1]  # the same every time: printed once
    return Print(value)


@functools.cache
def wired_template() -> tuple[Any, Print]:
    value = wire(_template())
    return value, Print(value)


# -- messages from the page -----------------------------------------------------------------

_AXIS = re.compile(r"[xy]axis[0-9]{0,2}")


def _exact_int(value: Any) -> bool:
    return type(value) is int


def _point(value: Any) -> tuple[int, int] | None:
    """A ``[trace, point]`` pair of non-negative ints (not bools, floats or strings)."""
    if type(value) is not list or len(value) != 2:
        return None
    trace, point = value
    if not (_exact_int(trace) and _exact_int(point)) or trace < 0 or point < 0:
        return None
    return trace, point


def _ranges(value: Any) -> dict[str, tuple[float, float]] | None:
    if type(value) is not dict or len(value) > 16:
        return None
    out = {}
    for key, pair in value.items():
        if type(key) is not str or not _AXIS.fullmatch(key):
            return None
        if type(pair) is not list or len(pair) != 2:
            return None
        if not all(type(v) in (int, float) and math.isfinite(v) for v in pair):
            return None
        out[key] = (float(pair[0]), float(pair[1]))
    return out


# -- a redraw: the whole figure or a patch on the one the page holds ------------------------


def whole(now: Wire) -> dict[str, Any]:
    """``now`` as the widget's ``figure``: sent whole (its arrays not yet moved to buffers)."""
    figure: dict[str, Any] = {"revision": now.revision, "data": now.data, "layout": now.layout}
    if now.config is not None:
        figure["config"] = now.config
    return figure


def patch(base: Wire | None, now: Wire) -> dict[str, Any] | None:
    """What of ``now`` differs from ``base``, the figure the page holds whole: by trace
    position, the top-level properties of each trace that changed and those gone, the
    top-level layout keys likewise, naming both revisions. None when ``now`` must go whole:
    there is no ``base``, its config differs, or the patch would carry more than
    :data:`PATCH_AT_MOST` of ``now``'s size. ``base`` and the patch always make ``now``."""
    if base is None or base.config_print != now.config_print:
        return None
    traces: list[list[Any]] = []
    size = 0
    for i, props in enumerate(now.trace_prints):
        before = base.trace_prints[i] if i < len(base.trace_prints) else {}
        changed = [k for k, p in props.items() if before.get(k) != p]
        gone = [k for k in before if k not in props]
        if changed or gone:
            traces.append([i, {k: now.data[i][k] for k in changed}, gone])
            size += sum(props[k].size for k in changed)
    keys = [k for k, p in now.layout_prints.items() if base.layout_print(k) != p]
    size += sum(now.layout_prints[k].size for k in keys)
    if size > PATCH_AT_MOST * now.size:
        return None
    return {
        "base": base.revision,
        "revision": now.revision,
        "length": len(now.data),
        "traces": traces,
        "layout": {k: now.layout[k] for k in keys},
        "drop": [k for k in base.layout_prints if k not in now.layout_prints],
    }


# -- messages from the page -----------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """A well-formed message from a figure in the page, about the figure ``revision``:
    ``select`` (its points, ``[(trace, point), ...]``), ``click`` (one ``(trace, point)``),
    ``view`` (axis ranges by axis name) or ``resend`` (no payload: the page holds another
    whole figure than the patch it was sent)."""

    kind: str
    revision: int
    payload: Any = None


_PAYLOADS = {"select": "points", "click": "point", "view": "ranges"}


def read_message(content: Any) -> Message | str:
    """``content`` as a :class:`Message`, or the reason it is refused (a string): anything
    but exactly the fields of its kind, with a revision (an int from 1) and a payload of the
    right types. Whether its points are on the figure is the widget's to check."""
    if type(content) is not dict:
        return "not an object"
    kind, revision = content.get("kind"), content.get("revision")
    if kind == "resend" and set(content) == {"kind", "revision"}:
        if type(revision) is not int or revision < 1:
            return "no figure revision"
        return Message("resend", revision)
    if kind not in _PAYLOADS or set(content) != {"kind", "revision", _PAYLOADS[kind]}:
        return "unknown kind or fields"
    if type(revision) is not int or revision < 1:
        return "no figure revision"
    payload = content[_PAYLOADS[kind]]
    if kind == "view":
        ranges = _ranges(payload)
        if ranges is None:
            return "ranges are not [low, high] numbers by axis"
        return Message("view", revision, ranges)
    if kind == "click":
        point = _point(payload)
        if point is None:
            return NOT_A_POINT
        return Message("click", revision, point)
    if type(payload) is not list or len(payload) > MAX_POINTS_IN_MESSAGE:
        return "points is not a list"
    points = [_point(p) for p in payload]
    if any(p is None for p in points):
        return NOT_POINTS
    return Message("select", revision, points)


NOT_A_POINT = "not a [trace, point] pair of this figure"
NOT_POINTS = "a point is not a [trace, point] pair of this figure"
ROW_KEYS = ({"kind", "revision", "id"}, {"kind", "revision", "id", "occurrence"})


def read_row_click(content: Any) -> tuple[int, str, int] | None:
    """A table row click (``{"kind": "row", "revision", "id", "occurrence"?}``) as its
    revision, id and occurrence (0 when not given), or None when malformed."""
    ok = (
        type(content) is dict
        and set(content) in ROW_KEYS
        and content["kind"] == "row"
        and _exact_int(content["revision"])
        and type(content["id"]) is str
        and _exact_int(content.get("occurrence", 0))
        and 0 <= content.get("occurrence", 0) < 2**31
    )
    if not ok:
        return None
    return content["revision"], content["id"], content.get("occurrence", 0)


class Attrs:
    """Read-only attribute access to a spec dict (``figure.layout.title.text``), for code and
    tests that read a figure the way they read a plotly one."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self._spec = spec

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._spec.get(name)
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            return [Attrs(v) for v in value]
        return Attrs(value) if isinstance(value, Mapping) else value

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def __contains__(self, name: str) -> bool:
        return name in self._spec

    def to_plotly_json(self) -> dict[str, Any]:
        return dict(self._spec)
