"""The explorer's figure widget: a small anywidget of our own that draws with ``Plotly.react``.

Nothing of plotly's widget or renderer code is used (no ``FigureWidget``, no
``plotly.io._renderers``, which pulls in nbformat and jsonschema): the kernel sends the figure
JSON the displays build (:meth:`FigureView.show`), numeric arrays as binary buffers, and the
page draws it with plotly.js's public ``Plotly.react``. plotly.js is the plotly package's own
bundled file (``plotly/package_data/plotly.min.js``), gzipped, shipped once per kernel in one
hidden :func:`bundle_loader` widget that every app shows; the page imports it once and hands it
to every figure through a promise on ``globalThis`` keyed by the bundle's SHA-256, so two plotly
versions in one page never mix. A notebook saved with its widget state restores the loader with
the figures, so they draw again without a kernel.

A redraw sends only what changed: the widget's ``figure`` is the last figure sent whole, its
``patch`` the top-level properties of each trace (by position) and the layout keys that now
differ from it, naming the revision of the figure it applies to and its own. The page applies
a patch only to the figure it names (otherwise it asks for the whole figure again, and draws
nothing meanwhile); together the two always make the figure on screen, so a saved notebook
shows the final figures. A change that would patch more than half of a figure sends it whole.

Events come back through the widget's own messages, each naming the figure revision it was
drawn on: a box or lasso selection (every trace's points at once), a click on a point, and the
view range after a zoom or pan. :meth:`FigureView._handle` refuses anything malformed (logged
once per widget, never a selection, never an exception) and ignores a message about a
revision that is no longer on screen.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.resources
import json
import logging
import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from placeborag.explore._deps import optional

__all__ = [
    "bundle_loader",
    "figure_view",
    "panel",
    "plotly_bundle",
    "prepare_bundle",
    "status_widget",
    "wire",
]

LOG = logging.getLogger("placeborag.explore")
_FONT = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 13}
_MAX_POINTS_IN_MESSAGE = 2_000_000  # more pairs than any figure draws: refused as malformed

# A promise per bundle digest on globalThis: whichever module (loader or figure) runs first
# makes it; the loader resolves it with plotly.js.
_SLOT = """
const KEY = Symbol.for(%s);
function slot() {
  let s = globalThis[KEY];
  if (!s) {
    let resolve, reject;
    const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
    s = globalThis[KEY] = { promise, resolve, reject, started: false };
  }
  return s;
}
"""
# plotly.min.js is a UMD bundle: given a CommonJS `module`, it exports Plotly through it, so
# the page needs no require.js and no global of ours.
_LOADER_ESM = """
// anywidget gives initialize() two seconds: plotly.js loads in the background instead, and
// every figure waits on the slot's promise.
function initialize({ model }) {
  const s = slot();
  const gzipped = model.get("bundle");
  if (s.started || !gzipped || !gzipped.byteLength) return;
  s.started = true;
  load(s, gzipped);
}
async function load(s, gzipped) {
  let url = null;
  try {
    const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip"));
    const source = await new Response(stream).text();
    const wrapped = "const module = { exports: {} }; const exports = module.exports;\\n"
      + source + "\\nexport default module.exports;";
    url = URL.createObjectURL(new Blob([wrapped], { type: "text/javascript" }));
    const mod = await import(/* webpackIgnore: true */ url);
    const Plotly = mod.default && mod.default.react ? mod.default : globalThis.Plotly;
    if (!Plotly || !Plotly.react) throw new Error("plotly.js did not export Plotly.react");
    s.resolve(Plotly);
  } catch (error) {
    s.started = false;
    s.reject(error);
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
}
export default { initialize, render() {} };
"""
# One figure: decode the arrays, Plotly.react, apply the kernel's selection, report events.
_FIGURE_ESM = """
const TYPES = { f4: Float32Array, f8: Float64Array, i1: Int8Array, u1: Uint8Array,
  i2: Int16Array, u2: Uint16Array, i4: Int32Array, u4: Uint32Array };
// An array's bytes are one of the message's binary buffers (`buffer`: its index in the
// figure's or the patch's `buffers`), or base64 or bytes in place (`bdata`).
function typed(spec, buffers) {
  const T = TYPES[spec.dtype];
  let bytes;
  if (typeof spec.bdata === "string") {
    const raw = atob(spec.bdata);
    bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  } else {
    const b = "buffer" in spec ? buffers[spec.buffer] : spec.bdata;
    bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();
  }
  const flat = new T(bytes.buffer, 0, bytes.byteLength / T.BYTES_PER_ELEMENT);
  const shape = spec.shape ? String(spec.shape).split(",").map(Number) : [];
  if (shape.length !== 2) return flat;
  const rows = [];
  for (let r = 0; r < shape[0]; r++) rows.push(flat.subarray(r * shape[1], (r + 1) * shape[1]));
  return rows;
}
function decode(value, buffers) {
  if (Array.isArray(value)) return value.map((v) => decode(v, buffers));
  if (value && typeof value === "object" && !ArrayBuffer.isView(value)) {
    if (typeof value.dtype === "string" && TYPES[value.dtype]
        && ("bdata" in value || "buffer" in value)) {
      return typed(value, buffers);
    }
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = decode(v, buffers);
    return out;
  }
  return value;
}
// A trace's objects copied (Plotly writes into them), its arrays shared; a layout copied whole.
function own(value) {
  if (!value || typeof value !== "object" || Array.isArray(value) || ArrayBuffer.isView(value)) {
    return value;
  }
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = own(v);
  return out;
}
function copy(value) {
  if (Array.isArray(value)) return value.map(copy);
  if (!value || typeof value !== "object" || ArrayBuffer.isView(value)) return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = copy(v);
  return out;
}
const NOT_SELECTABLE = new Set(["scatter3d", "heatmap", "funnel"]);
function pairs(event) {
  return ((event && event.points) || [])
    .filter((p) => Number.isInteger(p.curveNumber) && Number.isInteger(p.pointNumber))
    .map((p) => [p.curveNumber, p.pointNumber]);
}
function ranges(gd) {
  const out = {};
  for (const [key, axis] of Object.entries(gd.layout || {})) {
    if (!/^[xy]axis[0-9]*$/.test(key) || !axis || !Array.isArray(axis.range)) continue;
    const r = axis.range.map(Number);
    if (r.length === 2 && r.every(Number.isFinite)) out[key] = r;
  }
  return out;
}
async function render({ model, el }) {
  const s = slot();
  const late = setTimeout(() => console.error(
    "placeborag: plotly.js has not loaded after 30 s (no loader widget in the page?)"
  ), 30000);
  const Plotly = await s.promise;
  clearTimeout(late);
  const gd = document.createElement("div");
  gd.className = "placeborag-plot";
  el.appendChild(gd);
  let drawn = null;  // the revision on screen
  let width = 0, pending = false;  // the width last fitted to; a resize asked for this frame
  let queue = Promise.resolve();
  const on = (name, handler) => { gd.removeAllListeners(name); gd.on(name, handler); };
  const bind = () => {
    on("plotly_selected", (e) => model.send({ kind: "select", revision: drawn, points: pairs(e) }));
    on("plotly_deselect", () => model.send({ kind: "select", revision: drawn, points: [] }));
    on("plotly_click", (e) => {
      const p = pairs(e)[0];
      if (p) model.send({ kind: "click", revision: drawn, point: p });
    });
    on("plotly_relayout", (e) => {
      if (!e || !Object.keys(e).some((k) => /axis[0-9]*[.](range|autorange)/.test(k))) return;
      model.send({ kind: "view", revision: drawn, ranges: ranges(gd) });
    });
  };
  const select = () => {
    const chosen = model.get("selected") || {};
    if (drawn === null || chosen.revision !== drawn || !gd.data) return;
    const indexes = [], values = [];
    for (const [trace, points] of chosen.points || []) {
      const t = gd.data[trace];
      if (!t || NOT_SELECTABLE.has(t.type)) continue;
      indexes.push(trace);
      values.push(points === null ? null : points);
    }
    if (indexes.length) Plotly.restyle(gd, { selectedpoints: values }, indexes);
    if (chosen.clear && (gd.layout.selections || []).length) {
      Plotly.relayout(gd, { selections: [] });
    }
  };
  // The figure the kernel sent whole (its arrays decoded once), and the patch on it last
  // decoded: a redraw that changes a few traces sends only those (a patch names the revision
  // of the whole figure it applies to, and is never applied to another one).
  let base = null, patched = null, asked = null;
  const compose = () => {
    const figure = model.get("figure") || {};
    if (!Array.isArray(figure.data)) return null;
    if (!base || base.revision !== figure.revision) {
      const buffers = figure.buffers || [];
      base = { revision: figure.revision, data: decode(figure.data, buffers),
        layout: decode(figure.layout || {}, buffers), config: figure.config || {} };
      patched = null;
    }
    const patch = model.get("patch") || {};
    if (patch.revision === undefined || patch.revision === null) {
      return { revision: base.revision, data: base.data, layout: base.layout };
    }
    if (patch.base !== base.revision) {
      // A patch on a figure this page does not hold: ask for the whole figure, once.
      if (asked !== patch.revision) {
        asked = patch.revision;
        model.send({ kind: "resend", revision: patch.revision });
      }
      return null;
    }
    if (!patched || patched.revision !== patch.revision) {
      // A changed trace: its changed properties over the base's trace, those gone removed.
      const buffers = patch.buffers || [];
      patched = { revision: patch.revision, traces: new Map(),
        layout: decode(patch.layout || {}, buffers) };
      for (const [i, changed, gone] of patch.traces || []) {
        const trace = Object.assign({}, base.data[i] || {}, decode(changed, buffers));
        for (const key of gone || []) delete trace[key];
        patched.traces.set(i, trace);
      }
    }
    const data = [];
    for (let i = 0; i < patch.length; i++) {
      data.push(patched.traces.has(i) ? patched.traces.get(i) : base.data[i]);
    }
    const layout = Object.assign({}, base.layout, patched.layout);
    for (const key of patch.drop || []) delete layout[key];
    return { revision: patch.revision, data, layout };
  };
  const draw = () => {
    queue = queue.then(async () => {
      const next = compose();
      if (next === null || next.revision === drawn) return;
      // A plot plotly.js first draws into a box of no width (not yet in the page, or in a
      // hidden tab) is drawn at its default 700 px, and at a fixed width from then on: the
      // first drawing waits until the box has its width (the size observer below says when).
      if (drawn === null && gd.clientWidth === 0) return;
      const config = Object.assign({
        responsive: true, displaylogo: false,
        // WebGL at the screen's own pixel ratio (plotly's default draws twice the page's
        // pixels each way: four times the work a standard screen shows).
        plotGlPixelRatio: Math.min(2, Math.max(1, globalThis.devicePixelRatio || 1)),
      }, base.config);
      // Plotly keeps what it is given and writes into it (autoranges, a selection): it gets
      // copies of the objects, and the decoded arrays themselves (unchanged traces keep them).
      await Plotly.react(gd, next.data.map(own), copy(next.layout), config);
      drawn = next.revision;
      gd.dataset.revision = String(drawn);
      bind();
      select();
      await fit();
    }).catch((error) => console.error("placeborag: drawing the figure failed", error));
  };
  model.on("change:figure", draw);
  model.on("change:patch", draw);
  model.on("change:selected", () => { queue = queue.then(select); });
  draw();
  // The figure takes its container's width whenever the container changes size (a side
  // panel, a notebook resized, a tab shown), not only when the window does; and after each
  // draw (a redraw keeps the plot's width, and a size change during it was skipped). Once
  // per frame at most, outside the observer's callback, never on a hidden plot (plotly
  // refuses to resize one). The observer also starts a first drawing put off for a width.
  function fit() {
    const now = el.getBoundingClientRect().width;
    if (drawn === null || now < 1) return Promise.resolve();
    const full = gd._fullLayout ? gd._fullLayout.width : 0;
    if (Math.abs(now - width) <= 1 && Math.abs(full - gd.getBoundingClientRect().width) <= 1) {
      return Promise.resolve();
    }
    width = now;
    return Promise.resolve(Plotly.Plots.resize(gd)).catch(() => {});
  }
  const resized = new ResizeObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      if (drawn === null) draw();  // a first drawing put off for a width, or not yet sent
      else queue = queue.then(fit);
    });
  });
  resized.observe(el);
  return () => {
    resized.disconnect();
    model.off("change:figure", draw);
    model.off("change:patch", draw);
    Plotly.purge(gd);
  };
}
export default { render };
"""
# An HTML panel (the pre/post tables) whose row clicks come back as messages.
_PANEL_ESM = """
function render({ model, el }) {
  const show = () => { el.innerHTML = model.get("value"); };
  el.addEventListener("click", (event) => {
    const row = event.target && event.target.closest && event.target.closest("tr[data-id]");
    if (row && el.contains(row)) {
      const occurrence = Number(row.dataset.occurrence || "0");
      model.send({ kind: "row", revision: model.get("revision"), id: row.dataset.id, occurrence });
    }
  });
  model.on("change:value", show);
  show();
  return () => model.off("change:value", show);
}
export default { render };
"""

# A busy note: shown only once work has lasted half a second, with the app's views dimmed;
# then the step the kernel is at and the seconds elapsed, so slow work shows it is moving.
_STATUS_ESM = """
function render({ model, el }) {
  el.classList.add("placeborag-status");
  let timer = null, ticker = null, since = 0;
  const mark = (on) => {
    const app = el.closest(".placeborag-app");
    if (app) app.classList.toggle("placeborag-busy", on);
  };
  const write = () => {
    const text = model.get("busy"), step = model.get("step");
    const seconds = Math.floor((performance.now() - since) / 1000);
    el.textContent = "";
    const spin = document.createElement("span");
    spin.className = "placeborag-spinner";
    const elapsed = seconds >= 1 ? " (" + seconds + " s)" : "";
    el.append(spin, " " + text + (step ? ": " + step : "") + elapsed);
    el.dataset.busy = "1";
  };
  const stop = () => {
    clearTimeout(timer); clearInterval(ticker); timer = ticker = null;
    el.textContent = ""; delete el.dataset.busy; mark(false);
  };
  const show = () => {
    if (!model.get("busy")) { stop(); return; }
    if (timer !== null || ticker !== null) { if (ticker !== null) write(); return; }
    since = performance.now();
    timer = setTimeout(() => {
      timer = null;
      write();
      mark(true);
      ticker = setInterval(write, 1000);
    }, 500);
  };
  model.on("change:busy", show);
  model.on("change:step", show);
  show();
  return () => { stop(); model.off("change:busy", show); model.off("change:step", show); };
}
export default { render };
"""

_LOADER: list[Any] = []  # the kernel's loader widget, once made


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
    try:
        threading.Thread(target=plotly_bundle, name="placeborag-plotly-bundle", daemon=True).start()
    except RuntimeError:  # no thread can start here: it is made when first needed
        pass


@functools.cache
def _template() -> dict[str, Any]:
    """plotly's ``plotly_white`` template as the plotly package ships it (a JSON file): what
    ``go.Figure(layout={"template": "plotly_white"})`` would send, without validating it."""
    path = importlib.resources.files("plotly").joinpath("package_data/templates/plotly_white.json")
    template: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return template


def _slot(digest: str) -> str:
    return _SLOT % json.dumps(f"placeborag.plotly-bundle.{digest}")


def bundle_loader() -> Any:
    """The kernel's one loader widget (hidden): it carries plotly.js for every figure that
    :func:`figure_view` makes. Every app puts it in its layout, so a front end that shows
    an app (or restores a saved notebook) creates its model. A closed one is replaced."""
    if _LOADER and _LOADER[0].comm is not None:
        return _LOADER[0]
    anywidget = optional("anywidget")
    traitlets = optional("traitlets")
    source, digest = plotly_bundle()

    class PlotlyBundle(anywidget.AnyWidget):  # type: ignore[misc,name-defined]
        _esm = _slot(digest) + _LOADER_ESM
        bundle = traitlets.Bytes(b"").tag(sync=True)

    loader = PlotlyBundle(bundle=source)
    loader.layout.display = "none"
    _LOADER[:] = [loader]
    return loader


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


_PATCH_AT_MOST = 0.5  # of the whole figure's size: a larger patch goes as the whole figure
_NO_PATCH: dict[str, Any] = {"buffers": []}


def _buffered(value: dict[str, Any]) -> dict[str, Any]:
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


class _Print:
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
        if not isinstance(other, _Print) or self.text != other.text:
            return False
        if len(self.buffers) != len(other.buffers):
            return False
        return all(_same_bytes(a, b) for a, b in zip(self.buffers, other.buffers))

    __hash__ = None  # type: ignore[assignment]


def _same_bytes(a: memoryview, b: memoryview) -> bool:
    if a.nbytes != b.nbytes:
        return False
    if not a.nbytes:
        return True
    return bool(np.array_equal(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)))


class _Wire:
    """One revision of a figure as it goes on the wire, with the print (:class:`_Print`) of
    each trace's top-level properties and of each top-level layout key (what a patch
    compares)."""

    def __init__(self, revision: int, data: list[Any], layout: dict[str, Any], config: Any) -> None:
        self.revision = revision
        self.data = data
        self.layout = layout
        self.config = config
        self.trace_prints = [{k: _Print(v) for k, v in t.items()} for t in data]
        self.layout_prints = {k: _layout_print(k, v) for k, v in layout.items()}
        self.config_print = None if config is None else _Print(config)
        self.size = sum(p.size for t in self.trace_prints for p in t.values())
        self.size += sum(p.size for p in self.layout_prints.values())

    def layout_print(self, key: str) -> _Print | None:
        return self.layout_prints.get(key)


def _layout_print(key: str, value: Any) -> _Print:
    if key == "template" and (value is _wired_template()[0] or value == _wired_template()[0]):
        return _wired_template()[1]  # the same every time: printed once
    return _Print(value)


@functools.cache
def _wired_template() -> tuple[Any, _Print]:
    value = wire(_template())
    return value, _Print(value)


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


class _Attrs:
    """Read-only attribute access to a spec dict (``figure.layout.title.text``), for code and
    tests that read a figure the way they read a plotly one."""

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self._spec = spec

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        value = self._spec.get(name)
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            return [_Attrs(v) for v in value]
        return _Attrs(value) if isinstance(value, Mapping) else value

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def __contains__(self, name: str) -> bool:
        return name in self._spec

    def to_plotly_json(self) -> dict[str, Any]:
        return dict(self._spec)


@functools.cache
def _figure_class() -> Any:
    anywidget = optional("anywidget")
    traitlets = optional("traitlets")
    _, digest = plotly_bundle()

    class FigureView(anywidget.AnyWidget):  # type: ignore[misc,name-defined]
        """One figure of the explorer: the kernel sends it (:meth:`show`: whole, or a patch of
        what changed), the page draws it with ``Plotly.react`` and reports selections, clicks
        and view ranges."""

        _esm = _slot(digest) + _FIGURE_ESM
        figure = traitlets.Dict({}).tag(sync=True)
        patch = traitlets.Dict(_NO_PATCH).tag(sync=True)
        selected = traitlets.Dict({}).tag(sync=True)

        def __init__(self) -> None:
            super().__init__()
            self.revision = 0
            self.traces: list[dict[str, Any]] = []
            self.spec_layout: dict[str, Any] = {}
            self.view: dict[str, tuple[float, float]] = {}  # axis ranges on screen
            self.refused = 0  # malformed messages from the page
            self.stale = 0  # messages about a revision no longer on screen
            self.resent = 0  # whole figures sent again because the page held another one
            self._base: _Wire | None = None  # the figure last sent whole
            self._current: _Wire | None = None  # the figure last shown
            self.on_select: Callable[[list[tuple[int, int]]], None] | None = None
            self.on_click: Callable[[tuple[int, int]], None] | None = None
            self._shows_selection = False
            self.on_msg(self._handle)

        # -- what the kernel sends --

        def show(
            self,
            traces: Sequence[dict[str, Any]],
            layout: dict[str, Any],
            config: dict[str, Any] | None = None,
        ) -> None:
            """Draw ``traces`` and ``layout`` (a display's spec) as the next revision.

            Only what differs from the whole figure the page holds is sent
            (:meth:`_send_figure`)."""
            self.revision += 1
            self.traces = list(traces)
            self.spec_layout = {"font": _FONT, **layout}
            self._shows_selection = False
            self._current = _Wire(
                self.revision,
                wire(self.traces),
                # The template wired once (and printed once: _layout_print knows it).
                {"template": _wired_template()[0], **wire(self.spec_layout)},
                wire(config) if config else None,
            )
            self._send_figure(self._current)

        def _send_figure(self, now: _Wire) -> None:
            """``patch``: what of ``now`` differs from ``figure``, the last figure sent whole
            (by trace position, the top-level properties of each trace that changed and
            those gone; the top-level layout keys likewise), naming both revisions; or
            ``now`` sent whole (and no patch) when there is no figure yet, its config differs,
            or the patch would carry more than half of it. ``figure`` and ``patch`` together
            are always the figure on screen, so a notebook saved with this widget's state
            draws it without a kernel."""
            base = self._base
            if base is not None and base.config_print == now.config_print:
                traces, size = [], 0
                for i, props in enumerate(now.trace_prints):
                    before = base.trace_prints[i] if i < len(base.trace_prints) else {}
                    changed = [k for k, p in props.items() if before.get(k) != p]
                    gone = [k for k in before if k not in props]
                    if changed or gone:
                        traces.append([i, {k: now.data[i][k] for k in changed}, gone])
                        size += sum(props[k].size for k in changed)
                keys = [k for k, p in now.layout_prints.items() if base.layout_print(k) != p]
                size += sum(now.layout_prints[k].size for k in keys)
                if size <= _PATCH_AT_MOST * now.size:
                    self.patch = _buffered(
                        {
                            "base": base.revision,
                            "revision": now.revision,
                            "length": len(now.data),
                            "traces": traces,
                            "layout": {k: now.layout[k] for k in keys},
                            "drop": [k for k in base.layout_prints if k not in now.layout_prints],
                        }
                    )
                    return
            figure: dict[str, Any] = {
                "revision": now.revision,
                "data": now.data,
                "layout": now.layout,
            }
            if now.config is not None:
                figure["config"] = now.config
            with self.hold_sync():
                self.figure = _buffered(figure)
                self.patch = dict(_NO_PATCH)
            self._base = now

        def _resend(self) -> None:
            """The page holds another whole figure than the patch's: send it whole again."""
            if self._current is None:
                return
            self.resent += 1
            same = (
                "revision" not in self.patch
                and self.figure.get("revision") == self._current.revision
            )
            self._base = None
            self._send_figure(self._current)
            if same:  # the figure sent last: traitlets sees no change, so nothing went
                self.send_state(["figure", "patch"])

        def show_selection(self, points: Mapping[int, Sequence[int] | None]) -> None:
            """Highlight ``points`` (trace index -> point indexes; None: no highlight on that
            trace) on the revision on screen; all None also removes a box or lasso drawn."""
            chosen = any(v is not None for v in points.values())
            if not chosen and not self._shows_selection:
                return  # nothing highlighted, nothing to clear (a redraw starts clean)
            self._shows_selection = chosen
            self.selected = {
                "revision": self.revision,
                "points": [[t, None if v is None else list(v)] for t, v in points.items()],
                "clear": not chosen,
            }

        # -- what a test or a script reads --

        @property
        def data(self) -> tuple[_Attrs, ...]:
            return tuple(_Attrs(t) for t in self.traces)

        @property
        def figure_layout(self) -> _Attrs:
            """The layout last shown (``layout`` is the widget's own CSS layout)."""
            return _Attrs(self.spec_layout)

        def to_plotly_json(self) -> dict[str, Any]:
            """The figure last shown, as its spec (numpy arrays inside), template aside."""
            return {"data": list(self.traces), "layout": dict(self.spec_layout)}

        # -- what the page sends --

        def _refuse(self, content: Any, why: str) -> None:
            self.refused += 1
            if self.refused == 1:
                text = json.dumps(content, default=repr)[:200]
                LOG.warning(
                    "placeborag explorer: ignored a malformed message from the page (%s): %s; "
                    "further ones are ignored silently",
                    why,
                    text,
                )

        def _handle(self, _widget: Any, content: Any, _buffers: Any) -> None:
            try:
                self._dispatch(content)
            except Exception:  # a message must never break the kernel's comm handling
                LOG.exception("placeborag explorer: handling a message from the page failed")

        def _dispatch(self, content: Any) -> None:
            if type(content) is not dict:
                return self._refuse(content, "not an object")
            kind, revision = content.get("kind"), content.get("revision")
            if kind == "resend" and set(content) == {"kind", "revision"}:
                if type(revision) is not int or revision < 1:
                    return self._refuse(content, "no figure revision")
                if revision == self.revision:
                    self._resend()
                else:  # about a patch since replaced: the page has the newer one coming
                    self.stale += 1
                return None
            expected = {"select": "points", "click": "point", "view": "ranges"}
            if kind not in expected or set(content) != {"kind", "revision", expected[kind]}:
                return self._refuse(content, "unknown kind or fields")
            if type(revision) is not int or revision < 1:
                return self._refuse(content, "no figure revision")
            payload = content[expected[kind]]
            if kind == "view":
                ranges = _ranges(payload)
                if ranges is None:
                    return self._refuse(content, "ranges are not [low, high] numbers by axis")
                if revision == self.revision:
                    self.view = ranges
                else:
                    self.stale += 1
                return None
            if kind == "click":
                point = _point(payload)
                if point is None or not self._on_screen(point):
                    return self._refuse(content, "not a [trace, point] pair of this figure")
                if revision != self.revision:
                    self.stale += 1
                elif self.on_click is not None:
                    self.on_click(point)
                return None
            if type(payload) is not list or len(payload) > _MAX_POINTS_IN_MESSAGE:
                return self._refuse(content, "points is not a list")
            points = [_point(p) for p in payload]
            if any(p is None or not self._on_screen(p) for p in points):
                return self._refuse(content, "a point is not a [trace, point] pair of this figure")
            if revision != self.revision:
                self.stale += 1
            elif self.on_select is not None:
                self.on_select([p for p in points if p is not None])
            return None

        def _on_screen(self, point: tuple[int, int]) -> bool:
            trace, index = point
            if trace >= len(self.traces):
                return False
            x = self.traces[trace].get("x")
            return x is not None and index < len(x)

    return FigureView


def figure_view() -> Any:
    """A new, empty figure widget (:class:`FigureView`)."""
    return _figure_class()()


@functools.cache
def _panel_class() -> Any:
    anywidget = optional("anywidget")
    traitlets = optional("traitlets")

    class HtmlPanel(anywidget.AnyWidget):  # type: ignore[misc,name-defined]
        """HTML (the app's tables) whose row clicks (``tr[data-id]``) come back as the row's
        id and ``data-occurrence`` (which record of an id stored more than once)."""

        _esm = _PANEL_ESM
        value = traitlets.Unicode("").tag(sync=True)
        revision = traitlets.Int(0).tag(sync=True)

        def __init__(self, on_row: Callable[[str, int], None] | None = None) -> None:
            super().__init__()
            self.on_row = on_row
            self.refused = 0
            self.observe(self._next, names="value")
            self.on_msg(self._handle)

        def _next(self, _change: Any) -> None:
            self.revision += 1

        def _handle(self, _widget: Any, content: Any, _buffers: Any) -> None:
            ok = (
                type(content) is dict
                and set(content) in ({"kind", "revision", "id"}, _ROW_KEYS)
                and content["kind"] == "row"
                and _exact_int(content["revision"])
                and type(content["id"]) is str
                and _exact_int(content.get("occurrence", 0))
                and 0 <= content.get("occurrence", 0) < 2**31
            )
            if not ok:
                self.refused += 1
                if self.refused == 1:
                    LOG.warning("placeborag explorer: ignored a malformed row click")
                return
            if content["revision"] == self.revision and self.on_row is not None:
                try:
                    self.on_row(content["id"], content.get("occurrence", 0))
                except Exception:
                    LOG.exception("placeborag explorer: handling a row click failed")

    return HtmlPanel


@functools.cache
def _status_class() -> Any:
    anywidget = optional("anywidget")
    traitlets = optional("traitlets")

    class BusyStatus(anywidget.AnyWidget):  # type: ignore[misc,name-defined]
        """What the kernel is busy with (empty: idle) and the step it is at; the page shows
        them after 0.5 s, with the seconds elapsed."""

        _esm = _STATUS_ESM
        busy = traitlets.Unicode("").tag(sync=True)
        step = traitlets.Unicode("").tag(sync=True)

    return BusyStatus


def status_widget() -> Any:
    """The app's busy indicator."""
    return _status_class()()


_ROW_KEYS = {"kind", "revision", "id", "occurrence"}


def panel(on_row: Callable[[str, int], None] | None = None) -> Any:
    """An HTML panel widget whose table rows answer clicks with ``on_row(id, occurrence)``."""
    return _panel_class()(on_row)
