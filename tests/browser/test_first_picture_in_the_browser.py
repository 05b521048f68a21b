"""Run All to every figure drawn, in a fresh kernel, for the explorer notebook and for a
notebook holding one plain plotly figure, in the same run, in JupyterLab 4 and in Notebook 7:
the ratio is reported (printed and written to artifacts/first-picture-browser-<front>.json),
never asserted (speed belongs to the benchmarks; benchmarks/bench_browser.py measures the same
with more rounds, and change to redraw). What is asserted: both notebooks draw, and the
explorer's four figures appear."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("playwright.sync_api")

from jupyter_driver import (
    KERNEL_IDLE,
    RUN_ALL,
    stop_kernels,
    write_plain_notebook,
)

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parent.parent.parent / "artifacts"
TIMEOUT = 300_000
ROUNDS = 2
RUN_ALL_LIMIT_MS = 240_000


FRONTS = {"lab": ("jupyterlab", "/lab/tree/"), "notebook7": ("notebook7", "/notebooks/")}


def _time(browser, server, path: str, name: str, want: int) -> float:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT)
    try:
        reset = "&reset" if path.startswith("/lab") else ""
        page.goto(f"{server['base']}{path}{name}?token={server['token']}{reset}")
        page.wait_for_function(KERNEL_IDLE)
        ms = page.evaluate(RUN_ALL, [want, RUN_ALL_LIMIT_MS])
        assert ms is not None, f"{name} did not draw {want} figure(s)"
        page.wait_for_function(KERNEL_IDLE)
        return float(ms)
    finally:
        context.close()
        stop_kernels(server)  # the next round starts a fresh kernel


@pytest.mark.parametrize("front", sorted(FRONTS))
def test_run_all_to_every_figure_drawn_against_one_plain_plotly_figure(request, browser, front):
    fixture, path = FRONTS[front]
    server = request.getfixturevalue(fixture)
    plain_name = write_plain_notebook(server)
    plain, explorer = [], []
    for _ in range(ROUNDS):  # interleaved: a busy spell hits both alike
        plain.append(_time(browser, server, path, plain_name, 1))
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
