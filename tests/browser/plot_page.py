"""One explorer figure drawn alone by plotly.js (the plotly package's own bundle) in a blank
page, at a given width, and the boxes plotly laid its texts out in: for layout checks that
need no Jupyter server."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from importlib.resources import files
from typing import Any

PLOTLY_JS = files("plotly").joinpath("package_data", "plotly.min.js")

DRAW = """async ([figure, width]) => {
    const f = JSON.parse(figure);
    const gd = document.getElementById('gd');
    gd.style.width = width + 'px';
    await Plotly.react(gd, f.data, Object.assign({}, f.layout, {width, autosize: false}));
    return true;
}"""
# Every text plotly drew outside the traces, with its page box: the title, each annotation
# (whether an arrow leads from it, and the arrow's box), each 3-D scene annotation, the legend.
TEXT_BOXES = """() => {
    const gd = document.getElementById('gd');
    const box = (el) => { const r = el.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
    const out = [];
    gd.querySelectorAll('.gtitle').forEach((el) => out.push({kind: 'title',
        text: el.textContent, ...box(el)}));
    const fl = gd._fullLayout;
    gd.querySelectorAll('g.annotation').forEach((el) => {
        const text = el.querySelector('.annotation-text');
        if (!text) return;
        const index = Number(el.getAttribute('data-index'));
        const a = fl.annotations[index];
        // The point a data-anchored annotation labels, in page pixels.
        const at = a.xref === 'x' && a.yref === 'y' ? {
            x: gd.getBoundingClientRect().left + fl.xaxis._offset + fl.xaxis.l2p(a.x),
            y: gd.getBoundingClientRect().top + fl.yaxis._offset + fl.yaxis.l2p(a.y),
        } : null;
        const arrow = el.querySelector('path');
        const drawn = !!arrow && arrow.getBBox().width + arrow.getBBox().height > 0;
        out.push({kind: 'annotation', index, text: text.textContent, at, arrow: drawn,
                  line: drawn ? box(arrow) : null,
                  ...box(el.querySelector('.annotation-text-g') || text)});
    });
    // A 3-D scene's annotations (drawn over the WebGL scene once it has rendered).
    gd.querySelectorAll('g[class^="annotation-scene"]').forEach((el) => {
        const text = el.querySelector('.annotation-text');
        if (!text) return;
        const arrow = el.querySelector('path');
        out.push({kind: 'scene annotation', text: text.textContent, line: arrow ? box(arrow) : null,
                  ...box(el.querySelector('.annotation-text-g') || text)});
    });
    gd.querySelectorAll('.g-xtitle, .g-ytitle, .g-x2title, .g-y2title').forEach((el) => {
        if (el.textContent) out.push({kind: 'axis title', text: el.textContent, ...box(el)});
    });
    const legend = gd.querySelector('g.legend');
    if (legend) out.push({kind: 'legend', text: '', ...box(legend)});
    const page = gd.getBoundingClientRect();
    // Each x axis's plot area, in page pixels.
    const areas = Object.keys(fl).filter((k) => /^xaxis[0-9]*$/.test(k)).map((k) => ({
        axis: k, left: page.left + fl[k]._offset, right: page.left + fl[k]._offset + fl[k]._length,
    }));
    return {boxes: out, areas, figure: {left: page.left, top: page.top, right: page.right,
                                        bottom: page.bottom}};
}"""


@contextlib.contextmanager
def plot_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.set_content("<html><body style='margin:0'><div id='gd'></div></body></html>")
    page.add_script_tag(content=PLOTLY_JS.read_text(encoding="utf-8"))
    try:
        yield page
    finally:
        context.close()


def draw(page: Any, figure: Any, width: int) -> dict[str, Any]:
    """Draw ``figure`` (a plotly figure) ``width`` pixels wide; its text boxes."""
    page.evaluate(DRAW, [figure.to_json(), width])
    boxes: dict[str, Any] = page.evaluate(TEXT_BOXES)
    return boxes


def gap(box: dict[str, float], x: float, y: float) -> float:
    """Pixels from the point (x, y) to the nearest edge of ``box`` (0 inside it)."""
    dx = max(box["left"] - x, 0.0, x - box["right"])
    dy = max(box["top"] - y, 0.0, y - box["bottom"])
    return float((dx * dx + dy * dy) ** 0.5)


def overlaps(a: dict[str, float], b: dict[str, float], gap: float = 0.0) -> bool:
    return (
        a["left"] < b["right"] + gap
        and b["left"] < a["right"] + gap
        and a["top"] < b["bottom"] + gap
        and b["top"] < a["bottom"] + gap
    )
