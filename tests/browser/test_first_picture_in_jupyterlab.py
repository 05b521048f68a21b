"""Run All to every figure drawn, in a fresh kernel, for the explorer notebook and for a
notebook holding one plain plotly figure, in the same run: the ratio is reported (printed and
written to artifacts/first-picture-browser.json), never asserted (speed belongs to the
benchmarks). What is asserted: both notebooks draw, and the explorer's four figures appear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api")
nbformat = pytest.importorskip("nbformat")

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "artifacts"
TIMEOUT = 300_000
ROUNDS = 2
KERNEL_IDLE = """() => {
    const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.status === 'idle';
}"""
PLAIN = "import plotly.graph_objects as go\n\ngo.Figure(go.Scatter(x=[1, 2, 3], y=[3, 1, 2]))"
# Resolves with the milliseconds from Run All to `want` plots having drawn their traces.
RUN_ALL = """async (want) => {
    const start = performance.now();
    window.jupyterapp.commands.execute('notebook:run-all-cells');
    const drawn = () => {
        const plots = Array.from(document.querySelectorAll('.jp-OutputArea .js-plotly-plot'));
        return plots.length >= want && plots.every(gd => (gd.data || []).length > 0
            && gd.querySelector('g.trace, canvas') !== null);
    };
    while (!drawn()) {
        if (performance.now() - start > 240000) return null;
        await new Promise(r => setTimeout(r, 20));
    }
    return performance.now() - start;
}"""


def _time(browser, server, name: str, want: int) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    try:
        page.goto(f"{server['base']}/lab/tree/{name}?token={server['token']}&reset")
        page.wait_for_function(KERNEL_IDLE)
        ms = page.evaluate(RUN_ALL, want)
        assert ms is not None, f"{name} did not draw {want} figure(s)"
        page.evaluate(
            "() => window.jupyterapp.commands.execute('kernelmenu:shutdown')"
        )  # the next round starts a fresh kernel
        return float(ms)
    finally:
        context.close()


def test_run_all_to_every_figure_drawn_against_one_plain_plotly_figure(jupyterlab, browser):
    root = jupyterlab["root"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PLAIN)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(nb, root / "plain.ipynb")
    plain, explorer = [], []
    for _ in range(ROUNDS):  # interleaved: a busy spell hits both alike
        plain.append(_time(browser, jupyterlab, "plain.ipynb", 1))
        explorer.append(_time(browser, jupyterlab, "explorer.ipynb", 4))
    result = {
        "plain_ms": plain,
        "explorer_ms": explorer,
        "ratio_of_medians": sorted(explorer)[len(explorer) // 2] / sorted(plain)[len(plain) // 2],
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "first-picture-browser.json").write_text(json.dumps(result, indent=2))
    print("first picture in JupyterLab:", result)
