"""Box and lasso selections from the front end, delivered whole.

plotly's FigureWidget reports a selection through one synced trait that hover and unhover
events share: ipywidgets coalesces a trait's pending updates, so a hover that follows the
selection (a drag that ends near a marker) overwrites it before Python sees it, and each trace
then reports its own points to its own callback. :class:`SelectionBridge` avoids both: a tiny
anywidget whose front end listens to the plotly graphs of one app (found by the app's CSS
class) and sends every ``plotly_selected`` as one custom message with all traces' points.
Custom messages are queued, never coalesced, so every selection arrives, from the first drawing
on, whatever the mouse does next.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from placeborag.explore._deps import optional

__all__ = ["bridge"]

# Finds the app's figures by class, binds once per graph div (plotly may replace the div on a
# full redraw, so it looks again every half second), and sends [curveNumber, pointNumber]
# pairs. A deselect (double click) sends an empty list.
_ESM = """
function bind(model, el) {
  const app = model.get("app_class");
  const bound = new WeakSet();
  const attach = () => {
    for (const name of ["projection", "ranking"]) {
      const host = document.querySelector(`.${app} .placeborag-figure-${name} .js-plotly-plot`);
      if (!host || bound.has(host) || typeof host.on !== "function") continue;
      bound.add(host);
      host.on("plotly_selected", (event) => {
        const points = event && event.points
          ? event.points.map((p) => [p.curveNumber, p.pointNumber])
          : [];
        model.send({ figure: name, points });
      });
      host.on("plotly_deselect", () => model.send({ figure: name, points: [] }));
      host.on("plotly_click", (event) => {
        const p = event && event.points && event.points[0];
        if (p) model.send({ figure: name, click: [p.curveNumber, p.pointNumber] });
      });
    }
    // A click on a table row (each carries data-id) toggles that document in the selection.
    const root = document.querySelector(`.${app}`);
    if (root && !bound.has(root)) {
      bound.add(root);
      root.addEventListener("click", (event) => {
        const row = event.target && event.target.closest && event.target.closest("tr[data-id]");
        if (row && root.contains(row)) model.send({ figure: "table", id: row.dataset.id });
      });
    }
  };
  attach();
  const timer = setInterval(attach, 500);
  return () => clearInterval(timer);
}
export default { render({ model, el }) { return bind(model, el); } };
"""


def bridge(
    app_class: str,
    on_select: Callable[[str, list[tuple[int, int]]], None],
    on_click: Callable[[str, tuple[int, int]], None] | None = None,
    on_row: Callable[[str], None] | None = None,
) -> Any:
    """A bridge widget for the app whose container has CSS class ``app_class``.

    ``on_select(figure, points)`` is called with the figure's name and its (trace index, point
    index) pairs for every selection made in the front end; ``on_click(figure, point)`` for a
    click on a point, ``on_row(id)`` for a click on a table row. Returns None where anywidget
    is not installed (the app then relies on its select box).
    """
    try:
        anywidget = optional("anywidget")
    except ImportError:
        return None
    traitlets = optional("traitlets")

    class SelectionBridge(anywidget.AnyWidget):  # type: ignore[misc,name-defined]
        _esm = _ESM
        app_class = traitlets.Unicode("").tag(sync=True)

    widget = SelectionBridge(app_class=app_class)
    widget.layout.display = "none"

    def handle(_widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("figure") == "table":
            if on_row is not None and isinstance(content.get("id"), str):
                on_row(content["id"])
            return
        if content.get("figure") not in ("projection", "ranking"):
            return
        click = content.get("click")
        if click is not None:
            if on_click is not None and isinstance(click, list) and len(click) == 2:
                on_click(content["figure"], (int(click[0]), int(click[1])))
            return
        points = [
            (int(p[0]), int(p[1]))
            for p in content.get("points") or []
            if isinstance(p, (list, tuple)) and len(p) == 2
        ]
        on_select(content["figure"], points)

    widget.on_msg(handle)
    return widget
