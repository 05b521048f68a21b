"""The explorer's figure widget: plotly's FigureWidget, with plotly.js shipped once per kernel.

plotly 6's ``FigureWidget`` is an anywidget whose front-end module (``_esm``, about 5 MB of
plotly.js) is part of every figure's widget state: a notebook saved with its widget state
stores it once per figure (four times for one explorer). :func:`figure_widget` makes a
:class:`FigureWidget` subclass whose ``_esm`` is a stub of a few hundred bytes; the bundle
travels once, in one hidden :func:`bundle_loader` widget per kernel that every app shows. The
loader imports the bundle in the page and hands the module to the stubs through a promise on
``globalThis`` under a key made of the bundle's SHA-256, so two plotly versions in one page
never mix. A notebook reopened with its saved widget state restores the loader's model with
the others, so its figures draw again without a kernel.

The stub also leaves out the messages the explorer does not use. After every redraw plotly's
view sends the trace and layout defaults it computed (``_js2py_traceDeltas``, a deep merge
and diff of every trace, 100,000-point arrays included) and a message per hover, click and
selection (``_js2py_pointsCallback``); the kernel handles each of them before the next
request. The app keeps what it draws itself (``placeborag.explore._displays.sent_to``) and
gets selections and clicks through its own bridge (``_selection.py``), so the stub's view
sends none of them. Zoom and pan still reach the kernel (``_js2py_relayout``), so a later
redraw starts from the range on screen, as with plotly's own widget. And it draws WebGL at the
screen's pixel ratio, where plotly's default draws twice the page's pixels in each direction:
four times the work for a standard screen, which a software renderer pays on every redraw.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from typing import Any

from placeborag.explore._deps import optional

__all__ = ["bundle_loader", "figure_widget", "plotly_bundle"]

# A promise per bundle digest on globalThis: whichever module (loader or stub) runs first
# makes it; the loader resolves it with the imported bundle.
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
_LOADER_ESM = """
async function initialize({ model }) {
  const s = slot();
  const gzipped = model.get("bundle");
  if (s.started || !gzipped || !gzipped.byteLength) return;
  s.started = true;
  let url = null;
  try {
    const stream = new Blob([gzipped]).stream().pipeThrough(new DecompressionStream("gzip"));
    const source = await new Response(stream).text();
    url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    s.resolve(await import(/* webpackIgnore: true */ url));
  } catch (error) {
    s.started = false;
    s.reject(error);
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
}
export default { initialize, render() {} };
"""
# plotly's own widget module, with a view that reports nothing back but zoom and pan. The
# patch goes on this page's copy of the bundle, which only these stubs use.
_STUB_ESM = """
export default async () => {
  const s = slot();
  const late = setTimeout(() => console.error(
    "placeborag: the plotly bundle has not loaded after 30 s (no loader widget in the page?)"
  ), 30000);
  const mod = await s.promise;
  clearTimeout(late);
  const view = mod.FigureView.prototype;
  if (!view.placeboragLean) {
    view.placeboragLean = true;
    view._sendTraceDeltas = function () {};
    view._sendLayoutDelta = function () {};
    view._send_points_callback_message = function () {};
    // plotly draws WebGL at twice the page's pixels by default (plotGlPixelRatio 2), four
    // times the pixels a standard screen shows: draw at the screen's own ratio instead.
    const render = view.perform_render;
    view.perform_render = function () {
      const config = this.model.get("_config");
      if (config && config.plotGlPixelRatio === undefined) {
        config.plotGlPixelRatio = Math.min(2, Math.max(1, globalThis.devicePixelRatio || 1));
      }
      return render.call(this);
    };
  }
  return mod.default();
};
"""

_LOADER: list[Any] = []  # the kernel's loader widget, once made


@functools.cache
def plotly_bundle() -> tuple[bytes, str]:
    """plotly's widget bundle (the JavaScript every FigureWidget carries), gzipped (a third
    of its size; the page inflates it with ``DecompressionStream``), and its digest."""
    basewidget = optional("plotly.basewidget")
    source = str(basewidget.BaseFigureWidget._esm).encode("utf-8")
    digest = hashlib.sha256(source).hexdigest()[:16]
    return gzip.compress(source, compresslevel=6, mtime=0), digest


def _slot(digest: str) -> str:
    return _SLOT % json.dumps(f"placeborag.plotly-bundle.{digest}")


def bundle_loader() -> Any:
    """The kernel's one loader widget (hidden): it carries plotly.js for every figure that
    :func:`figure_widget` makes. Every app puts it in its layout, so a front end that shows
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


@functools.cache
def _figure_class() -> Any:
    go = optional("plotly.graph_objects")
    _, digest = plotly_bundle()
    return type(
        "FigureWidget",
        (go.FigureWidget,),
        {
            "__module__": __name__,
            "__doc__": "plotly's FigureWidget, its front end loaded from the kernel's bundle "
            "loader, reporting only zoom and pan back.",
            "_esm": _slot(digest) + _STUB_ESM,
        },
    )


def figure_widget(figure: Any) -> Any:
    """A FigureWidget of ``figure`` (a ``go.Figure``) whose front end loads plotly.js from
    :func:`bundle_loader` instead of carrying it in its own state."""
    return _figure_class()(figure)
