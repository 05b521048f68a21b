"""Run All to every figure drawn, in a fresh kernel, for the explorer notebook and for a
notebook holding one plain plotly figure, in the same run, in JupyterLab 4 and in Notebook 7:
the ratio is reported (printed and written to artifacts/first-picture-browser-<front>.json),
never asserted (speed belongs to the benchmarks; benchmarks/bench_browser.py measures the same
with more rounds, and change to redraw). What is asserted: both notebooks draw, and the
explorer's four figures appear."""

from __future__ import annotations

import json
import urllib.request
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
        await new Promise(r => requestAnimationFrame(r));
    }
    return performance.now() - start;
}"""


FRONTS = {"lab": ("jupyterlab", "/lab/tree/"), "notebook7": ("notebook7", "/notebooks/")}


def _stop_kernels(server) -> None:
    """End every session of the server (and its kernel): the next round starts fresh."""
    auth = {"Authorization": f"token {server['token']}"}
    listing = urllib.request.Request(f"{server['base']}/api/sessions", headers=auth)
    for session in json.loads(urllib.request.urlopen(listing, timeout=30).read()):
        request = urllib.request.Request(
            f"{server['base']}/api/sessions/{session['id']}", method="DELETE", headers=auth
        )
        urllib.request.urlopen(request, timeout=60).read()


def _time(browser, server, path: str, name: str, want: int) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    try:
        reset = "&reset" if path.startswith("/lab") else ""
        page.goto(f"{server['base']}{path}{name}?token={server['token']}{reset}")
        page.wait_for_function(KERNEL_IDLE)
        ms = page.evaluate(RUN_ALL, want)
        assert ms is not None, f"{name} did not draw {want} figure(s)"
        page.wait_for_function(KERNEL_IDLE)
        return float(ms)
    finally:
        context.close()
        _stop_kernels(server)  # the next round starts a fresh kernel


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_run_all_to_every_figure_drawn_against_one_plain_plotly_figure(request, browser, front):
    fixture, path = FRONTS[front]
    server = request.getfixturevalue(fixture)
    root = server["root"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PLAIN)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(nb, root / "plain.ipynb")
    plain, explorer = [], []
    for _ in range(ROUNDS):  # interleaved: a busy spell hits both alike
        plain.append(_time(browser, server, path, "plain.ipynb", 1))
        explorer.append(_time(browser, server, path, "explorer.ipynb", 4))
    result = {
        "front": front,
        "plain_ms": plain,
        "explorer_ms": explorer,
        "ratio_of_medians": sorted(explorer)[len(explorer) // 2] / sorted(plain)[len(plain) // 2],
    }
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"first-picture-browser-{front}.json").write_text(json.dumps(result, indent=2))
    print(f"first picture in {front}:", result)
